/* libFuzzer harness for the MQTT parser (msgparse.h: mqtt_validate,
 * mqtt_field_find): any bytes, every field and property of CONNECT and
 * CONNACK; aborts when a value lies outside the input, a field is found in
 * a packet said to be invalid, or a prefix of a valid packet is said to be
 * invalid. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <sluice/msgparse.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void field(const char *p, size_t size, int type, int f, int valid)
{
	struct mqtt_val v;
	int r = mqtt_field_find(p, size, type, f, &v);

	if (r == MSG_OK && (valid != MSG_OK ||
			    (!v.is_int && (v.p < p || v.p + v.len > p + size))))
		abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *p = malloc(size ? size : 1);
	int r, type = 0;

	if (!p)
		return 0;
	memcpy(p, data, size);
	r = mqtt_validate(p, size, &type);
	if (r == MSG_OK) {
		if (type != MQTT_CONNECT && type != MQTT_CONNACK)
			abort();
		for (size_t k = 0; k < size; k += 1 + size / 8)
			if (mqtt_validate(p, k, NULL) == MSG_INVALID)
				abort();
	}
	for (int f = MQTT_FIELD_FLAGS; f <= MQTT_FIELD_REASON_CODE; f++) {
		field(p, size, MQTT_CONNECT, f, r);
		field(p, size, MQTT_CONNACK, f, r);
	}
	for (int id = 0; id < 45; id++) {
		field(p, size, MQTT_CONNECT, MQTT_FIELD_PROP + id, r);
		field(p, size, MQTT_CONNACK, MQTT_FIELD_PROP + id, r);
	}
	free(p);
	return 0;
}
