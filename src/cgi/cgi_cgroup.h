/*
 * cgi_cgroup.h: a cgroup per CGI program (cgi_cgroup.c), where the daemon
 * may make one: its pids.max caps the tasks of the program and of all it
 * starts, and its member list names them all, wherever they went
 * (setsid, a double fork, their parent gone), so that the reaper ends
 * exactly them.  The daemon finds the place once at start; the reaper
 * makes, empties and removes the groups.
 */
#ifndef CGI_CGROUP_H
#define CGI_CGROUP_H

#include <stddef.h>

#define CGROUP_PATH_MAX	512
#define CGROUP_NAME_MAX	64

/* Where the programs' groups are made: found by cgroup_find(). */
struct cgi_cgroup {
	int	 cgr_v;			/* its hierarchy: 1 or 2; 0: none */
	char	 cgr_dir[CGROUP_PATH_MAX];
	char	 cgr_prefix[CGROUP_NAME_MAX];	/* this daemon's names */
};

/*
 * Finds where this process may make a group with a pids.max for each
 * program: its own cgroup in the unified hierarchy (v2) if that has the
 * pids controller, else its cgroup in a v1 pids hierarchy; either only
 * where it is the hierarchy's root (a host's or a container's) or was
 * delegated (systemd's Delegate=: its "delegate" xattr, or owned by this
 * non-root user), and a group made and removed there as a probe.  In v2
 * a group with processes may not enable a controller for its children:
 * this process then moves into a leaf of its own ("evfcgid") first, as
 * a delegated service must.  Returns 0 with cgr filled, or -1 with why
 * (cgr->cgr_v 0).
 */
int	cgroup_find(struct cgi_cgroup *cgr, char *why, size_t whylen);

/*
 * Makes the group name under dirfd (the cgr_dir opened) with pids.max
 * max, and returns a descriptor of its cgroup.procs (close-on-exec): a
 * process that writes "0" to it moves into the group.  -1 with errno.
 */
int	cgroup_make(int dirfd, const char *name, unsigned long max);

/*
 * SIGKILLs every process in group name, until it has none (a bounded
 * number of rounds: a fork bomb's children appear while it is read).
 * Returns how many were signalled, or -1 when the group is gone.
 */
int	cgroup_kill(int dirfd, const char *name);

/*
 * Ends the group name: its processes SIGKILLed, then the group removed.
 * Returns 0 once it is gone, 1 while it still holds processes (they
 * have not all exited yet: try again later).
 */
int	cgroup_remove(int dirfd, const char *name);

/*
 * Ends every group under dirfd whose name starts with prefix (what a
 * reaper that died left), adding to *killed the processes SIGKILLed.
 * Returns how many could not be removed yet.
 */
int	cgroup_sweep(int dirfd, const char *prefix, int *killed);

#endif /* CGI_CGROUP_H */
