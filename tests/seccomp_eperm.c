/*
 * seccomp_eperm.c: runs a command under a seccomp filter that answers
 * openat2 and faccessat2 with an error, as older container runtimes'
 * default profiles answer system calls they do not know (EPERM), for
 * tests/test_cgi_seccomp.sh.  No libseccomp: a four-instruction BPF
 * program.  Built by the test itself (cc -o ... seccomp_eperm.c).
 *
 *	seccomp_eperm EPERM|EACCES|ENOSYS COMMAND [ARG...]
 */
#include <sys/prctl.h>
#include <sys/syscall.h>

#include <linux/audit.h>
#include <linux/filter.h>
#include <linux/seccomp.h>

#include <errno.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#ifndef SYS_openat2
#define SYS_openat2	437
#endif
#ifndef SYS_faccessat2
#define SYS_faccessat2	439
#endif

int
main(int argc, char *argv[])
{
	unsigned	 e;

	if (argc < 3) {
		fprintf(stderr, "usage: seccomp_eperm EPERM|EACCES|ENOSYS "
		    "COMMAND [ARG...]\n");
		return 2;
	}
	if (strcmp(argv[1], "EPERM") == 0)
		e = EPERM;
	else if (strcmp(argv[1], "EACCES") == 0)
		e = EACCES;
	else if (strcmp(argv[1], "ENOSYS") == 0)
		e = ENOSYS;
	else {
		fprintf(stderr, "seccomp_eperm: %s: not EPERM, EACCES or "
		    "ENOSYS\n", argv[1]);
		return 2;
	}
	struct sock_filter filter[] = {
		/* Only x86-64's numbers are meant: anything else is killed. */
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS,
		    offsetof(struct seccomp_data, arch)),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, AUDIT_ARCH_X86_64, 1, 0),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_KILL_PROCESS),
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS,
		    offsetof(struct seccomp_data, nr)),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_openat2, 2, 0),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_faccessat2, 1, 0),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | (e & 0xffff)),
	};
	struct sock_fprog prog = {
		(unsigned short)(sizeof(filter) / sizeof(filter[0])), filter
	};

	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) == -1 ||
	    prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &prog) == -1) {
		perror("seccomp_eperm: prctl");
		return 2;
	}
	execvp(argv[2], argv + 2);
	perror(argv[2]);
	return 127;
}
