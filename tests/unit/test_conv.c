/* Unit tests for the converters HAProxy 2.6 adds to those of test_sample.c
 * (src/rules/conv.c, conv_hash.c, conv_text.c, vars.c, sample.c and the
 * capture converters of src/http/): every converter with hostile input
 * (empty, huge, malformed, boundary values) and every argument error.
 *
 * The xxHash vectors (xxh32, xxh64, xxh3 with seeds 0, 1, 42 and -1) are
 * the outputs of the reference implementation, libxxhash 0.8.1
 * (XXH32(), XXH64(), XXH3_64bits_withSeed()), computed once for inputs of
 * every length class of the specification (0, 1-3, 4-8, 9-16, 17-128,
 * 129-240 bytes, and long inputs of one, two and several 1024-byte
 * blocks); the empty-input values are also those the xxHash repository
 * publishes (XXH32 0x02CC5D05, XXH64 0xEF46DB3751D8E999, XXH3
 * 0x2D06800538D394C2). CRC-32C: the check value of RFC 3720 / the CRC
 * catalogue ("123456789" -> 0xE3069283). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>
#include <fcntl.h>
#include <unistd.h>

#include <sluice/cfg.h>
#include <sluice/common.h>
#include <sluice/global.h>
#include <sluice/lb.h>
#include <sluice/log.h>
#include <sluice/pool.h>
#include <sluice/proxy.h>
#include <sluice/sample.h>
#include <sluice/server.h>
#include <sluice/vars.h>

#include "cfg_capture.h"
#include "rules_stream.h"

static const char cfg_text[] =
	"defaults\n mode http\n timeout client 1s\n timeout server 1s\n timeout connect 1s\n"
	"frontend fe\n default_backend be\n declare capture request len 4\n"
	" capture request header Host len 32\n declare capture response len 3\n"
	"backend be\n server s1 127.0.0.1:8080\n server s2 127.0.0.1:8081 maxconn 10\n"
	"backend other\n server o1 127.0.0.1:8082\n server o2 127.0.0.1:8083 disabled\n"
	" server o3 127.0.0.1:8084 backup\n"
	"backend nonelive\n server n1 127.0.0.1:8085 disabled\n server n2 127.0.0.1:8086 backup\n";

static void setup_stream(void)
{
	struct proxy *fe, *be;

	EXPECT_ERRORS(parse(cfg_text), 0);
	EXPECT_ERRORS(postparse(), 0);
	fe = proxy_find("fe", PR_CAP_FE);
	be = proxy_find("be", PR_CAP_BE);
	assert_non_null(fe);
	assert_non_null(be);
	strm_new(fe);
	strm.be = be;
	strm.ss.target = be->servers;
	msg_load("GET / HTTP/1.1\r\nHost: www.example.com\r\n"
		 "Accept-Language: fr-CH, fr;q=0.9, en;q=0.8, de;q=0.7, *;q=0.5\r\n\r\n");
}

/* "type:value" of <expr> on the test stream, "<none>", or "<error: ...>". */
static const char *ev(const char *expr)
{
	static char out[1024];
	char val[900], *err = NULL;
	struct smp_expr e;
	struct sample smp = { 0 };

	if (smp_expr_parse(expr, &e, NULL, &err) == -1) {
		snprintf(out, sizeof(out), "<error: %s>", err);
		free(err);
		return out;
	}
	if (!smp_expr_eval(&e, &strm, &smp))
		snprintf(out, sizeof(out), "<none>");
	else {
		smp_to_text(&smp, val, sizeof(val));
		snprintf(out, sizeof(out), "%s:%s", smp_type_name(smp.type), val);
	}
	smp_expr_free(&e);
	return out;
}

#define EV(expr, want) assert_string_equal(ev(expr), want)

/* Sets proc.<name> to <len> bytes of <c> (inputs longer than an argument). */
static void set_long(const char *name, char c, size_t len)
{
	static char buf[VAR_MAX_LEN];
	struct var_ref r = { VAR_PROC, (char *)name };
	struct sample smp = { 0 };

	assert_true(len <= sizeof(buf));
	memset(buf, c, len);
	smp.type = SMP_T_STR;
	smp.u.str.p = buf;
	smp.u.str.len = len;
	assert_int_equal(var_set(&r, &strm, &smp), 1);
}

/* ---- be2dec, be2hex, cut_crlf, even, odd, htonl, crc32c ---- */

