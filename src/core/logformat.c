/* Log-format strings (logformat.h): a format is compiled once into an array
 * of nodes followed by its literal text in the same allocation, and rendered
 * per request into the caller's buffer without allocating. */
#include <arpa/inet.h>
#include <ctype.h>
#include <netinet/in.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <sluice/common.h>
#include <sluice/logformat.h>
#include <sluice/sample.h>
#include <sluice/str.h>

/* The formats HAProxy 2.6 documents as the strict equivalents of its
 * options (configuration manual, sections 8.2.2 and 8.2.3). */
const char LF_HTTPLOG[] =
	"%ci:%cp [%tr] %ft %b/%s %TR/%Tw/%Tc/%Tr/%Ta %ST %B %CC "
	"%CS %tsc %ac/%fc/%bc/%sc/%rc %sq/%bq %hr %hs %{+Q}r";
const char LF_HTTPSLOG[] =
	"%ci:%cp [%tr] %ft %b/%s %TR/%Tw/%Tc/%Tr/%Ta %ST %B %CC "
	"%CS %tsc %ac/%fc/%bc/%sc/%rc %sq/%bq %hr %hs %{+Q}r "
	"%[fc_err]/%[ssl_fc_err,hex]/%[ssl_c_err]/"
	"%[ssl_c_ca_err]/%[ssl_fc_is_resumed] %[ssl_fc_sni]/%sslv/%sslc";
const char LF_TCPLOG[] =
	"%ci:%cp [%t] %ft %b/%s %Tw/%Tc/%Tt %B %ts "
	"%ac/%fc/%bc/%sc/%rc %sq/%bq";
const char LF_HTTPLOG_CLF[] =
	"%{+Q}o %{-Q}ci - - [%trg] %r %ST %B \"\" \"\" %cp "
	"%ms %ft %b %s %TR %Tw %Tc %Tr %Ta %tsc %ac %fc "
	"%bc %sc %rc %sq %bq %CC %CS %hrl %hsl";

/* Node types: the two structural ones, then one per variable. */
enum lf_type {
	LF_T_TEXT,      /* literal bytes */
	LF_T_SEP,       /* a run of spaces: at most one space in the output */
	LF_T_SAMPLE,    /* %[...]: a sample expression (sample.h) */
	LF_V_CI, LF_V_CP, LF_V_FI, LF_V_FP, LF_V_BI, LF_V_BP, LF_V_SI, LF_V_SP,
	LF_V_t, LF_V_tr, LF_V_trg, LF_V_trl, LF_V_T, LF_V_Tl, LF_V_Ts, LF_V_ms,
	LF_V_ft, LF_V_f, LF_V_b, LF_V_s,
	LF_V_TR, LF_V_Tw, LF_V_Tc, LF_V_Tr, LF_V_Ta, LF_V_Tt, LF_V_Th, LF_V_Ti,
	LF_V_Tq, LF_V_Td, LF_V_Tu,
	LF_V_ST, LF_V_B, LF_V_U, LF_V_CC, LF_V_CS, LF_V_ts, LF_V_tsc,
	LF_V_ac, LF_V_fc, LF_V_bc, LF_V_sc, LF_V_rc, LF_V_sq, LF_V_bq,
	LF_V_hr, LF_V_hrl, LF_V_hs, LF_V_hsl,
	LF_V_r, LF_V_HM, LF_V_HU, LF_V_HP, LF_V_HPO, LF_V_HQ, LF_V_HV,
	LF_V_ID, LF_V_rt, LF_V_H, LF_V_pid, LF_V_lc, LF_V_sslc, LF_V_sslv,
	LF_V_o,         /* %o: sets the default flags, makes no node */
};

#define LF_O_QUOTE  0x01  /* +Q: strings between double quotes */
#define LF_O_HEX    0x02  /* +X: addresses, ports, %Ts %ms %rt %pid %lc in hex */
#define LF_O_ESC    0x04  /* +E: '"', '\' and ']' get a '\' in front */

/* One compiled element. Text lives after the node array, at <off>. */
struct lf_node {
	uint8_t  type;      /* enum lf_type */
	uint8_t  opts;      /* LF_O_* */
	uint32_t off;       /* LF_T_TEXT: offset of the text */
	uint32_t len;       /* LF_T_TEXT: its length */
	struct smp_expr *expr;  /* LF_T_SAMPLE: the expression (allocated) */
	int16_t  slot;      /* LF_T_SAMPLE on an HTTP head: its entry in a snapshot, else -1 */
	uint8_t  snap_res;  /* that head is the response's */
};

