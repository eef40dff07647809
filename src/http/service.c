/* Registry of the services answered inside sluice (http_service.h). */
#include <string.h>

#include <sluice/http_service.h>

static struct http_service *services;

void http_service_register(struct http_service *svc)
{
	svc->next = services;
	services = svc;
}

const struct http_service *http_service_find(const char *name)
{
	for (const struct http_service *s = services; s; s = s->next)
		if (strcmp(s->name, name) == 0)
			return s;
	return NULL;
}

const struct http_service *http_service_match(const struct proxy *px, const struct http_head *h)
{
	for (const struct http_service *s = services; s; s = s->next)
		if (s->match && s->match(px, h))
			return s;
	return NULL;
}
