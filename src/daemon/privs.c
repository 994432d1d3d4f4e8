/*
 * privs.c: users and groups by name, and dropping root (see privs.h).
 */
#include <sys/types.h>

#include <errno.h>
#include <grp.h>
#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "privs.h"

static int	decimal_id(const char *, unsigned long *);

/* A plain decimal id below 2^31-1 in *id: 0, else -1. */
static int
decimal_id(const char *s, unsigned long *id)
{
	char	*end;

	if (*s < '0' || *s > '9')
		return -1;
	errno = 0;
	*id = strtoul(s, &end, 10);
	if (errno != 0 || *end != '\0' || *id >= 0x7fffffffUL)
		return -1;
	return 0;
}

int
privs_user(const char *name, uid_t *uid, gid_t *gid, char *err,
    size_t errlen)
{
	struct passwd	*pw;
	unsigned long	 id;

	errno = 0;
	if ((pw = getpwnam(name)) == NULL && decimal_id(name, &id) == 0)
		pw = getpwuid((uid_t)id);
	if (pw == NULL) {
		snprintf(err, errlen, "%s: no such user%s%s", name,
		    errno != 0 ? ": " : "", errno != 0 ? strerror(errno) : "");
		return -1;
	}
	*uid = pw->pw_uid;
	*gid = pw->pw_gid;
	return 0;
}

int
privs_group(const char *name, gid_t *gid, char *err, size_t errlen)
{
	struct group	*gr;
	unsigned long	 id;

	errno = 0;
	if ((gr = getgrnam(name)) == NULL && decimal_id(name, &id) == 0)
		gr = getgrgid((gid_t)id);
	if (gr == NULL) {
		snprintf(err, errlen, "%s: no such group%s%s", name,
		    errno != 0 ? ": " : "", errno != 0 ? strerror(errno) : "");
		return -1;
	}
	*gid = gr->gr_gid;
	return 0;
}

int
privs_drop(uid_t uid, gid_t gid, char *err, size_t errlen)
{
	uid_t	 ru, eu, su;
	gid_t	 rg, eg, sg;

	if (geteuid() != 0) {
		snprintf(err, errlen, "only root can change user (running as "
		    "uid %u)", (unsigned)geteuid());
		return -1;
	}
	if (setgroups(1, &gid) == -1) {
		snprintf(err, errlen, "setgroups: %s", strerror(errno));
		return -1;
	}
	if (setresgid(gid, gid, gid) == -1) {
		snprintf(err, errlen, "setresgid %u: %s", (unsigned)gid,
		    strerror(errno));
		return -1;
	}
	if (setresuid(uid, uid, uid) == -1) {
		snprintf(err, errlen, "setresuid %u: %s", (unsigned)uid,
		    strerror(errno));
		return -1;
	}
	if (getresuid(&ru, &eu, &su) == -1 || ru != uid || eu != uid ||
	    su != uid || getresgid(&rg, &eg, &sg) == -1 || rg != gid ||
	    eg != gid || sg != gid) {
		snprintf(err, errlen, "the ids did not change as asked");
		return -1;
	}
	/* Root must be gone for good, not just out of sight. */
	if (uid != 0 && (setuid(0) != -1 || seteuid(0) != -1)) {
		snprintf(err, errlen, "root could be regained after the "
		    "drop");
		return -1;
	}
	if (gid != 0 && uid != 0 && (setgid(0) != -1 || setegid(0) != -1)) {
		snprintf(err, errlen, "group root could be regained after "
		    "the drop");
		return -1;
	}
	return 0;
}