static const struct lf_var_def {
	const char *name;
	uint8_t     type;
	uint8_t     needs;  /* LF_N_* */
} lf_vars[] = {
	{ "ci",  LF_V_CI, 0 },   { "cp",  LF_V_CP, 0 },
	{ "fi",  LF_V_FI, LF_N_FEADDR }, { "fp",  LF_V_FP, LF_N_FEADDR },
	{ "bi",  LF_V_BI, 0 },   { "bp",  LF_V_BP, 0 },
	{ "si",  LF_V_SI, 0 },   { "sp",  LF_V_SP, 0 },
	{ "t",   LF_V_t, 0 },    { "tr",  LF_V_tr, LF_N_HTTP },
	{ "trg", LF_V_trg, LF_N_HTTP }, { "trl", LF_V_trl, LF_N_HTTP },
	{ "T",   LF_V_T, 0 },    { "Tl",  LF_V_Tl, 0 },
	{ "Ts",  LF_V_Ts, 0 },   { "ms",  LF_V_ms, 0 },
	{ "ft",  LF_V_ft, 0 },   { "f",   LF_V_f, 0 },
	{ "b",   LF_V_b, 0 },    { "s",   LF_V_s, 0 },
	{ "TR",  LF_V_TR, LF_N_HTTP }, { "Tw", LF_V_Tw, 0 },
	{ "Tc",  LF_V_Tc, 0 },   { "Tr",  LF_V_Tr, LF_N_HTTP },
	{ "Ta",  LF_V_Ta, LF_N_HTTP }, { "Tt", LF_V_Tt, 0 },
	{ "Th",  LF_V_Th, 0 },   { "Ti",  LF_V_Ti, LF_N_HTTP },
	{ "Tq",  LF_V_Tq, LF_N_HTTP }, { "Td", LF_V_Td, 0 },
	{ "Tu",  LF_V_Tu, 0 },
	{ "ST",  LF_V_ST, 0 },   { "B",   LF_V_B, 0 },
	{ "U",   LF_V_U, 0 },
	{ "CC",  LF_V_CC, LF_N_HTTP }, { "CS", LF_V_CS, LF_N_HTTP },
	{ "ts",  LF_V_ts, 0 },   { "tsc", LF_V_tsc, LF_N_HTTP },
	{ "ac",  LF_V_ac, 0 },   { "fc",  LF_V_fc, 0 },
	{ "bc",  LF_V_bc, 0 },   { "sc",  LF_V_sc, 0 },
	{ "rc",  LF_V_rc, 0 },   { "sq",  LF_V_sq, 0 },
	{ "bq",  LF_V_bq, 0 },
	{ "hr",  LF_V_hr, LF_N_CAPTURE },  { "hrl", LF_V_hrl, LF_N_CAPTURE },
	{ "hs",  LF_V_hs, LF_N_CAPTURE },  { "hsl", LF_V_hsl, LF_N_CAPTURE },
	{ "r",   LF_V_r,   LF_N_REQLINE | LF_N_HTTP },
	{ "HM",  LF_V_HM,  LF_N_REQLINE | LF_N_HTTP },
	{ "HU",  LF_V_HU,  LF_N_REQLINE | LF_N_HTTP },
	{ "HP",  LF_V_HP,  LF_N_REQLINE | LF_N_HTTP },
	{ "HPO", LF_V_HPO, LF_N_REQLINE | LF_N_HTTP },
	{ "HQ",  LF_V_HQ,  LF_N_REQLINE | LF_N_HTTP },
	{ "HV",  LF_V_HV,  LF_N_REQLINE | LF_N_HTTP },
	{ "ID",  LF_V_ID, LF_N_UNIQID },
	{ "rt",  LF_V_rt, 0 },   { "H",   LF_V_H, 0 },
	{ "pid", LF_V_pid, 0 },  { "lc",  LF_V_lc, 0 },
	{ "sslc", LF_V_sslc, 0 }, { "sslv", LF_V_sslv, 0 },
	{ "o",   LF_V_o, 0 },
};

/* Character classes of the output encodings. HAProxy writes a byte that
 * cannot appear as is as '#' and two upper-case hex digits: in the request
 * line, controls, bytes >= 127, '"' and '#'; in captured headers also '{',
 * '|' and '}', which delimit %hr. */
#define LF_C_URL  0x01
#define LF_C_HDR  0x02
#define LF_C_ESC  0x04  /* escaped by +E */

static uint8_t lf_cclass[256];

SLUICE_INIT(lf_init_cclass)
{
	for (int c = 0; c < 256; c++) {
		if (c < 32 || c >= 127 || c == '"' || c == '#')
			lf_cclass[c] |= LF_C_URL | LF_C_HDR;
		if (c == '{' || c == '|' || c == '}')
			lf_cclass[c] |= LF_C_HDR;
		if (c == '"' || c == '\\' || c == ']')
			lf_cclass[c] |= LF_C_ESC;
	}
}

/* ------------------------------------------------------------------------
 * Compilation
 */

struct lf_build {
	struct lf_node *nodes;
	int             n, cap;
	char           *text;
	size_t          tlen, tcap;
	unsigned        needs;
};

static int lf_add_node(struct lf_build *b, int type, unsigned opts)
{
	if (type == LF_T_SEP && b->n && b->nodes[b->n - 1].type == LF_T_SEP)
		return 0;   /* "a %o b" would give two separators: one is enough */
	if (b->n == b->cap) {
		int cap = b->cap ? b->cap * 2 : 16;
		struct lf_node *p = realloc(b->nodes, (size_t)cap * sizeof(*p));

		if (!p)
			return -1;
		b->nodes = p;
		b->cap = cap;
	}
	b->nodes[b->n++] = (struct lf_node){ .type = (uint8_t)type, .opts = (uint8_t)opts };
	return 0;
}

/* Appends literal text, merged into the previous node when it is text. */
static int lf_add_text(struct lf_build *b, const char *s, size_t len)
{
	struct lf_node *last;

	if (b->tlen + len + 1 > b->tcap) {
		size_t cap = b->tcap ? b->tcap : 64;
		char *p;

		while (cap < b->tlen + len + 1)
			cap *= 2;
		p = realloc(b->text, cap);
		if (!p)
			return -1;
		b->text = p;
		b->tcap = cap;
	}
	memcpy(b->text + b->tlen, s, len);
	last = b->n ? &b->nodes[b->n - 1] : NULL;
	if (!last || last->type != LF_T_TEXT) {
		if (lf_add_node(b, LF_T_TEXT, 0) == -1)
			return -1;
		last = &b->nodes[b->n - 1];
		last->off = (uint32_t)b->tlen;
	}
	last->len += (uint32_t)len;
	b->tlen += len;
	return 0;
}