static void test_binary(void **state)
{
	setup_stream();
	/* bin() does not exist in sluice yet: build bytes with htonl */
	EV("int(16909060),htonl,be2hex", "str:01020304");
	EV("int(16909060),htonl,be2dec(:,2)", "str:258:772");
	EV("int(16909060),htonl,be2dec(:,3)", "str:66051:4");
	EV("int(16909060),htonl,be2dec(:,3,1)", "str:66051");
	EV("int(16909060),htonl,be2dec(,1)", "str:1234");
	EV("int(16909060),htonl,be2dec(--,1)", "str:1--2--3--4");
	EV("int(-1),htonl,be2dec(.,4)", "str:4294967295");
	EV("str(ABCDEFGHI),be2dec(-,8)", "str:4702394921427289928-73");
	EV("str(ABCDEFGHI),be2dec(-,8,1)", "str:4702394921427289928");
	EV("str(\xff\xff\xff\xff\xff\xff\xff\xff),be2dec(:,8)", "str:18446744073709551615");
	EV("str(),be2dec(:,2)", "str:");
	EV("str(a),be2dec(:,2,1)", "str:");
	EV("str(abcdefg),be2hex", "str:61626364656667");
	EV("str(abcdefg),be2hex(:,2)", "str:6162:6364:6566:67");
	EV("str(abcdefg),be2hex(--,2,1)", "str:6162--6364--6566");
	EV("str(abcdefgh),be2hex(,3,1)", "str:616263646566");
	EV("str(abcdefg),be2hex(,3)", "str:61626364656667");
	EV("str(),be2hex(:,2)", "str:");
	EV("str(\xfe),be2hex", "str:FE");
	/* argument errors */
	EV("str(a),be2dec(:)", "<error: missing argument 2 of 'be2dec'>");
	EV("str(a),be2dec", "<error: missing argument 1 of 'be2dec'>");
	EV("str(a),be2dec(:,0)", "<error: converter 'be2dec': chunk_size must be between 1 and 8 (got 0)>");
	EV("str(a),be2dec(:,9)", "<error: converter 'be2dec': chunk_size must be between 1 and 8 (got 9)>");
	EV("str(a),be2dec(:,-1)", "<error: converter 'be2dec': chunk_size must be between 1 and 8 (got -1)>");
	EV("str(a),be2dec(:,x)", "<error: argument 2 of 'be2dec' must be an integer (got 'x')>");
	EV("str(a),be2dec(:,2,1,4)", "<error: too many arguments for 'be2dec' (at most 3)>");
	EV("str(a),be2hex(:)", "<error: converter 'be2hex': a separator or truncate needs a positive chunk_size>");
	EV("str(a),be2hex(,,1)", "<error: converter 'be2hex': a separator or truncate needs a positive chunk_size>");
	EV("str(a),be2hex(:,0)", "<error: converter 'be2hex': chunk_size must be positive (got 0)>");
	EV("str(a),be2hex(:,-3)", "<error: converter 'be2hex': chunk_size must be positive (got -3)>");
	/* huge input: the output stops at a chunk when the scratch area is full */
	set_long("big", '\xff', VAR_MAX_LEN);
	assert_string_equal(ev("var(proc.big),be2hex,length"), "int:16384");
	assert_string_equal(ev("var(proc.big),be2dec(:,1),length"), "int:16383");

	EV("str(ab\r\ncd),cut_crlf", "str:ab");
	EV("str(ab\ncd),cut_crlf", "str:ab");
	EV("str(ab\rcd),cut_crlf", "str:ab");
	EV("str(abcd),cut_crlf", "str:abcd");
	EV("str(\r\n),cut_crlf", "str:");
	EV("str(),cut_crlf", "str:");
	EV("int(12),cut_crlf", "str:12");
	EV("str(a),cut_crlf(1)", "<error: too many arguments for 'cut_crlf' (at most 0)>");

	EV("int(4),even", "bool:1");
	EV("int(4),odd", "bool:0");
	EV("int(-3),even", "bool:0");
	EV("int(-3),odd", "bool:1");
	EV("int(0),even", "bool:1");
	EV("int(9223372036854775807),odd", "bool:1");
	EV("int(-9223372036854775807),sub(1),even", "bool:1");
	EV("str(7),odd", "bool:1");
	EV("str(x),odd", "<none>");
	EV("str(a),even(1)", "<error: too many arguments for 'even' (at most 0)>");

	EV("int(1),htonl,hex", "str:00000001");
	EV("int(-1),htonl,hex", "str:FFFFFFFF");
	EV("int(4294967296),htonl,hex", "str:00000000");
	EV("int(4294967297),htonl,hex", "str:00000001");
	EV("int(3232235777),htonl,length", "int:4");
	EV("str(x),htonl", "<none>");

	EV("str(123456789),crc32c", "int:3808858755");
	EV("str(),crc32c", "int:0");
	EV("str(a),crc32c", "int:3251651376");
	{
		char want[64];

		snprintf(want, sizeof(want), "int:%u", lb_hash(LB_H_CRC32C, 1, "123456789", 9));
		EV("str(123456789),crc32c(1)", want);
		EV("str(123456789),crc32c(0)", "int:3808858755");
		assert_string_not_equal(want, "int:3808858755");
	}
	EV("str(a),crc32c(x)", "<error: argument 1 of 'crc32c' must be an integer (got 'x')>");
	EV("str(a),crc32c(1,2)", "<error: too many arguments for 'crc32c' (at most 1)>");
}

/* ---- xxh32, xxh64, xxh3 ---- */

