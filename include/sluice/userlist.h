/* Userlists (HAProxy's "userlist" section): users with a crypt(3) hash or
 * an insecure clear-text password, and groups. Used by the http_auth*
 * fetches and checked against HTTP Basic credentials. */
#ifndef SLUICE_USERLIST_H
#define SLUICE_USERLIST_H

#include <stddef.h>

struct ul_group;

struct ul_user {
	struct ul_user   *next;
	char             *name;
	char             *pass;       /* crypt(3) hash, or the clear text when <insecure> */
	int               insecure;   /* "insecure-password" */
	char             *grp_names;  /* "groups a,b" as written, until post-parse */
	struct ul_group **groups;     /* resolved at post-parse, in declaration order */
	int               ngroups;
	char             *file;
	int               line;
};

struct ul_group {
	struct ul_group *next;
	char            *name;
	char            *usr_names;   /* "users a,b" as written, until post-parse */
	char            *file;
	int              line;
};

struct userlist {
	struct userlist *next;
	char            *name;
	struct ul_user  *users;
	struct ul_group *groups;
	char            *file;
	int              line;
};

/* The userlist named <name>, or NULL. */
struct userlist *userlist_find(const char *name);

/* The user <name> (<nlen> bytes) of <ul>, or NULL. */
const struct ul_user *userlist_user(const struct userlist *ul, const char *name, size_t nlen);

/* Whether <pass> (<plen> bytes) is the password of <u>: compared as is
 * for an insecure password, else through crypt_r() with the stored hash
 * as salt. Nothing is cached. Returns 1 when it matches, 0 otherwise. */
int userlist_check(const struct ul_user *u, const char *pass, size_t plen);

/* Releases every userlist (tests, a failed start). */
void userlist_free_all(void);

#endif
