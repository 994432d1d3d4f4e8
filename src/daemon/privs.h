/*
 * privs.h: users and groups by name, and giving up root for good.  No
 * logging, no exits: errors come back as messages, for the daemon to say.
 */
#ifndef PRIVS_H
#define PRIVS_H

#include <sys/types.h>

#include <stddef.h>

/*
 * The user called name (or a decimal uid): its uid and primary group in
 * *uid and *gid.  Returns 0, or -1 with a message in err (errlen bytes).
 */
int	privs_user(const char *name, uid_t *uid, gid_t *gid, char *err,
	    size_t errlen);

/* The group called name (or a decimal gid) in *gid; 0, or -1 with err. */
int	privs_group(const char *name, gid_t *gid, char *err, size_t errlen);

/*
 * Gives up root: supplementary groups to gid alone, then real, effective
 * and saved gid, then uid, each checked, and checks that root cannot be
 * had back.  Needs euid 0.  Returns 0, or -1 with err: the process must
 * then not go on (it may be half-way).
 */
int	privs_drop(uid_t uid, gid_t gid, char *err, size_t errlen);

#endif /* PRIVS_H */
