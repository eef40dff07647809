/* libFuzzer harness for the peers protocol decoder (src/proxy/peers_msg.c),
 * fed what a peer session reads: a hello (or a status line), then messages.
 * No crash or overread on any input; a framed message never claims more
 * bytes than it was given; a definition or an update that decodes is
 * encoded again and decodes back to the same fields. */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <sluice/peers_msg.h>
#include <sluice/str.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* Encodes <d> (every type it has, arrays with their sizes) and checks it
 * decodes back. */
static void check_define(const struct peer_tdef *d)
{
	struct peer_tdef e = *d, r;
	struct dstr out = { 0 };
	struct peer_msg m;
	int big;

	if (peer_msg_put_define(&out, &e) == -1)
		__builtin_trap();
	if (peer_msg_parse((const unsigned char *)out.p, out.len, &m, &big) != (int)out.len ||
	    peer_tdef_decode(m.body, m.len, &r) != 0 || r.id != e.id || r.nlen != e.nlen ||
	    memcmp(r.name, e.name, e.nlen) || r.key_type != e.key_type ||
	    r.key_len != e.key_len || r.data != e.data || r.expire != e.expire ||
	    memcmp(r.nelem, e.nelem, sizeof(r.nelem)) || memcmp(r.period, e.period, sizeof(r.period)))
		__builtin_trap();
	dstr_free(&out);
}

/* Encodes update <u> of <d> (every type: a dictionary entry goes as an
 * empty one) and decodes it back. */
static void check_update(const struct peer_tdef *d, const struct peer_upd *u)
{
	struct peer_tdef e = *d;
	static struct peer_upd r;
	struct dstr out = { 0 };
	struct peer_msg m;
	int big;

	if (peer_msg_put_update(&out, &e, (struct peer_upd *)u) == -1)
		__builtin_trap();
	if (peer_msg_parse((const unsigned char *)out.p, out.len, &m, &big) != (int)out.len ||
	    peer_upd_decode(m.type, m.body, m.len, &e, &r) != 0 || r.klen != u->klen ||
	    (u->klen && memcmp(r.key, u->key, u->klen)))
		__builtin_trap();
	for (unsigned bit = 0; bit < PEER_DT_KNOWN; bit++)
		if ((e.data >> bit & 1) && memcmp(&r.val[bit], &u->val[bit], sizeof(r.val[bit])))
			__builtin_trap();
	if (memcmp(r.arr, u->arr, sizeof(r.arr)))
		__builtin_trap();
	dstr_free(&out);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	unsigned char *b = malloc(size ? size : 1);
	struct peer_tdef def;
	int have_def = 0;
	size_t off = 0;
	struct peer_hello h;
	int st, code, used;

	memcpy(b, data, size);
	/* a session starts with a hello (accepted) or a status (connected) */
	used = peer_hello_parse((const char *)b, size, &h, &st);
	if (used <= 0)
		used = peer_status_parse((const char *)b, size, &code);
	if (used > (int)size)
		__builtin_trap();
	if (used > 0)
		off = (size_t)used;
	while (off < size) {
		struct peer_msg m;
		struct peer_upd u;
		uint64_t tid;
		uint32_t upd;
		int big;

		used = peer_msg_parse(b + off, size - off, &m, &big);
		if (used <= 0)
			break;
		if ((size_t)used > size - off || m.len > PEER_MSG_MAX)
			__builtin_trap();
		off += (size_t)used;
		if (m.cls != PEER_C_STKT)
			continue;
		switch (m.type) {
		case PEER_STKT_DEFINE:
			if (peer_tdef_decode(m.body, m.len, &def) == 0) {
				have_def = 1;
				check_define(&def);
			} else {
				have_def = 0;
			}
			break;
		case PEER_STKT_UPDATE:
		case PEER_STKT_INCUPDATE:
		case PEER_STKT_UPDATE_TIMED:
		case PEER_STKT_INCUPDATE_TIMED:
			if (have_def && peer_upd_decode(m.type, m.body, m.len, &def, &u) == 0) {
				if (u.klen > m.len)
					__builtin_trap();
				check_update(&def, &u);
			}
			break;
		case PEER_STKT_ACK:
			peer_ack_decode(m.body, m.len, &tid, &upd);
			break;
		case PEER_STKT_SWITCH:
			peer_switch_decode(m.body, m.len, &tid);
			break;
		}
	}
	free(b);
	return 0;
}