/* %[expr] and %{flags}[expr]. <p> points after the '['. This is the one
 * place where sample expressions enter: <expr> is compiled into an
 * LF_T_SAMPLE node, evaluated at render time on the context's stream. */
static int lf_compile_sample(struct lf_build *b, const char *fmt, const char *pct,
                             const char **p, unsigned opts, char **err)
{
	const char *end = strchr(*p, ']'), *stop;
	struct smp_expr *e;
	char *src, *perr = NULL;

	if (!end) {
		*err = str_fmt("missing ']' after '%%[' at column %zu", (size_t)(pct - fmt) + 1);
		return -1;
	}
	src = malloc((size_t)(end - *p) + 1);
	e = calloc(1, sizeof(*e));
	if (!src || !e) {
		free(src);
		free(e);
		*err = str_fmt("out of memory");
		return -1;
	}
	memcpy(src, *p, (size_t)(end - *p));
	src[end - *p] = '\0';
	if (smp_expr_parse(src, e, &stop, &perr) == 0 && *stop) {
		perr = str_fmt("unexpected '%.32s'", stop);
		smp_expr_free(e);
	}
	if (perr) {
		*err = str_fmt("sample expression '%%[%.*s]' at column %zu: %s",
			       (int)MIN(end - *p, 64), *p, (size_t)(pct - fmt) + 1, perr);
		free(perr);
		free(e);
		free(src);
		return -1;
	}
	free(src);
	if (lf_add_node(b, LF_T_SAMPLE, opts) == -1) {
		smp_expr_free(e);
		free(e);
		*err = str_fmt("out of memory");
		return -1;
	}
	b->nodes[b->n - 1].expr = e;
	b->nodes[b->n - 1].slot = -1;
	*p = end + 1;
	return 0;
}

/* Gives a snapshot slot to each sample that reads an HTTP head only: the
 * log line is written once the heads are gone. */
static void lf_assign_slots(struct lf_expr *e)
{
	e->nslots = 0;
	for (int i = 0; i < e->n; i++) {
		struct lf_node *nd = &e->nodes[i];
		unsigned use;

		if (nd->type != LF_T_SAMPLE)
			continue;
		use = nd->expr->fetch->use;
		nd->slot = -1;
		if ((use & (SMP_USE_L7REQ | SMP_USE_L7RES)) &&
		    !(use & (SMP_USE_L4 | SMP_USE_CONST)) && e->nslots < INT16_MAX) {
			nd->slot = (int16_t)e->nslots++;
			nd->snap_res = !!(use & SMP_USE_L7RES);
		}
	}
}

void lf_snapshot(const struct lf_expr *e, struct stream *s, int res, char **vals,
                 char *(*dup)(const char *p, size_t len), void (*release)(char *p))
{
	for (int i = 0; i < e->n; i++) {
		const struct lf_node *nd = &e->nodes[i];
		struct sample smp = { 0 };
		char buf[64];

		if (nd->type != LF_T_SAMPLE || nd->slot < 0 || nd->snap_res != !!res)
			continue;
		if (vals[nd->slot]) {
			release(vals[nd->slot]);
			vals[nd->slot] = NULL;
		}
		if (!smp_expr_eval(nd->expr, s, &smp))
			continue;
		if (smp.type == SMP_T_STR || smp.type == SMP_T_BIN)
			vals[nd->slot] = dup(smp.u.str.p, smp.u.str.len);
		else
			vals[nd->slot] = dup(buf, smp_to_text(&smp, buf, sizeof(buf)));
	}
}

/* Applies the comma-separated flags of "%{...}" (<s>, <len> bytes) to
 * <opts>. Empty items are ignored, as HAProxy does. */
static int lf_parse_flags(const char *s, size_t len, unsigned *opts, size_t col, char **err)
{
	const char *end = s + len;

	while (s < end) {
		const char *comma = memchr(s, ',', (size_t)(end - s));
		const char *e = comma ? comma : end;
		size_t n = (size_t)(e - s);
		unsigned f = 0;

		if (n == 2 && (s[0] == '+' || s[0] == '-')) {
			f = s[1] == 'Q' ? LF_O_QUOTE : s[1] == 'X' ? LF_O_HEX :
			    s[1] == 'E' ? LF_O_ESC : 0;
		}
		if (n && !f) {
			*err = str_fmt("unknown flag '%.*s' in '%%{...}' at column %zu "
				       "(flags are +Q, +X, +E or -Q, -X, -E, separated by commas)",
				       (int)MIN(n, 32), s, col);
			return -1;
		}
		if (n && s[0] == '+')
			*opts |= f;
		else if (n)
			*opts &= ~f;
		s = comma ? comma + 1 : end;
	}
	return 0;
}