static const struct xxh_vec {
	const char *c;     /* repeated <n> times */
	int         n;
	int64_t     seed;
	uint32_t    h32;
	int64_t     h64, h3;
} xxh_vecs[] = {
	{ "", 1, 0, 46947589u, -1205034819632174695ll, 3244421341483603138ll },
	{ "", 1, 1, 187479954u, -3049013831022690741ll, 5604079703740606211ll },
	{ "", 1, 42, 3586027192u, -7444071767201028348ll, -5752995443491633966ll },
	{ "", 1, -1, 2422332061u, 2994696410035606400ll, 5478965906984379733ll },
	{ "a", 1, 0, 1426945110u, -3292477735350538661ll, -1817709641818812897ll },
	{ "a", 1, 1, 4111757423u, -2395144786285869370ll, -3245177124059371744ll },
	{ "a", 1, 42, 1273873115u, -8582455328737087284ll, 5495374321939846900ll },
	{ "a", 1, -1, 3443684653u, 6972758980737027682ll, 4875116479388997462ll },
	{ "abc", 1, 0, 852579327u, 4952883123889572249ll, 8696274497037089104ll },
	{ "abc", 1, 1, 2856167679u, -4708009277469325048ll, 7729416884403528232ll },
	{ "abc", 1, 42, 21474302u, 1423657621850124518ll, -2863288879874843453ll },
	{ "abc", 1, -1, 2989167648u, 2895935887265243510ll, 2962310483463817673ll },
	{ "abcd", 1, 0, 2741253893u, -2449070131962342708ll, 7248448420886124688ll },
	{ "abcd", 1, 1, 3194890655u, -730500759694830253ll, -5393446898942107916ll },
	{ "abcd", 1, 42, 3816643269u, -6810745876291105281ll, -2946035511519048614ll },
	{ "abcd", 1, -1, 571019001u, -4561471803187910444ll, 135505550087872495ll },
	{ "abcdefgh", 1, 0, 196331195u, 4238821247360054455ll, 8017998777839871107ll },
	{ "abcdefgh", 1, 1, 3058100195u, -9005771714715375007ll, 8998154142266437692ll },
	{ "abcdefgh", 1, 42, 3986419958u, 2470326616177429180ll, 6582224532482612904ll },
	{ "abcdefgh", 1, -1, 3546357714u, 8065403623447144435ll, -2849043144665742700ll },
	{ "abcdefghi", 1, 0, 3493598205u, 2878261200250560019ll, -2243385267987312480ll },
	{ "abcdefghi", 1, 1, 527664023u, 6238036807928448109ll, -3404709505701223492ll },
	{ "abcdefghi", 1, 42, 322048474u, -7093207067522615973ll, 244883425465088885ll },
	{ "abcdefghi", 1, -1, 2338728119u, -5900781130557778938ll, -7706469730233490947ll },
	{ "0123456789abcdef", 1, 0, 3267648361u, 6655072042875317515ll, 7224786756799439149ll },
	{ "0123456789abcdef", 1, 1, 4078952911u, -7693964793056413875ll, -8587095857415886257ll },
	{ "0123456789abcdef", 1, 42, 1503399606u, 152989496093262263ll, -1203929568114046419ll },
	{ "0123456789abcdef", 1, -1, 2140546121u, 7200805049277785941ll, -397400821713137342ll },
	{ "x", 17, 0, 1212095327u, 2456097153902355950ll, -8532247153275348463ll },
	{ "x", 17, 1, 2101351125u, 4160914309270192866ll, -8411059827610630516ll },
	{ "x", 17, 42, 54170032u, 2844963946992767226ll, 702177764122914785ll },
	{ "x", 17, -1, 668027660u, -793414855336105088ll, 6101363469048400096ll },
	{ "x", 100, 0, 1272122682u, -7858536869340659564ll, -3960488162797498814ll },
	{ "x", 100, 1, 2465418536u, -6738814337875264082ll, 2912115326072662740ll },
	{ "x", 100, 42, 3614481485u, 365730103971579591ll, -7676092079647985864ll },
	{ "x", 100, -1, 330866731u, -4695515240412514839ll, -3791038055288044159ll },
	{ "y", 200, 0, 3720217408u, -2343229783554813697ll, 8702553569279157118ll },
	{ "y", 200, 1, 772707056u, 1224151902592488230ll, 3468941504097813860ll },
	{ "y", 200, 42, 4114946160u, -635192237519084948ll, 1223404181817932394ll },
	{ "y", 200, -1, 1443240773u, -5871135972811721646ll, -7991762958988328398ll },
	{ "z", 241, 0, 2212465960u, 4258654259219689547ll, -3911682361975861194ll },
	{ "z", 241, 1, 1659736693u, 7393944134093629191ll, 4705747580478891512ll },
	{ "z", 241, 42, 980007600u, 5117269106641447711ll, 6593300403274546011ll },
	{ "z", 241, -1, 3304219856u, 5490304778107233028ll, 3430748367331784601ll },
	{ "w", 1000, 0, 459793604u, -4354083518046683224ll, 5386462272193053895ll },
	{ "w", 1000, 1, 2106319426u, -3354950874763413286ll, -2193894300246900954ll },
	{ "w", 1000, 42, 2409922923u, -3948129246531557052ll, -1260585003770584402ll },
	{ "w", 1000, -1, 1893734980u, -193627444230810273ll, 3192041758181351213ll },
	{ "v", 2048, 0, 2426890036u, 5638215532845244437ll, 797252379053857701ll },
	{ "v", 2048, 1, 1044153085u, 8099885019762671299ll, -1617409289047753073ll },
	{ "v", 2048, 42, 2063179504u, -4927683566132224636ll, 1783851700699652857ll },
	{ "v", 2048, -1, 3414593293u, -7158403877584570030ll, -7396870569375720152ll },
	{ "u", 4000, 0, 1492572567u, 6989188287729567560ll, 3787365934186957783ll },
	{ "u", 4000, 1, 814497509u, 5612121769972063053ll, -4781535935063257405ll },
	{ "u", 4000, 42, 2277015316u, 3701718067795295685ll, -2743944068190274747ll },
	{ "u", 4000, -1, 3160346224u, 6287349280171046103ll, 4095901945881274064ll },
};

