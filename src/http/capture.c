/* The capture-req(<id>) and capture-res(<id>) converters (sample.h): the
 * sample is stored in the frontend's request (response) capture slot <id>,
 * made by "capture request|response header", "declare capture" or
 * "http-request capture ... len", and goes on unchanged. Mode http only:
 * a stream without an HTTP transaction has no such slots. */
#include <string.h>

#include <sluice/common.h>
#include <sluice/http_ana.h>
#include <sluice/proxy.h>
#include <sluice/sample.h>
#include <sluice/str.h>
#include <sluice/stream.h>

static int conv_check_capture(struct smp_arg *a, char **err, const void *priv)
{
	if (a[0].sint < 0 || a[0].sint > 65535) {
		*err = str_fmt("capture slot %lld out of range (0 to 65535)", (long long)a[0].sint);
		return -1;
	}
	return 0;
}

/* Stores the string of <smp> (cut to the slot's length) in slot a[0] of
 * direction <res>; no value when there is no such slot, as HAProxy. */
static int conv_capture(const struct smp_arg *a, struct sample *smp, int res)
{
	struct stream *s = smp->strm;
	const struct http_px *hp;
	int n;

	if (!s || !s->txn || !s->fe)
		return 0;
	hp = http_px_of(s->fe);
	n = res ? hp->n_res_cap : hp->n_req_cap;
	if (a[0].sint >= n)
		return 0;
	http_capture_set(s, res, (int)a[0].sint, smp->u.str.p, smp->u.str.len);
	return 1;
}

static int conv_capture_req(const struct smp_arg *a, struct sample *smp, const void *priv)
{
	return conv_capture(a, smp, 0);
}

static int conv_capture_res(const struct smp_arg *a, struct sample *smp, const void *priv)
{
	return conv_capture(a, smp, 1);
}

static const struct smp_conv_kw capture_convs[] = {
	{ "capture-req", conv_capture_req, { ARGT_SINT }, 1, SMP_T_STR, SMP_T_STR,
	  conv_check_capture, NULL },
	{ "capture-res", conv_capture_res, { ARGT_SINT }, 1, SMP_T_STR, SMP_T_STR,
	  conv_check_capture, NULL },
};

SLUICE_INIT(capture_conv_register)
{
	smp_register_convs(capture_convs, ARRAY_SIZE(capture_convs));
}