/* Compiles the variable starting at the '%' <*p>; moves <*p> past it. */
static int lf_compile_var(struct lf_build *b, const char *fmt, const char **p,
                          unsigned *defopts, char **err)
{
	const char *pct = *p, *q = pct + 1;
	size_t col = (size_t)(pct - fmt) + 1;
	unsigned opts = *defopts;
	int has_flags = 0;
	size_t n;

	if (*q == '{') {
		const char *end = strchr(q, '}');

		if (!end) {
			*err = str_fmt("unterminated '%%{' at column %zu (flags end with '}')", col);
			return -1;
		}
		if (lf_parse_flags(q + 1, (size_t)(end - q - 1), &opts, col, err) == -1)
			return -1;
		q = end + 1;
		has_flags = 1;
	}
	if (*q == '[') {
		*p = q + 1;
		return lf_compile_sample(b, fmt, pct, p, opts, err);
	}
	/* A name starts with a letter: "%1" is refused as HAProxy does. */
	n = 0;
	if (isalpha((unsigned char)*q))
		while (isalnum((unsigned char)q[n]))
			n++;
	if (!n) {
		if (has_flags)
			*err = str_fmt("flags '%.*s' at column %zu are not followed by a variable name",
				       (int)MIN(q - pct, 64), pct, col);
		else if (!*q)
			*err = str_fmt("'%%' at the end of the format (column %zu); "
				       "write '%%%%' for a literal '%%'", col);
		else
			*err = str_fmt("unexpected character '%c' after '%%' at column %zu; "
				       "write '%%%%' for a literal '%%'", isprint((unsigned char)*q) ? *q : '?', col);
		return -1;
	}
	for (size_t i = 0; i < ARRAY_SIZE(lf_vars); i++) {
		const struct lf_var_def *v = &lf_vars[i];

		if (strlen(v->name) != n || memcmp(v->name, q, n) != 0)
			continue;
		*p = q + n;
		if (v->type == LF_V_o) {
			*defopts = opts;
			return 0;
		}
		b->needs |= v->needs;
		if (lf_add_node(b, v->type, opts) == -1) {
			*err = str_fmt("out of memory");
			return -1;
		}
		return 0;
	}
	*err = str_fmt("unknown log-format variable '%%%.*s' at column %zu "
		       "(write '%%%%' for a literal '%%')", (int)MIN(n, 64), q, col);
	return -1;
}

int lf_compile(const char *fmt, struct lf_expr *out, char **err)
{
	struct lf_build b = { 0 };
	unsigned defopts = 0;
	const char *p = fmt;
	size_t nbytes;
	char *blk;

	out->nodes = NULL;
	out->n = 0;
	out->needs = 0;
	*err = NULL;
	if (strlen(fmt) > INT32_MAX / 2) {
		*err = str_fmt("log-format too long");
		return -1;
	}
	while (*p) {
		if (*p == ' ') {
			while (*p == ' ')
				p++;
			if (lf_add_node(&b, LF_T_SEP, 0) == -1)
				goto oom;
		} else if (*p != '%') {
			const char *q = p;

			while (*q && *q != ' ' && *q != '%')
				q++;
			if (lf_add_text(&b, p, (size_t)(q - p)) == -1)
				goto oom;
			p = q;
		} else if (p[1] == '%') {
			if (lf_add_text(&b, "%", 1) == -1)
				goto oom;
			p += 2;
		} else if (lf_compile_var(&b, fmt, &p, &defopts, err) == -1) {
			goto fail;
		}
	}
	/* One block: the nodes, then the text they point into. */
	nbytes = (size_t)b.n * sizeof(*b.nodes);
	blk = malloc(nbytes + b.tlen + 1);
	if (!blk)
		goto oom;
	if (nbytes)
		memcpy(blk, b.nodes, nbytes);
	if (b.tlen)
		memcpy(blk + nbytes, b.text, b.tlen);
	blk[nbytes + b.tlen] = '\0';
	out->nodes = (struct lf_node *)(void *)blk;
	out->n = b.n;
	out->needs = b.needs;
	lf_assign_slots(out);
	free(b.nodes);
	free(b.text);
	return 0;
oom:
	*err = str_fmt("out of memory");
fail:
	for (int i = 0; i < b.n; i++)
		if (b.nodes[i].type == LF_T_SAMPLE) {
			smp_expr_free(b.nodes[i].expr);
			free(b.nodes[i].expr);
		}
	free(b.nodes);
	free(b.text);
	return -1;
}

void lf_free(struct lf_expr *e)
{
	for (int i = 0; i < e->n; i++)
		if (e->nodes[i].type == LF_T_SAMPLE) {
			smp_expr_free(e->nodes[i].expr);
			free(e->nodes[i].expr);
		}
	free(e->nodes);
	e->nodes = NULL;
	e->n = 0;
	e->needs = 0;
	e->nslots = 0;
}

const char *lf_stream_fetch(const struct lf_expr *e)
{
	for (int i = 0; i < e->n; i++)
		if (e->nodes[i].type == LF_T_SAMPLE && !(e->nodes[i].expr->fetch->use & SMP_USE_CONST))
			return e->nodes[i].expr->fetch->name;
	return NULL;
}

const char *lf_http_var(const struct lf_expr *e)
{
	for (int i = 0; i < e->n; i++)
		for (size_t j = 0; j < ARRAY_SIZE(lf_vars); j++)
			if (lf_vars[j].type == e->nodes[i].type && (lf_vars[j].needs & LF_N_HTTP))
				return lf_vars[j].name;
	return NULL;
}

/* ------------------------------------------------------------------------
 * Rendering: every writer below drops what does not fit before <end>, so
 * the line is cut at the buffer's size and nothing is ever overrun.
 */

struct lf_out {
	char *p;
	char *end;   /* the last byte, kept for the NUL */
};

static inline void out_chr(struct lf_out *o, char c)
{
	if (o->p < o->end)
		*o->p++ = c;
}