static void test_xxhash(void **state)
{
	setup_stream();
	for (size_t i = 0; i < ARRAY_SIZE(xxh_vecs); i++) {
		const struct xxh_vec *v = &xxh_vecs[i];
		char expr[128], want[64], base[64];

		if (v->n == 1) {
			snprintf(base, sizeof(base), "str(%s)", v->c);
		} else {
			set_long("in", v->c[0], (size_t)v->n);
			snprintf(base, sizeof(base), "var(proc.in)");
		}
		snprintf(expr, sizeof(expr), "%s,xxh32(%lld)", base, (long long)v->seed);
		snprintf(want, sizeof(want), "int:%u", v->h32);
		EV(expr, want);
		snprintf(expr, sizeof(expr), "%s,xxh64(%lld)", base, (long long)v->seed);
		snprintf(want, sizeof(want), "int:%lld", (long long)v->h64);
		EV(expr, want);
		snprintf(expr, sizeof(expr), "%s,xxh3(%lld)", base, (long long)v->seed);
		snprintf(want, sizeof(want), "int:%lld", (long long)v->h3);
		EV(expr, want);
	}
	/* no seed is seed 0 */
	EV("str(),xxh32", "int:46947589");
	EV("str(),xxh64", "int:-1205034819632174695");
	EV("str(),xxh3", "int:3244421341483603138");
	/* an integer input hashes its text */
	assert_string_equal(ev("int(42),xxh3"), ev("str(42),xxh3"));
	EV("str(a),xxh32(x)", "<error: argument 1 of 'xxh32' must be an integer (got 'x')>");
	EV("str(a),xxh64(1,2)", "<error: too many arguments for 'xxh64' (at most 1)>");
	EV("str(a),xxh3(99999999999999999999)", "<error: argument 1 of 'xxh3' must be an integer (got '99999999999999999999')>");
}

/* ---- json_query ---- */

