/* Parsers of the application messages some converters read in place:
 * FIX (fix_is_valid, fix_tag_value), MQTT 3.1, 3.1.1 and 5.0 (mqtt_is_valid,
 * mqtt_field_value) and protocol buffers / gRPC (protobuf, ungrpc). Each
 * reads a byte range without allocating, bounds every length it reads
 * against that range, and tells an incomplete message (more bytes may
 * complete it) from an invalid one. */
#ifndef SLUICE_MSGPARSE_H
#define SLUICE_MSGPARSE_H

#include <stddef.h>
#include <stdint.h>

/* Results of the validators and finders. */
#define MSG_INVALID    (-1)  /* malformed, or (finders) absent */
#define MSG_INCOMPLETE 0     /* the message goes on past the bytes given */
#define MSG_OK         1

/* ---- FIX (Financial Information eXchange), "<tag>=<value>\x01" fields ---- */

/* Whether <p> (<len> bytes) starts with a valid FIX message: BeginString
 * (8) first with FIX.4.0 to FIX.4.4 or FIXT.1.1, BodyLength (9) second and
 * equal to the body's length, MsgType (35) third, every tag numeric, every
 * value non-empty, CheckSum (10) last with the right sum. Bytes after it
 * are not read. Returns MSG_OK, MSG_INCOMPLETE or MSG_INVALID. */
int fix_validate(const char *p, size_t len);

/* The value of the first field with tag <tag> of the first message in
 * <p> (<len> bytes), not validated: MSG_OK with [*v, *v + *vlen);
 * MSG_INCOMPLETE when the bytes end before the tag or CheckSum is seen;
 * MSG_INVALID when the tag is not in the message or a field on the way is
 * malformed. */
int fix_tag_find(const char *p, size_t len, unsigned tag, const char **v, size_t *vlen);

/* ---- MQTT ---- */

/* Packet types of MQTT's fixed header. */
#define MQTT_CONNECT 1
#define MQTT_CONNACK 2

/* Fields mqtt_field_value reads, besides v5 property identifiers
 * (1..255, which are MQTT_FIELD_PROP + id). */
enum mqtt_field {
	MQTT_FIELD_FLAGS = 1,
	MQTT_FIELD_PROTO_NAME,
	MQTT_FIELD_PROTO_VERSION,
	MQTT_FIELD_CLIENT_ID,
	MQTT_FIELD_WILL_TOPIC,
	MQTT_FIELD_WILL_PAYLOAD,
	MQTT_FIELD_USERNAME,
	MQTT_FIELD_PASSWORD,
	MQTT_FIELD_KEEPALIVE,
	MQTT_FIELD_REASON_CODE,
	MQTT_FIELD_PROP = 256,
};

/* A field's value: an integer, or bytes of the packet. */
struct mqtt_val {
	int         is_int;
	uint32_t    num;
	const char *p;
	size_t      len;
};

/* Validates the MQTT packet at the start of <p> (<len> bytes): a CONNECT
 * (protocol MQTT 3.1 "MQIsdp" v3, 3.1.1 or 5.0 "MQTT" v4/v5) or a CONNACK
 * (3.1.1 or 5.0 form) with every length, flag and property checked.
 * <version> is the protocol version to read a CONNACK with (4 or 5; 0: 4
 * when its remaining length is 2, else 5). Returns MSG_OK, MSG_INCOMPLETE
 * or MSG_INVALID; with MSG_OK and <type> not NULL, the packet type. */
int mqtt_validate(const char *p, size_t len, int *type);

/* The value of <field> (enum mqtt_field) in the packet of type <type>
 * (MQTT_CONNECT or MQTT_CONNACK) at the start of <p>. MSG_OK with <*v>,
 * MSG_INCOMPLETE, or MSG_INVALID (another type, malformed, or no such
 * field in that packet). */
int mqtt_field_find(const char *p, size_t len, int type, int field, struct mqtt_val *v);

/* ---- protocol buffers (and gRPC's message framing) ---- */

#define PB_MAX_PATH 16

/* A field's raw value: wire type 0 (varint, in <u64>), 1 (8 bytes), 2
 * (bytes) or 5 (4 bytes); fixed-size values are in <p> too. */
struct pb_val {
	int         wire;
	uint64_t    u64;
	const char *p;
	size_t      len;
};

/* The value of the field at <path> (<n> field numbers, the outer first:
 * "48.59.1") in the protocol buffers message <p> (<len> bytes): each step
 * but the last must be a length-delimited field, read as a message. The
 * first field of that number at each level is taken. Returns MSG_OK with
 * <*v>, or MSG_INVALID when absent or malformed. */
int pb_find(const char *p, size_t len, const uint32_t *path, int n, struct pb_val *v);

/* The first gRPC message of <p> (<len> bytes): 1 byte compressed flag
 * (must be 0), 4 bytes length, the message. MSG_OK with [*m, *m + *mlen),
 * MSG_INCOMPLETE when shorter, MSG_INVALID when compressed. */
int grpc_message(const char *p, size_t len, const char **m, size_t *mlen);

#endif