static inline void out_mem(struct lf_out *o, const char *s, size_t n)
{
	size_t room = (size_t)(o->end - o->p);

	if (n > room)
		n = room;
	/* Most pieces are a few bytes ("/", "] ", a port): a call to
	 * memcpy() would cost more than the copy. */
	if (n <= 8) {
		for (size_t i = 0; i < n; i++)
			o->p[i] = s[i];
	} else {
		memcpy(o->p, s, n);
	}
	o->p += n;
}

static void out_u64(struct lf_out *o, uint64_t v)
{
	char tmp[24], *t = tmp + sizeof(tmp);

	do {
		*--t = (char)('0' + v % 10);
		v /= 10;
	} while (v);
	out_mem(o, t, (size_t)(tmp + sizeof(tmp) - t));
}

static void out_long(struct lf_out *o, long v)
{
	if (v < 0) {
		out_chr(o, '-');
		out_u64(o, (uint64_t)0 - (uint64_t)v);
	} else {
		out_u64(o, (uint64_t)v);
	}
}

/* Upper-case hex, at least <width> digits (HAProxy's "%0NX"). */
static void out_hex(struct lf_out *o, uint64_t v, int width)
{
	static const char hx[] = "0123456789ABCDEF";
	char tmp[20], *t = tmp + sizeof(tmp);

	do {
		*--t = hx[v & 15];
		v >>= 4;
		width--;
	} while (v || width > 0);
	out_mem(o, t, (size_t)(tmp + sizeof(tmp) - t));
}

/* Writes <len> bytes of <s>, '#XX'-encoding the bytes of class <enc>
 * (LF_C_URL, LF_C_HDR or 0) and, with +E, escaping '"', '\' and ']'. */
static void out_enc(struct lf_out *o, const char *s, size_t len, unsigned enc, unsigned opts)
{
	static const char hx[] = "0123456789ABCDEF";
	unsigned mask = enc | ((opts & LF_O_ESC) ? LF_C_ESC : 0);
	const char *end = s + len, *run = s;

	if (!mask) {
		out_mem(o, s, len);
		return;
	}
	for (; s < end; s++) {
		unsigned char c = (unsigned char)*s;
		unsigned cl = lf_cclass[c] & mask;

		if (likely(!cl))
			continue;
		out_mem(o, run, (size_t)(s - run));
		run = s + 1;
		if (cl & enc) {
			out_chr(o, '#');
			out_chr(o, hx[c >> 4]);
			out_chr(o, hx[c & 15]);
		} else {
			out_chr(o, '\\');
			out_chr(o, (char)c);
		}
	}
	out_mem(o, run, (size_t)(end - run));
}

/* A string field: quoted with +Q; when empty, '-' (or "" with +Q) if <dash>,
 * else nothing (or ""). */
static void out_str(struct lf_out *o, const char *s, size_t len, unsigned enc,
                    unsigned opts, int dash)
{
	if (opts & LF_O_QUOTE)
		out_chr(o, '"');
	if (s && len)
		out_enc(o, s, len, enc, opts);
	else if (dash && !(opts & LF_O_QUOTE))
		out_chr(o, '-');
	if (opts & LF_O_QUOTE)
		out_chr(o, '"');
}

static void out_cstr(struct lf_out *o, const char *s, unsigned opts)
{
	out_str(o, s, s ? strlen(s) : 0, 0, opts, 1);
}

static int lf_addr_known(const struct sockaddr_storage *a)
{
	return a && (a->ss_family == AF_INET || a->ss_family == AF_INET6 ||
		     a->ss_family == AF_UNIX);
}

/* %ci %fi %bi %si: the address, in hex with +X ("7F000001", 32 digits for
 * IPv6, never quoted), "unix" for UNIX sockets, '-' when unknown. */
static void out_ip(struct lf_out *o, const struct sockaddr_storage *a, unsigned opts)
{
	char tmp[INET6_ADDRSTRLEN];

	if (!lf_addr_known(a)) {
		out_str(o, NULL, 0, 0, opts, 1);
	} else if (a->ss_family == AF_INET) {
		const struct sockaddr_in *in = (const struct sockaddr_in *)(const void *)a;

		if (opts & LF_O_HEX) {
			out_hex(o, ntohl(in->sin_addr.s_addr), 8);
			return;
		}
		/* Dotted quad by hand: inet_ntop() costs more than a whole
		 * httplog line otherwise does. */
		const uint8_t *b = (const uint8_t *)&in->sin_addr.s_addr;
		char *t = tmp;

		for (int i = 0; i < 4; i++) {
			if (i)
				*t++ = '.';
			if (b[i] >= 100)
				*t++ = (char)('0' + b[i] / 100);
			if (b[i] >= 10)
				*t++ = (char)('0' + b[i] / 10 % 10);
			*t++ = (char)('0' + b[i] % 10);
		}
		out_str(o, tmp, (size_t)(t - tmp), 0, opts, 1);
	} else if (a->ss_family == AF_INET6) {
		const struct sockaddr_in6 *in6 = (const struct sockaddr_in6 *)(const void *)a;

		if (opts & LF_O_HEX) {
			for (int i = 0; i < 16; i++)
				out_hex(o, in6->sin6_addr.s6_addr[i], 2);
			return;
		}
		inet_ntop(AF_INET6, &in6->sin6_addr, tmp, sizeof(tmp));
		out_str(o, tmp, strlen(tmp), 0, opts, 1);
	} else {
		out_str(o, "unix", 4, 0, opts, 1);
	}
}

/* %cp %fp %bp %sp: a number (never quoted), %04X with +X; a UNIX socket
 * shows the listener's id. */
