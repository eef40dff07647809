/* Unit tests for the SPOP 2.0 codec (src/core/spop.c): varints and typed
 * data round trips, frames and ACK actions cut at every byte, lying
 * lengths, and the room checks of the writer. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>

#include <sluice/spop.h>

static void test_varint_round_trip(void **state)
{
	static const uint64_t vals[] = { 0, 1, 239, 240, 241, 2287, 2288, 264431, 264432,
					 33818863, 33818864, UINT32_MAX, (uint64_t)1 << 40,
					 UINT64_MAX / 3 };
	unsigned char buf[16];

	for (size_t k = 0; k < sizeof(vals) / sizeof(vals[0]); k++) {
		struct spop_wr w = { buf, sizeof(buf), 0, 0 };
		uint64_t v;
		size_t i = 0;

		spop_put_varint(&w, vals[k]);
		assert_int_equal(w.err, 0);
		assert_int_equal(spop_get_varint(buf, w.n, &i, &v), 0);
		assert_true(v == vals[k]);
		assert_int_equal(i, w.n);
		/* cut anywhere: never read past the end, never succeed */
		for (size_t cut = 0; cut < w.n; cut++) {
			i = 0;
			assert_int_equal(spop_get_varint(buf, cut, &i, &v), -1);
		}
	}
	/* the encodings SPOE.txt gives as examples */
	{
		struct spop_wr w = { buf, sizeof(buf), 0, 0 };

		spop_put_varint(&w, 240);
		assert_int_equal(w.n, 2);
		assert_int_equal(buf[0], 0xf0);
		assert_int_equal(buf[1], 0x00);
	}
}

static void test_typed_round_trip(void **state)
{
	struct spop_val in[9] = {
		{ .type = SPOP_T_NULL },
		{ .type = SPOP_T_BOOL, .v.b = 1 },
		{ .type = SPOP_T_INT32, .v.i = -5 },
		{ .type = SPOP_T_UINT32, .v.u = 4000000000u },
		{ .type = SPOP_T_INT64, .v.i = -((int64_t)1 << 40) },
		{ .type = SPOP_T_UINT64, .v.u = (uint64_t)1 << 63 },
		{ .type = SPOP_T_IPV4, .v.ip = { 10, 0, 0, 1 } },
		{ .type = SPOP_T_STRING, .v.str = { "hello", 5 } },
		{ .type = SPOP_T_BINARY, .v.str = { "\0\1\2", 3 } },
	};
	unsigned char buf[256];
	struct spop_wr w = { buf, sizeof(buf), 0, 0 };
	size_t i = 0;

	for (int k = 0; k < 9; k++)
		spop_put_val(&w, &in[k]);
	assert_int_equal(w.err, 0);
	for (int k = 0; k < 9; k++) {
		struct spop_val v;

		assert_int_equal(spop_get_val(buf, w.n, &i, &v), 0);
		assert_int_equal(v.type, in[k].type);
		switch (v.type) {
		case SPOP_T_BOOL:
			assert_int_equal(v.v.b, 1);
			break;
		case SPOP_T_INT32:
		case SPOP_T_INT64:
			assert_true(v.v.i == in[k].v.i);
			break;
		case SPOP_T_UINT32:
		case SPOP_T_UINT64:
			assert_true(v.v.u == in[k].v.u);
			break;
		case SPOP_T_IPV4:
			assert_memory_equal(v.v.ip, in[k].v.ip, 4);
			break;
		case SPOP_T_STRING:
		case SPOP_T_BINARY:
			assert_int_equal(v.v.str.len, in[k].v.str.len);
			assert_memory_equal(v.v.str.p, in[k].v.str.p, v.v.str.len);
			break;
		default:
			break;
		}
	}
	assert_int_equal(i, w.n);
	/* an unknown type (10..15) is refused */
	buf[0] = 12;
	i = 0;
	{
		struct spop_val v;

		assert_int_equal(spop_get_val(buf, 4, &i, &v), -1);
	}
}