static void test_json_query(void **state)
{
	static const char doc[] =
		"{ \"integer\": 4, \"float\": 1.5, \"neg\": -12, \"big\": 9007199254740991,"
		" \"huge\": 9007199254740992, \"exp\": 2e3, \"string\": \"a\\\"b\\u00e9\\ud83d\\ude00\","
		" \"t\": true, \"f\": false, \"n\": null, \"obj\": { \"k\": [ 10, { \"x\": \"y\" }, [] ] },"
		" \"arr\": [ \"zero\", \"one\" ], \"dup\": 1, \"dup\": 2, \"a.b\": 3 }";
	char expr[1200];

	setup_stream();
	set_long("j", ' ', 1);
	{
		struct var_ref r = { VAR_PROC, "j" };
		struct sample smp = { .type = SMP_T_STR, .u.str = { doc, sizeof(doc) - 1 } };

		assert_int_equal(var_set(&r, &strm, &smp), 1);
	}
#define JQ(path, want) do { \
		snprintf(expr, sizeof(expr), "var(proc.j),json_query(%s)", path); \
		EV(expr, want); \
	} while (0)
	JQ("$.integer", "str:4");
	JQ("'$.integer',int", "int:4");
	JQ("$.integer,int", "int:4");
	JQ("$.float", "str:1.5");
	JQ("$.float,int", "int:1");
	JQ("$.neg,int", "int:-12");
	JQ("$.big,int", "int:9007199254740991");
	JQ("$.huge,int", "<none>");
	JQ("$.huge", "str:9.0072e+15");
	JQ("$.exp", "str:2000");
	JQ("$.string", "str:a\"b\xc3\xa9\xf0\x9f\x98\x80");
	JQ("$.t", "bool:1");
	JQ("$.f", "bool:0");
	JQ("$.n", "<none>");
	JQ("$.obj", "<none>");
	JQ("$.arr", "<none>");
	JQ("$.obj.k[0],int", "int:10");
	JQ("$.obj.k[1].x", "str:y");
	JQ("$.obj.k[2]", "<none>");
	JQ("$.obj.k[3]", "<none>");
	JQ("$.arr[1]", "str:one");
	JQ("$.arr[2]", "<none>");
	JQ("$.dup,int", "int:1");
	JQ("$.missing", "<none>");
	JQ("$.integer.sub", "<none>");
	JQ("$.arr.x", "<none>");
	JQ("$.obj[0]", "<none>");
	JQ("$", "<none>");
	/* scalars at the root, and malformed documents */
	EV("str(42),json_query($,int)", "int:42");
	EV("str(' 42 '),json_query($)", "str:42");
	EV("str('\"s\"'),json_query($)", "str:s");
	EV("str(),json_query($.a)", "<none>");
	EV("str({),json_query($.a)", "<none>");
	EV("str('{\"a\"'),json_query($.a)", "<none>");
	EV("str('{\"a\":'),json_query($.a)", "<none>");
	EV("str('{\"b\":[1,2,{\"c\":}],\"a\":1}'),json_query($.a)", "<none>");
	EV("str('{\"b\":[1,{\"c\":\"\\u0041\"}],\"a\":1}'),json_query($.a,int)", "int:1");
	EV("str('{\"b\":[1,{\"c\":\"\\u0041\"}],\"a\":1}'),json_query($.b[1].c)", "str:A");
	EV("str('{\"b\":01,\"a\":1}'),json_query($.a)", "<none>");
	EV("str('{\"b\":tru,\"a\":1}'),json_query($.a)", "<none>");
	EV("str('{\"b\":\"\\x\",\"a\":1}'),json_query($.a)", "<none>");
	EV("str('{\"a\":\"\\ud800\"}'),json_query($.a)", "<none>");
	EV("str('{\"a\":\"\\udc00x\"}'),json_query($.a)", "<none>");
	EV("str('{\"a\":\"abc'),json_query($.a)", "<none>");
	EV("str('{\"a\":-}'),json_query($.a)", "<none>");
	EV("str('{\"a\":1.}'),json_query($.a)", "<none>");
	EV("str('{\"a\":tx}'),json_query($.a)", "<none>");
	/* a value found before a later syntax error is returned, as a
	 * streaming scanner finds it */
	EV("str('{\"a\":1,}'),json_query($.a,int)", "int:1");
	/* deep nesting: skipped up to 64 levels, refused beyond, no recursion */
	{
		static char deep[VAR_MAX_LEN];
		struct var_ref r = { VAR_PROC, "deep" };
		struct sample smp = { .type = SMP_T_STR };
		size_t n = 0;

		for (int d = 0; d < 2; d++) {
			int levels = d ? 65 : 63;

			n = 0;
			n += (size_t)sprintf(deep + n, "{\"skip\":");
			for (int i = 0; i < levels; i++)
				deep[n++] = '[';
			for (int i = 0; i < levels; i++)
				deep[n++] = ']';
			n += (size_t)sprintf(deep + n, ",\"a\":7}");
			smp.u.str.p = deep;
			smp.u.str.len = n;
			assert_int_equal(var_set(&r, &strm, &smp), 1);
			EV("var(proc.deep),json_query($.a,int)", d ? "<none>" : "int:7");
		}
		/* a huge unterminated nesting ends at the depth limit */
		memset(deep, '[', sizeof(deep));
		smp.u.str.len = sizeof(deep);
		var_set(&r, &strm, &smp);
		EV("var(proc.deep),json_query($[1])", "<none>");
		/* a huge string value fits (escapes decoded) */
		deep[0] = '"';
		memset(deep + 1, 'q', sizeof(deep) - 2);
		deep[sizeof(deep) - 1] = '"';
		var_set(&r, &strm, &smp);
		EV("var(proc.deep),json_query($),length", "int:16382");
	}
	/* argument errors */
	EV("str(x),json_query", "<error: missing argument 1 of 'json_query'>");
	EV("str(x),json_query()", "<error: converter 'json_query': the JSON path must start with '$' (got '')>");
	EV("str(x),json_query(a.b)", "<error: converter 'json_query': the JSON path must start with '$' (got 'a.b')>");
	EV("str(x),json_query($.a,str)", "<error: converter 'json_query': unknown output type 'str' (expects 'int')>");
	EV("str(x),json_query($.)", "<error: converter 'json_query': invalid JSON path '$.' (expects '$' followed by '.<key>' and '[<index>]' steps)>");
	EV("str(x),json_query($a)", "<error: converter 'json_query': invalid JSON path '$a' (expects '$' followed by '.<key>' and '[<index>]' steps)>");
	EV("str(x),json_query($[x])", "<error: converter 'json_query': invalid JSON path '$[x]' (expects '$' followed by '.<key>' and '[<index>]' steps)>");
	EV("str(x),json_query($[-1])", "<error: converter 'json_query': invalid JSON path '$[-1]' (expects '$' followed by '.<key>' and '[<index>]' steps)>");
	EV("str(x),json_query($[1)", "<error: converter 'json_query': invalid JSON path '$[1' (expects '$' followed by '.<key>' and '[<index>]' steps)>");
	EV("str(x),json_query($[1234567890])", "<error: converter 'json_query': invalid JSON path '$[1234567890]' (expects '$' followed by '.<key>' and '[<index>]' steps)>");
	EV("str(x),json_query($.a.b.c.d.e.f.g.h.i.j.k.l.m.n.o.p.q.r.s.t.u.v.w.x.y.z.a.b.c.d.e.f.g)",
	   "<error: converter 'json_query': JSON path '$.a.b.c.d.e.f.g.h.i.j.k.l.m.n.o.p.q.r.s.t.u.v.w.x.y.z.a.b.c.d.e.f.g' has more than 32 steps>");
	EV("str(x),json_query($.a,int,x)", "<error: too many arguments for 'json_query' (at most 2)>");