static void out_port(struct lf_out *o, const struct sockaddr_storage *a, int li_id, unsigned opts)
{
	unsigned port;

	if (!lf_addr_known(a)) {
		out_str(o, NULL, 0, 0, opts, 1);
		return;
	}
	if (a->ss_family == AF_INET)
		port = ntohs(((const struct sockaddr_in *)(const void *)a)->sin_port);
	else if (a->ss_family == AF_INET6)
		port = ntohs(((const struct sockaddr_in6 *)(const void *)a)->sin6_port);
	else
		port = (unsigned)li_id;
	if (opts & LF_O_HEX)
		out_hex(o, port, 4);
	else
		out_u64(o, port);
}

/* Dates. localtime_r() takes a lock and walks the zone rules; a line needs
 * the same second many times in a row, so the formatted second is kept.
 * The loop is single-threaded; the memo is a cache, never state. */
struct lf_date_memo {
	time_t sec;
	long   zone;      /* the C library's "timezone" then: tzset() moves it */
	int    valid;
	int    len;       /* of <str>: "dd/Mmm/yyyy:HH:MM:SS" */
	char   str[64];
	char   tz[8];     /* "+hhmm" */
};

static struct lf_date_memo lf_memo[2];   /* [0]: GMT, [1]: local time */

static const struct lf_date_memo *lf_date(time_t sec, int local)
{
	static const char mon[12][4] = { "Jan", "Feb", "Mar", "Apr", "May", "Jun",
					 "Jul", "Aug", "Sep", "Oct", "Nov", "Dec" };
	struct lf_date_memo *m = &lf_memo[local];
	struct tm tm;
	long off;
	int n;

	if (m->valid && m->sec == sec && m->zone == timezone)
		return m;
	if (!(local ? localtime_r(&sec, &tm) : gmtime_r(&sec, &tm))) {
		memset(&tm, 0, sizeof(tm));
		tm.tm_mday = 1;
		tm.tm_year = 70;
	}
	n = snprintf(m->str, sizeof(m->str), "%02d/%s/%04d:%02d:%02d:%02d", tm.tm_mday,
		     mon[tm.tm_mon >= 0 && tm.tm_mon < 12 ? tm.tm_mon : 0],
		     tm.tm_year + 1900, tm.tm_hour, tm.tm_min, tm.tm_sec);
	m->len = n < 0 ? 0 : MIN(n, (int)sizeof(m->str) - 1);
	off = local ? tm.tm_gmtoff : 0;
	if (off < -86399 || off > 86399)
		off = 0;
	snprintf(m->tz, sizeof(m->tz), "%c%02d%02d", off < 0 ? '-' : '+',
		 (int)(labs(off) / 3600), (int)(labs(off) % 3600 / 60));
	m->sec = sec;
	m->zone = timezone;
	m->valid = 1;
	return m;
}

static int lf_ms(const struct timespec *ts)
{
	long ms = ts->tv_nsec / 1000000;

	return ms < 0 ? 0 : ms > 999 ? 999 : (int)ms;
}

/* "dd/Mmm/yyyy:HH:MM:SS.mmm" (%t %tr), local time. */
static void out_date_ms(struct lf_out *o, const struct timespec *ts)
{
	const struct lf_date_memo *m = lf_date(ts->tv_sec, 1);
	int ms = lf_ms(ts);
	char tail[4] = { '.', (char)('0' + ms / 100), (char)('0' + ms / 10 % 10), (char)('0' + ms % 10) };

	out_mem(o, m->str, (size_t)m->len);
	out_mem(o, tail, sizeof(tail));
}

/* "dd/Mmm/yyyy:HH:MM:SS +zzzz" (%T %trg in GMT, %Tl %trl local). */
static void out_date_tz(struct lf_out *o, const struct timespec *ts, int local)
{
	const struct lf_date_memo *m = lf_date(ts->tv_sec, local);

	out_mem(o, m->str, (size_t)m->len);
	out_chr(o, ' ');
	out_mem(o, m->tz, strlen(m->tz));
}

/* The parts of "METHOD URI VERSION". */
struct lf_reqline {
	const char *m, *u, *v;
	size_t      ml, ul, vl;
};

static void lf_split_reqline(const struct lf_ctx *c, struct lf_reqline *rl)
{
	const char *s = c->reqline;
	const char *end = s + (c->reqline_len ? c->reqline_len : strlen(s));
	const char *p = s;

	while (p < end && *p != ' ')
		p++;
	rl->m = s;
	rl->ml = (size_t)(p - s);
	while (p < end && *p == ' ')
		p++;
	rl->u = p;
	while (p < end && *p != ' ')
		p++;
	rl->ul = (size_t)(p - rl->u);
	while (p < end && *p == ' ')
		p++;
	rl->v = p;
	rl->vl = (size_t)(end - p);
}

/* %HP (<path_only> 0) and %HPO (1): the URI up to '?'; %HPO also drops the
 * scheme and authority of an absolute URI, and is empty for "*" and for
 * CONNECT's authority form. */
static void lf_uri_path(const char *u, size_t ul, int path_only, const char **ps, size_t *pl)
{
	const char *q = memchr(u, '?', ul);
	const char *end = q ? q : u + ul;
	const char *s = u;

	if (path_only && (s == end || *s != '/')) {
		const char *scheme = NULL;

		for (const char *x = s; x + 3 <= end; x++) {
			if (x[0] == ':' && x[1] == '/' && x[2] == '/') {
				scheme = x + 3;
				break;
			}
		}
		s = scheme ? memchr(scheme, '/', (size_t)(end - scheme)) : NULL;
		if (!s)
			s = end;
	}
	*ps = s;
	*pl = (size_t)(end - s);
}

