/* The TLS settings of a "server" line, shared by the TLS files of proxy/
 * (ssl_opts.c parses them, ssl_cfg.c builds and uses their context). */
#ifndef SLUICE_SSL_SRV_H
#define SLUICE_SSL_SRV_H

#include <stddef.h>

#include <openssl/ssl.h>

struct server;
struct smp_expr;

/* A protocol list in wire format (alpn, npn, check-alpn). */
struct ssl_protos {
	unsigned char *p;
	size_t         len;
};

/* TLS state of a "server ... ssl" line. */
struct ssl_srv {
	const struct server *owner;     /* default-server copies share it until they change it */
	int              enabled;       /* ssl / no-ssl ("set server ssl" changes it) */
	int              check_tls;     /* its checks on its own address use TLS (start-up's "ssl") */
	int              verify;        /* SSL_VERIFY_PEER / NONE; -1: ssl-server-verify */
	char            *ca_file, *crl_file, *crt, *verifyhost;
	char            *ciphers, *ciphersuites, *curves, *sigalgs, *client_sigalgs;
	int              min_ver, max_ver;
	unsigned         no_ver;        /* SSL_BO_NO_* */
	unsigned         flags;         /* SSL_BO_F_NO_TICKETS, SSL_BO_F_ALLOW_0RTT */
	struct ssl_protos alpn, npn, check_alpn;
	struct smp_expr *sni;
	char            *sni_str;       /* as written */
	int              no_reuse;      /* no-ssl-reuse */
	int              check_ssl;     /* check-ssl */
	char            *check_sni;     /* check-sni */
	SSL_CTX         *ctx;
	SSL_SESSION     *sess;          /* last session, for resumption */
};

/* A server's own copy of the TLS settings it got from default-server. */
struct ssl_srv *ssl_srv_dup(const struct ssl_srv *from, const struct server *srv);

#endif