/* An ACK with two actions. */
static size_t make_ack(unsigned char *buf, size_t size, uint64_t sid, uint64_t fid)
{
	struct spop_wr w = { buf, size, 0, 0 };
	size_t start = spop_frame_begin(&w, SPOP_F_ACK, SPOP_FL_FIN, sid, fid);
	struct spop_val v = { .type = SPOP_T_UINT32, .v.u = 42 };

	spop_put_byte(&w, SPOP_ACT_SET_VAR);
	spop_put_byte(&w, 3);
	spop_put_byte(&w, 2);
	spop_put_str(&w, "score");
	spop_put_val(&w, &v);
	spop_put_byte(&w, SPOP_ACT_UNSET_VAR);
	spop_put_byte(&w, 2);
	spop_put_byte(&w, 1);
	spop_put_str(&w, "old");
	assert_int_equal(spop_frame_end(&w, start), 0);
	return w.n;
}

static void test_frame_cut_at_every_byte(void **state)
{
	unsigned char buf[128];
	size_t n = make_ack(buf, sizeof(buf), 300, 7);
	struct spop_frame f;
	struct spop_action a;
	size_t i = 0;

	for (size_t cut = 0; cut < n; cut++)
		assert_int_equal(spop_frame_parse(buf, cut, SPOP_FRAME_MAX, &f), 0);
	assert_int_equal(spop_frame_parse(buf, n, SPOP_FRAME_MAX, &f), (long)n);
	assert_int_equal(f.type, SPOP_F_ACK);
	assert_int_equal(f.flags, SPOP_FL_FIN);
	assert_int_equal(f.stream_id, 300);
	assert_int_equal(f.frame_id, 7);
	assert_int_equal(spop_ack_next(f.pl, f.pl_len, &i, &a), 1);
	assert_int_equal(a.type, SPOP_ACT_SET_VAR);
	assert_int_equal(a.scope, 2);
	assert_int_equal(a.name_len, 5);
	assert_memory_equal(a.name, "score", 5);
	assert_int_equal(a.val.type, SPOP_T_UINT32);
	assert_int_equal(a.val.v.u, 42);
	assert_int_equal(spop_ack_next(f.pl, f.pl_len, &i, &a), 1);
	assert_int_equal(a.type, SPOP_ACT_UNSET_VAR);
	assert_int_equal(a.scope, 1);
	assert_int_equal(spop_ack_next(f.pl, f.pl_len, &i, &a), 0);
	/* the payload cut anywhere inside an action is malformed, between two
	 * actions it ends cleanly */
	for (size_t cut = 0; cut < f.pl_len; cut++) {
		int r;

		i = 0;
		while ((r = spop_ack_next(f.pl, cut, &i, &a)) == 1)
			;
		assert_true(r == -1 || (r == 0 && i == cut));
	}
	/* two frames back to back: the first is taken alone */
	memcpy(buf + n, buf, n);
	assert_int_equal(spop_frame_parse(buf, 2 * n, SPOP_FRAME_MAX, &f), (long)n);
}

static void test_frame_lies(void **state)
{
	unsigned char buf[64] = { 0x7f, 0xff, 0xff, 0xff, 103 };
	struct spop_frame f;
	struct spop_action a;
	size_t i = 0;

	/* a length beyond the limit: refused before anything arrives */
	assert_int_equal(spop_frame_parse(buf, 5, SPOP_FRAME_MAX, &f), -1);
	/* too short to hold the header */
	memcpy(buf, "\0\0\0\3\x67\0\0", 7);
	assert_int_equal(spop_frame_parse(buf, 7, SPOP_FRAME_MAX, &f), -2);
	/* ids that run past the frame's own length */
	memcpy(buf, "\0\0\0\7\x67\0\0\0\1\xff\xff\xff", 12);
	assert_int_equal(spop_frame_parse(buf, 12, SPOP_FRAME_MAX, &f), -2);
	/* set-var with a wrong argument count */
	memcpy(buf, "\1\2\2\1x", 5);
	assert_int_equal(spop_ack_next(buf, 5, &i, &a), -1);
	/* a string whose length lies */
	memcpy(buf, "\1\3\2\x50x", 5);
	i = 0;
	assert_int_equal(spop_ack_next(buf, 5, &i, &a), -1);
	/* an unknown action: its arguments are skipped */
	memcpy(buf, "\x09\2\x03\x05\x08\1z", 7);
	i = 0;
	assert_int_equal(spop_ack_next(buf, 7, &i, &a), 1);
	assert_int_equal(a.type, 9);
	assert_int_equal(i, 7);
}