/* %HM %HU %HP %HPO %HQ %HV. */
static void out_reqpart(struct lf_out *o, const struct lf_ctx *c, int type, unsigned opts)
{
	struct lf_reqline rl;
	const char *s = NULL, *q;
	size_t len = 0;

	if (!c->reqline) {
		out_str(o, "<BADREQ>", 8, 0, opts, 0);
		return;
	}
	lf_split_reqline(c, &rl);
	switch (type) {
	case LF_V_HM:
		s = rl.m, len = rl.ml;
		break;
	case LF_V_HU:
		s = rl.u, len = rl.ul;
		break;
	case LF_V_HP:
	case LF_V_HPO:
		lf_uri_path(rl.u, rl.ul, type == LF_V_HPO, &s, &len);
		break;
	case LF_V_HQ:
		q = memchr(rl.u, '?', rl.ul);
		if (q)
			s = q, len = (size_t)(rl.u + rl.ul - q);
		break;
	default:
		s = rl.v, len = rl.vl;
		break;
	}
	out_str(o, s, len, LF_C_URL, opts, 0);
}

/* %hr/%hs: "{v1|v2}"; %hrl/%hsl: "v1 v2" with '-' for an empty one.
 * Returns 0 when there are no captures: the field is left out altogether
 * and the spaces around it merge (HAProxy's httplog has no double space). */
static int out_caps(struct lf_out *o, const char **caps, int n, int list, unsigned opts)
{
	if (!caps || n <= 0)
		return 0;
	if (list) {
		for (int i = 0; i < n; i++) {
			if (i)
				out_chr(o, ' ');
			out_str(o, caps[i], caps[i] ? strlen(caps[i]) : 0, LF_C_HDR, opts, 1);
		}
		return 1;
	}
	if (opts & LF_O_QUOTE)
		out_chr(o, '"');
	out_chr(o, '{');
	for (int i = 0; i < n; i++) {
		if (i)
			out_chr(o, '|');
		if (caps[i])
			out_enc(o, caps[i], strlen(caps[i]), LF_C_HDR, opts);
	}
	out_chr(o, '}');
	if (opts & LF_O_QUOTE)
		out_chr(o, '"');
	return 1;
}

static void out_term(struct lf_out *o, const char *term, int n)
{
	for (int i = 0; i < n; i++)
		out_chr(o, term[i] ? term[i] : '-');
}

/* A number that +X turns into "%0<w>X". */
static void out_num_x(struct lf_out *o, uint64_t v, int w, unsigned opts)
{
	if (opts & LF_O_HEX)
		out_hex(o, v, w);
	else
		out_u64(o, v);
}

/* option logasap: the figures that go on growing after the line get a '+'. */
static void out_asap(struct lf_out *o, const struct lf_ctx *c)
{
	if (c->asap)
		out_chr(o, '+');
}

/* Renders one variable node. Returns 0 when it left itself out (empty
 * capture lists), 1 otherwise, even when it wrote nothing (%HQ without a
 * query string still separates its neighbours). */