#undef JQ
}

/* ---- language ---- */

static void test_language(void **state)
{
	setup_stream();
	/* fr-CH, fr;q=0.9, en;q=0.8, de;q=0.7, *;q=0.5 */
	EV("req.fhdr(accept-language),language(es;fr;en)", "str:fr");
	EV("req.fhdr(accept-language),language(fr-CH;fr)", "str:fr-CH");
	EV("req.fhdr(accept-language),language(en;de)", "str:en");
	EV("req.fhdr(accept-language),language(de)", "str:de");
	EV("req.fhdr(accept-language),language(es)", "<none>");
	EV("req.fhdr(accept-language),language(es,nl)", "str:nl");
	EV("req.fhdr(accept-language),language(FR;EN)", "<none>");
	EV("str(en;q=0.5\\, de),language(en;de)", "str:de");
	EV("str(en;q=0.5\\, de;q=0.5),language(de;en)", "str:en");
	EV("str(en;q=0\\, de;q=0.001),language(en;de)", "str:de");
	EV("str(en;q=0),language(en,x)", "str:x");
	EV("str(en;q=1.5\\, de;q=0.1),language(en;de)", "str:de");
	EV("str(en;q=abc\\, de;q=0.1),language(en;de)", "str:de");
	EV("str(en;q=0.9999\\, de;q=0.1),language(en;de)", "str:de");
	EV("str(en ; q=0.2 \\, de ; Q=0.3),language(en;de)", "str:de");
	EV("str(en;level=1;q=0.2\\, de;q=0.1),language(en;de)", "str:en");
	EV("str(en-GB-oed),language(en)", "str:en");
	EV("str(zh-Hant-TW),language(zh-Hant-TW;zh)", "str:zh-Hant-TW");
	EV("str(\\,\\, \\,),language(en,none)", "str:none");
	EV("str(),language(en)", "<none>");
	EV("str(),language(en,)", "str:");
	EV("str(en),language(;;en;)", "str:en");
	EV("str(-),language(en)", "<none>");
	EV("str(en),language", "<error: missing argument 1 of 'language'>");
	EV("str(en),language()", "<error: converter 'language': expects a list of languages separated by ';'>");
	EV("str(en),language(en,a,b)", "<error: too many arguments for 'language' (at most 2)>");
	{
		static char big[VAR_MAX_LEN];
		struct var_ref r = { VAR_PROC, "al" };
		struct sample smp = { .type = SMP_T_STR, .u.str = { big, sizeof(big) } };

		for (size_t i = 0; i + 8 <= sizeof(big); i += 8)
			memcpy(big + i, "xx;q=1, ", 8);
		memcpy(big + sizeof(big) - 8, "en;q=.1,", 8);
		var_set(&r, &strm, &smp);
		EV("var(proc.al),language(en;fr,dflt)", "str:dflt");
		memcpy(big + sizeof(big) - 8, "en;q=0.1", 8);
		var_set(&r, &strm, &smp);
		EV("var(proc.al),language(en;fr,dflt)", "str:en");
	}
}

/* ---- add_item, unset-var ---- */

static void test_vars(void **state)
{
	struct var_ref a = { VAR_TXN, "a" }, e = { VAR_TXN, "e" }, i = { VAR_TXN, "i" };
	struct sample smp = { .type = SMP_T_STR, .u.str = { "A", 1 } };

	setup_stream();
	var_set(&a, &strm, &smp);
	smp.u.str.len = 0;
	var_set(&e, &strm, &smp);
	smp.type = SMP_T_SINT;
	smp.u.sint = 12;
	var_set(&i, &strm, &smp);

	EV("str(x),add_item(\\,,txn.a)", "str:x,A");
	EV("str(x),add_item(\\,,txn.a,s)", "str:x,As");
	EV("str(x),add_item(\\,,,s)", "str:x,s");
	EV("str(x),add_item(;,txn.i)", "str:x;12");
	EV("str(),add_item(\\,,txn.a)", "str:A");
	EV("str(),add_item(\\,,,s)", "str:s");
	EV("str(x),add_item(\\,,txn.e)", "str:x");
	EV("str(x),add_item(\\,,txn.e,s)", "str:x,s");
	EV("str(x),add_item(\\,,txn.none)", "str:x");
	EV("str(x),add_item(\\,,txn.none,s)", "str:x,s");
	EV("str(x),add_item(,txn.a)", "str:xA");
	EV("str(x),add_item(\\,,txn.a),add_item(\\,,txn.a)", "str:x,A,A");
	EV("int(5),add_item(-,txn.i)", "str:5-12");
	EV("str(x),add_item", "<error: missing argument 1 of 'add_item'>");
	EV("str(x),add_item(\\,)", "<error: converter 'add_item': expects a variable or a suffix after the delimiter>");
	EV("str(x),add_item(\\,,,)", "<error: converter 'add_item': expects a variable or a suffix after the delimiter>");
	EV("str(x),add_item(\\,,bad)", "<error: converter 'add_item': invalid variable name 'bad' (expects <scope>.<name> with scope proc, sess, txn, req, res or check)>");
	EV("str(x),add_item(a,b,c,d)", "<error: too many arguments for 'add_item' (at most 3)>");
	/* a huge result is cut to the scratch area */
	set_long("big", 'b', VAR_MAX_LEN);
	EV("var(proc.big),add_item(\\,,proc.big),length", "int:16384");

	EV("var(txn.a)", "str:A");
	EV("str(keep),unset-var(txn.a)", "str:keep");
	EV("var(txn.a)", "<none>");
	EV("int(3),unset-var(txn.a)", "int:3");
	EV("int(3),unset-var(txn.i),add(1)", "int:4");
	EV("var(txn.i)", "<none>");
	EV("str(x),unset-var", "<error: missing argument 1 of 'unset-var'>");
	EV("str(x),unset-var()", "<error: converter 'unset-var': missing variable name>");
	EV("str(x),unset-var(nope)", "<error: converter 'unset-var': invalid variable name 'nope' (expects <scope>.<name> with scope proc, sess, txn, req, res or check)>");
}