static void test_hello_and_kv(void **state)
{
	unsigned char buf[256];
	struct spop_wr w = { buf, sizeof(buf), 0, 0 };
	struct spop_frame f;
	struct spop_kv kv = { 0 };
	struct spop_val v;

	assert_int_equal(spop_hello_build(&w, 16380, "", "engine-1", 0), 0);
	assert_true(spop_frame_parse(buf, w.n, SPOP_FRAME_MAX, &f) > 0);
	assert_int_equal(f.type, SPOP_F_HAPROXY_HELLO);
	assert_int_equal(spop_read_kv(f.pl, f.pl_len, &kv), 0);
	assert_int_equal(kv.max_frame, 16380);
	assert_non_null(kv.caps);
	/* "supported-versions" is not "version": the check says 5 */
	assert_int_equal(spop_hello_check(&kv, SPOP_FRAME_MAX), 5);
	/* an AGENT-HELLO */
	w = (struct spop_wr){ buf, sizeof(buf), 0, 0 };
	spop_put_str(&w, "version");
	v = (struct spop_val){ .type = SPOP_T_STRING, .v.str = { "2.0", 3 } };
	spop_put_val(&w, &v);
	spop_put_str(&w, "max-frame-size");
	v = (struct spop_val){ .type = SPOP_T_UINT32, .v.u = 1024 };
	spop_put_val(&w, &v);
	memset(&kv, 0, sizeof(kv));
	assert_int_equal(spop_read_kv(buf, w.n, &kv), 0);
	assert_int_equal(spop_hello_check(&kv, SPOP_FRAME_MAX), 0);
	assert_int_equal(spop_hello_check(&kv, 512), 9);
	for (size_t cut = 1; cut < w.n; cut++) {
		memset(&kv, 0, sizeof(kv));
		if (spop_read_kv(buf, cut, &kv) == 0)
			assert_int_not_equal(spop_hello_check(&kv, SPOP_FRAME_MAX), 0);
	}
	/* a DISCONNECT names its status */
	w = (struct spop_wr){ buf, sizeof(buf), 0, 0 };
	assert_int_equal(spop_disconnect_build(&w, 2), 0);
	assert_true(spop_frame_parse(buf, w.n, SPOP_FRAME_MAX, &f) > 0);
	memset(&kv, 0, sizeof(kv));
	assert_int_equal(spop_read_kv(f.pl, f.pl_len, &kv), 0);
	assert_int_equal(kv.status, 2);
	assert_memory_equal(kv.message, "a timeout occurred", kv.message_len);
}

static void test_writer_room(void **state)
{
	unsigned char buf[8];
	struct spop_wr w = { buf, sizeof(buf), 0, 0 };
	size_t start = spop_frame_begin(&w, SPOP_F_NOTIFY, SPOP_FL_FIN, 1, 1);

	spop_put_str(&w, "a message name longer than the room");
	assert_int_equal(w.err, 1);
	assert_int_equal(spop_frame_end(&w, start), -1);
	assert_true(w.n <= sizeof(buf));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_varint_round_trip),
		cmocka_unit_test(test_typed_round_trip),
		cmocka_unit_test(test_frame_cut_at_every_byte),
		cmocka_unit_test(test_frame_lies),
		cmocka_unit_test(test_hello_and_kv),
		cmocka_unit_test(test_writer_room),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