static int lf_render_var(struct lf_out *o, const struct lf_node *nd, const struct lf_ctx *c)
{
	unsigned opts = nd->opts;

	switch (nd->type) {
	case LF_V_CI: out_ip(o, c->cli, opts); break;
	case LF_V_CP: out_port(o, c->cli, c->li_id, opts); break;
	case LF_V_FI: out_ip(o, c->fe_addr, opts); break;
	case LF_V_FP: out_port(o, c->fe_addr, c->li_id, opts); break;
	case LF_V_BI: out_ip(o, c->be_src, opts); break;
	case LF_V_BP: out_port(o, c->be_src, c->li_id, opts); break;
	case LF_V_SI: out_ip(o, c->srv_addr, opts); break;
	case LF_V_SP: out_port(o, c->srv_addr, c->li_id, opts); break;
	case LF_V_t: out_date_ms(o, &c->accept_date); break;
	case LF_V_tr: out_date_ms(o, &c->req_date); break;
	case LF_V_trg: out_date_tz(o, &c->req_date, 0); break;
	case LF_V_trl: out_date_tz(o, &c->req_date, 1); break;
	case LF_V_T: out_date_tz(o, &c->accept_date, 0); break;
	case LF_V_Tl: out_date_tz(o, &c->accept_date, 1); break;
	case LF_V_Ts:
		if (opts & LF_O_HEX)
			out_hex(o, (uint64_t)c->accept_date.tv_sec, 8);
		else
			out_long(o, (long)c->accept_date.tv_sec);
		break;
	case LF_V_ms: {
		int ms = lf_ms(&c->accept_date);

		if (opts & LF_O_HEX) {
			out_hex(o, (uint64_t)ms, 2);
		} else {
			char d[3] = { (char)('0' + ms / 100), (char)('0' + ms / 10 % 10),
				      (char)('0' + ms % 10) };
			out_mem(o, d, 3);
		}
		break;
	}
	case LF_V_ft: out_cstr(o, c->fe_name_transport ? c->fe_name_transport : c->fe_name, opts); break;
	case LF_V_f: out_cstr(o, c->fe_name, opts); break;
	case LF_V_b: out_cstr(o, c->be_name, opts); break;
	case LF_V_s: out_cstr(o, c->srv_name ? c->srv_name : "<NOSRV>", opts); break;
	case LF_V_TR: out_long(o, c->TR); break;
	case LF_V_Tw: out_long(o, c->Tw); break;
	case LF_V_Tc: out_long(o, c->Tc); break;
	case LF_V_Tr: out_long(o, c->Tr); break;
	case LF_V_Ta: out_asap(o, c); out_long(o, c->Ta); break;
	case LF_V_Tt: out_asap(o, c); out_long(o, c->Tt); break;
	case LF_V_Th: out_long(o, c->Th); break;
	case LF_V_Ti: out_long(o, c->Ti); break;
	case LF_V_Tq: out_long(o, c->Tq); break;
	case LF_V_Td: out_long(o, c->Td); break;
	case LF_V_Tu: out_asap(o, c); out_long(o, c->Tu); break;
	case LF_V_ST: out_long(o, c->status); break;
	case LF_V_B: out_asap(o, c); out_u64(o, c->bytes_out); break;
	case LF_V_U: out_u64(o, c->bytes_in); break;
	case LF_V_CC: out_cstr(o, c->req_cookie, opts); break;
	case LF_V_CS: out_cstr(o, c->res_cookie, opts); break;
	case LF_V_ts: out_term(o, c->term, 2); break;
	case LF_V_tsc: out_term(o, c->term, 4); break;
	case LF_V_ac: out_long(o, c->actconn); break;
	case LF_V_fc: out_long(o, c->feconn); break;
	case LF_V_bc: out_long(o, c->beconn); break;
	case LF_V_sc: out_long(o, c->srvconn); break;
	case LF_V_rc:
		if (c->redispatched)
			out_chr(o, '+');
		out_long(o, c->retries);
		break;
	case LF_V_sq: out_long(o, c->srv_queue); break;
	case LF_V_bq: out_long(o, c->be_queue); break;
	case LF_V_hr: return out_caps(o, c->req_cap, c->n_req_cap, 0, opts);
	case LF_V_hrl: return out_caps(o, c->req_cap, c->n_req_cap, 1, opts);
	case LF_V_hs: return out_caps(o, c->res_cap, c->n_res_cap, 0, opts);
	case LF_V_hsl: return out_caps(o, c->res_cap, c->n_res_cap, 1, opts);
	case LF_V_r:
		if (c->reqline)
			out_str(o, c->reqline, c->reqline_len ? c->reqline_len : strlen(c->reqline),
				LF_C_URL, opts, 1);
		else
			out_str(o, "<BADREQ>", 8, 0, opts, 1);
		break;
	case LF_V_HM: case LF_V_HU: case LF_V_HP: case LF_V_HPO: case LF_V_HQ: case LF_V_HV:
		out_reqpart(o, c, nd->type, opts);
		break;
	case LF_V_ID: out_cstr(o, c->unique_id, opts); break;
	case LF_V_rt: out_num_x(o, c->uniq_num, 4, opts); break;
	case LF_V_H: out_cstr(o, c->hostname, opts); break;
	case LF_V_pid: out_num_x(o, (uint64_t)(unsigned)c->pid, 4, opts); break;
	case LF_V_lc: out_num_x(o, c->log_counter, 4, opts); break;
	case LF_V_sslc: out_cstr(o, c->ssl_ciphers, opts); break;
	case LF_V_sslv: out_cstr(o, c->ssl_version, opts); break;
	default:
		BUG_ON(1, "log-format node of unknown type");
	}
	return 1;
}

/* %[expr]: when the sample does not exist (or no stream is known), "-" in
 * a log line, else nothing. */
static void out_sample(struct lf_out *o, const struct lf_node *nd, const struct lf_ctx *c)
{
	struct sample smp = { 0 };
	char buf[64];

	if (nd->slot >= 0 && c->use_snap && c->snap && c->snap[nd->slot]) {
		const char *v = c->snap[nd->slot];

		out_str(o, v, strlen(v), 0, nd->opts, 0);
		return;
	}
	/* not kept: evaluated now (what the stream still knows, e.g. the
	 * status of an answer made by sluice) */
	if (!smp_expr_eval(nd->expr, c->strm, &smp)) {
		out_str(o, NULL, 0, 0, nd->opts, c->log);
		return;
	}
	if (smp.type == SMP_T_STR || smp.type == SMP_T_BIN) {
		out_str(o, smp.u.str.p, smp.u.str.len, 0, nd->opts, 0);
		return;
	}
	out_str(o, buf, smp_to_text(&smp, buf, sizeof(buf)), 0, nd->opts, 0);
}

size_t lf_render(const struct lf_expr *e, const struct lf_ctx *c, char *out, size_t size)
{
	const char *text;
	struct lf_out o;
	int last_sep = 1;   /* no space at the start of a line */

	if (!size)
		return 0;
	if (!e->nodes) {
		*out = '\0';
		return 0;
	}
	text = (const char *)(e->nodes + e->n);
	o.p = out;
	o.end = out + size - 1;
	for (int i = 0; i < e->n && o.p < o.end; i++) {
		const struct lf_node *nd = &e->nodes[i];

		switch (nd->type) {
		case LF_T_SEP:
			/* A space only after something: a field that left
			 * itself out does not leave a double space. */
			if (!last_sep) {
				out_chr(&o, ' ');
				last_sep = 1;
			}
			break;
		case LF_T_TEXT:
			out_mem(&o, text + nd->off, nd->len);
			last_sep = 0;
			break;
		case LF_T_SAMPLE:
			out_sample(&o, nd, c);
			last_sep = 0;
			break;
		default:
			if (lf_render_var(&o, nd, c))
				last_sep = 0;
			break;
		}
	}
	*o.p = '\0';
	return (size_t)(o.p - out);
}
