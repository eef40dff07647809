/* The PROXY protocol v2 TLVs a client sent that the fetches fc_pp_authority
 * and fc_pp_unique_id read: kept with the stream only when a configuration
 * uses those fetches (a small block per connection that sent them). */
#include <stdlib.h>
#include <string.h>

#include <sluice/common.h>
#include <sluice/proxyproto.h>
#include <sluice/sample.h>
#include <sluice/str.h>
#include <sluice/stream.h>

struct stream_pp {
	uint16_t alen, ulen;   /* authority, then unique id, in <data> */
	char     data[];
};

/* Set at parse time by the fetches' rows: whether any configuration reads
 * the TLVs (the process keeps nothing otherwise). */
static int pp_wanted;

void stream_pp_keep(struct stream *s, const char *hdr, size_t len)
{
	const unsigned char *a = NULL, *u = NULL;
	size_t al = 0, ul = 0;
	struct stream_pp *pp;

	if (!pp_wanted || s->pp)
		return;
	pp_v2_tlv_find((const unsigned char *)hdr, len, PP2_TYPE_AUTHORITY, &a, &al);
	pp_v2_tlv_find((const unsigned char *)hdr, len, PP2_TYPE_UNIQUE_ID, &u, &ul);
	if (!a && !u)
		return;
	pp = malloc(sizeof(*pp) + al + ul);
	if (!pp)
		return;   /* the fetches give nothing, the connection goes on */
	pp->alen = (uint16_t)al;
	pp->ulen = (uint16_t)ul;
	if (al)
		memcpy(pp->data, a, al);
	if (ul)
		memcpy(pp->data + al, u, ul);
	s->pp = pp;
}

void stream_pp_free(struct stream *s)
{
	free(s->pp);
	s->pp = NULL;
}

/* fc_pp_authority, fc_pp_unique_id (row .priv non-NULL): the TLV's value,
 * no value when the client sent none. */
static int fetch_fc_pp(const struct smp_arg *a, struct sample *smp, struct stream *s,
		       const void *priv)
{
	const struct stream_pp *pp = s ? s->pp : NULL;

	(void)a;
	if (!pp || !(priv ? pp->ulen : pp->alen))
		return 0;
	smp->type = SMP_T_STR;
	smp->flags |= SMP_F_CONST;
	smp->u.str.p = pp->data + (priv ? pp->alen : 0);
	smp->u.str.len = priv ? pp->ulen : pp->alen;
	return 1;
}

/* A configuration reads the TLVs: connections keep them from now on. */
static int check_fc_pp(struct smp_arg *args, char **err, const void *priv)
{
	(void)args;
	(void)err;
	(void)priv;
	pp_wanted = 1;
	return 0;
}

static const struct smp_fetch_kw stream_pp_fetches[] = {
	{ "fc_pp_authority", fetch_fc_pp, { 0 }, 0, SMP_T_STR, SMP_USE_L4, check_fc_pp, NULL },
	{ "fc_pp_unique_id", fetch_fc_pp, { 0 }, 0, SMP_T_STR, SMP_USE_L4, check_fc_pp, "uid" },
};

SLUICE_INIT(stream_pp_register)
{
	smp_register_fetches(stream_pp_fetches, ARRAY_SIZE(stream_pp_fetches));
}