/* ---- nbsrv, srv_queue ---- */

static void test_proxies(void **state)
{
	struct proxy *be, *other;

	setup_stream();
	be = proxy_find("be", PR_CAP_BE);
	other = proxy_find("other", PR_CAP_BE);
	EV("str(be),nbsrv", "int:2");
	EV("str(other),nbsrv", "int:1");          /* o2 disabled, o3 backup */
	EV("str(nonelive),nbsrv", "int:1");       /* no active server: the backups */
	EV("str(fe),nbsrv", "<none>");            /* a frontend only */
	EV("str(nosuch),nbsrv", "<none>");
	EV("str(),nbsrv", "<none>");
	EV("str(be\\x),nbsrv", "<none>");
	EV("be_name,nbsrv", "int:2");
	EV("int(1),nbsrv", "<none>");
	EV("str(be),nbsrv(1)", "<error: too many arguments for 'nbsrv' (at most 0)>");

	be->servers->nbpend = 3;                  /* s1 */
	other->servers->next->nbpend = 5;         /* o2 */
	EV("str(be/s1),srv_queue", "int:3");
	EV("str(s1),srv_queue", "int:3");         /* the stream's backend */
	EV("str(s2),srv_queue", "int:0");
	EV("str(other/o2),srv_queue", "int:5");
	EV("str(o2),srv_queue", "<none>");        /* not in the stream's backend */
	EV("str(be/nosuch),srv_queue", "<none>");
	EV("str(nosuch/s1),srv_queue", "<none>");
	EV("str(fe/s1),srv_queue", "<none>");
	EV("str(/s1),srv_queue", "<none>");
	EV("str(be/),srv_queue", "<none>");
	EV("str(),srv_queue", "<none>");
	EV("str(be/s1/x),srv_queue", "<none>");
	{
		char expr[700];

		memset(expr, 0, sizeof(expr));
		memcpy(expr, "str(", 4);
		memset(expr + 4, 'b', 600);
		strcat(expr, "/s1),srv_queue");
		EV(expr, "<none>");
	}
	EV("str(s1),srv_queue(x)", "<error: too many arguments for 'srv_queue' (at most 0)>");
	be->servers->nbpend = 0;
	other->servers->next->nbpend = 0;
}

/* ---- capture-req, capture-res ---- */

static void test_capture(void **state)
{
	setup_stream();
	/* slot 0: declare capture request len 4; slot 1: Host header */
	EV("str(abcdef),capture-req(0)", "str:abcdef");
	EV("capture.req.hdr(0)", "str:abcd");
	EV("str(xy),capture-req(0)", "str:xy");
	EV("capture.req.hdr(0)", "str:xy");            /* the last value wins */
	EV("str(host),capture-req(1)", "str:host");
	EV("capture.req.hdr(1)", "str:host");
	EV("str(x),capture-req(2)", "<none>");        /* no such slot */
	EV("str(),capture-req(0)", "str:");
	EV("capture.req.hdr(0)", "str:");
	EV("int(12345),capture-req(0)", "str:12345");
	EV("capture.req.hdr(0)", "str:1234");
	EV("str(resp),capture-res(0)", "str:resp");
	EV("capture.res.hdr(0)", "str:res");
	EV("str(x),capture-res(1)", "<none>");
	EV("str(x),capture-req", "<error: missing argument 1 of 'capture-req'>");
	EV("str(x),capture-req(-1)", "<error: converter 'capture-req': capture slot -1 out of range (0 to 65535)>");
	EV("str(x),capture-res(65536)", "<error: converter 'capture-res': capture slot 65536 out of range (0 to 65535)>");
	EV("str(x),capture-req(a)", "<error: argument 1 of 'capture-req' must be an integer (got 'a')>");
	EV("str(x),capture-req(1,2)", "<error: too many arguments for 'capture-req' (at most 1)>");
}

static void test_declare_capture_cfg(void **state)
{
	PARSE_FRESH("backend b\n declare capture request len 4\n", 1);
	assert_non_null(strstr(errtext, "is not valid in a backend section"));
	PARSE_FRESH("frontend f\n declare capture request\n", 1);
	assert_non_null(strstr(errtext, "expects 'len <length>'"));
	PARSE_FRESH("frontend f\n declare capture request len 0\n", 1);
	assert_non_null(strstr(errtext, "'len 0'"));
	PARSE_FRESH("frontend f\n declare capture request len 65537\n", 1);
	PARSE_FRESH("frontend f\n declare capture response size 4\n", 1);
	PARSE_FRESH("frontend f\n declare capture request len 4 x\n", 1);
	PARSE_FRESH("frontend f\n declare capture sideways len 4\n", 1);
	PARSE_FRESH("frontend f\n declare capture request len 4\n"
		    " declare capture response len 65536\n", 0);
	/* mode tcp: accepted, with a warning that nothing fills the slot */
	PARSE_FRESH("frontend f\n mode tcp\n declare capture request len 4\n", 0);
	EXPECT_ERRORS(postparse(), 0);
	assert_non_null(strstr(errtext, "'declare capture' slots are only filled in 'mode http'"));
}

/* ---- debug ---- */

/* Evaluates <expr> with the standard error (or output, <fd>) sent to a
 * file; returns what was written. */
static const char *debug_run(const char *expr, int fd, const char *want_val)
{
	static char got[4096];
	char path[] = "/tmp/test_conv.XXXXXX";
	int tmp = mkstemp(path), saved = dup(fd);
	ssize_t n;

	assert_true(tmp >= 0 && saved >= 0);
	fflush(NULL);
	assert_int_equal(dup2(tmp, fd), fd);
	assert_string_equal(ev(expr), want_val);
	assert_int_equal(dup2(saved, fd), fd);
	close(saved);
	n = pread(tmp, got, sizeof(got) - 1, 0);
	close(tmp);
	unlink(path);
	got[n > 0 ? n : 0] = '\0';
	return got;
}

static void test_debug(void **state)
{
	setup_stream();
	assert_string_equal(debug_run("str(a\tb\\\\),debug(p1,stderr)", 2, "str:a\tb\\"),
			    "[debug] p1: type=str a\\x09b\\x5c\n");
	assert_string_equal(debug_run("int(42),debug(,stderr),add(1)", 2, "int:43"),
			    "[debug] debug: type=sint 42\n");
	assert_string_equal(debug_run("src,debug(ip,stdout)", 1, "ipv4:192.0.2.7"),
			    "[debug] ip: type=ipv4 192.0.2.7\n");
	assert_string_equal(debug_run("int(1),bool,debug(b,stderr),not", 2, "bool:0"),
			    "[debug] b: type=bool 1\n");
	{
		const char *out;

		set_long("big", 'z', VAR_MAX_LEN);
		out = debug_run("var(proc.big),debug(big,stderr),length", 2, "int:16384");
		assert_true(strlen(out) < 2048);
		assert_non_null(strstr(out, "zzz...\n"));
		set_long("bin", '\x01', 4);
		out = debug_run("var(proc.bin),debug(b,stderr)", 2, "str:\x01\x01\x01\x01");
		assert_string_equal(out, "[debug] b: type=str \\x01\\x01\\x01\\x01\n");
	}
	EV("str(x),debug", "<error: converter 'debug': destination 'buf0' is a ring buffer, which sluice does not have; name 'stderr' or 'stdout' (debug(<prefix>,stderr))>");
	EV("str(x),debug(p)", "<error: converter 'debug': destination 'buf0' is a ring buffer, which sluice does not have; name 'stderr' or 'stdout' (debug(<prefix>,stderr))>");
	EV("str(x),debug(p,buf0)", "<error: converter 'debug': destination 'buf0' is a ring buffer, which sluice does not have; name 'stderr' or 'stdout' (debug(<prefix>,stderr))>");
	EV("str(x),debug(p,myring)", "<error: converter 'debug': destination 'myring' is a ring buffer, which sluice does not have; name 'stderr' or 'stdout' (debug(<prefix>,stderr))>");
	EV("str(x),debug(p,STDERR)", "<error: converter 'debug': destination 'STDERR' is a ring buffer, which sluice does not have; name 'stderr' or 'stdout' (debug(<prefix>,stderr))>");
	EV("str(x),debug(p,stderr,x)", "<error: too many arguments for 'debug' (at most 2)>");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_teardown(test_binary, reset),
		cmocka_unit_test_teardown(test_xxhash, reset),
		cmocka_unit_test_teardown(test_json_query, reset),
		cmocka_unit_test_teardown(test_language, reset),
		cmocka_unit_test_teardown(test_vars, reset),
		cmocka_unit_test_teardown(test_proxies, reset),
		cmocka_unit_test_teardown(test_capture, reset),
		cmocka_unit_test_teardown(test_declare_capture_cfg, reset),
		cmocka_unit_test_teardown(test_debug, reset),
	};

	return cmocka_run_group_tests(tests, group_setup, group_teardown);
}
