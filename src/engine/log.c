/*
 * log.c: levelled logging to stderr, a file or syslog (see log.h).
 */
#include <sys/types.h>
#include <sys/stat.h>

#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <syslog.h>
#include <time.h>
#include <unistd.h>

#include "evfcgi.h"
#include "log.h"

static const char	*log_ident = "evfcgid";
static const char	*log_path;
static int		 log_level = LOG_INFO;
static int		 log_syslog;
static int		 log_fd = STDERR_FILENO;
static char		 log_ident_buf[64];
static evfcgi_log_fn	 log_hook;	/* evfcgi_set_log(): takes every line */
static void		*log_hook_arg;
static char		 log_why[128];

static const char	*prio_name(int);
static size_t		 log_escape(char *, size_t, const char *);

int
log_init(const char *ident, int level, int use_syslog, const char *path)
{
	log_ident = ident;
	log_level = level;
	log_syslog = use_syslog;
	log_path = use_syslog ? NULL : path;
	if (log_syslog)
		openlog(ident, LOG_PID | LOG_NDELAY, LOG_DAEMON);
	return log_reopen();
}

/*
 * Opened as root at start: O_NOFOLLOW and the checks on the descriptor
 * keep a symbolic link, a FIFO, a device or a second hard link to some
 * other file planted at path from receiving the log.
 */
int
log_reopen(void)
{
	struct stat	 st;
	int		 fd;

	if (log_path == NULL)
		return 0;
	fd = open(log_path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC |
	    O_NOFOLLOW | O_NONBLOCK | O_NOCTTY, 0640);
	if (fd == -1) {
		/* ENXIO: a FIFO nobody reads (O_NONBLOCK), or a device. */
		snprintf(log_why, sizeof(log_why), "%s", errno == ELOOP ?
		    "a symbolic link (refused)" : errno == ENXIO ?
		    "not a regular file (refused)" : strerror(errno));
		return -1;
	}
	if (fstat(fd, &st) == -1) {
		snprintf(log_why, sizeof(log_why), "%s", strerror(errno));
		close(fd);
		return -1;
	}
	if (!S_ISREG(st.st_mode) || st.st_nlink != 1) {
		snprintf(log_why, sizeof(log_why), "%s", !S_ISREG(st.st_mode) ?
		    "not a regular file (refused)" :
		    "a file with more than one link (refused)");
		close(fd);
		errno = EINVAL;
		return -1;
	}
	if (log_fd != STDERR_FILENO)
		close(log_fd);
	log_fd = fd;
	return 0;
}

const char *
log_file_error(void)
{
	return log_why;
}

int
log_enabled(int prio)
{
	return prio <= log_level;
}

static const char *
prio_name(int prio)
{
	switch (prio) {
	case LOG_ERR:
		return "error";
	case LOG_WARNING:
		return "warning";
	case LOG_INFO:
		return "info";
	default:
		return "debug";
	}
}

/*
 * Copies the message msg into out (outlen bytes, NUL-terminated), with
 * '\\', '\n', '\r' and '\t' as two characters and the other control
 * bytes and all bytes from 0x7f up as \xHH, as the access log does: a
 * request's text or a program's stderr cannot start a line of its own,
 * not even for a reader that takes U+0085 or U+2028 for a line break, nor
 * move a terminal's cursor with a C1 control (U+009B).
 */
static size_t
log_escape(char *out, size_t outlen, const char *msg)
{
	static const char	 hex[] = "0123456789abcdef";
	const unsigned char	*p = (const unsigned char *)msg;
	size_t			 o = 0;
	char			 c;

	for (; *p != '\0'; p++) {
		c = *p == '\n' ? 'n' : *p == '\r' ? 'r' : *p == '\t' ? 't' :
		    *p == '\\' ? '\\' : 0;
		if (c != 0 || *p < 0x20 || *p >= 0x7f) {
			if (o + (c != 0 ? 2 : 4) >= outlen)
				break;
			out[o++] = '\\';
			if (c != 0)
				out[o++] = c;
			else {
				out[o++] = 'x';
				out[o++] = hex[*p >> 4];
				out[o++] = hex[*p & 0xf];
			}
		} else {
			if (o + 1 >= outlen)
				break;
			out[o++] = (char)*p;
		}
	}
	out[o] = '\0';
	return o;
}

void
log_msg(int prio, const char *fmt, ...)
{
	char		 msg[1024], line[1024], when[32];
	struct tm	 tm;
	time_t		 now;
	va_list		 ap;
	int		 n, saved = errno;
	size_t		 m;

	if (!log_enabled(prio))
		return;
	va_start(ap, fmt);
	(void)vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	if (log_hook != NULL || log_syslog) {
		(void)log_escape(line, sizeof(line), msg);
		if (log_hook != NULL)
			log_hook(prio, line, log_hook_arg);
		else
			syslog(prio, "%s", line);
		errno = saved;
		return;
	}
	now = time(NULL);
	gmtime_r(&now, &tm);
	strftime(when, sizeof(when), "%Y-%m-%dT%H:%M:%SZ", &tm);
	n = snprintf(line, sizeof(line), "%s %s[%d] %s: ", when, log_ident,
	    (int)getpid(), prio_name(prio));
	m = log_escape(line + n, sizeof(line) - (size_t)n - 1, msg);
	line[(size_t)n + m] = '\n';
	/* One write per line keeps lines whole when several processes log. */
	(void)!write(log_fd, line, (size_t)n + m + 1);
	errno = saved;
}

int
evfcgi_set_log(const char *ident, int level, evfcgi_log_fn fn, void *arg)
{
	if (level < -1 || level > LOG_DEBUG ||
	    (ident != NULL && strlen(ident) >= sizeof(log_ident_buf)))
		return -1;
	if (ident != NULL) {
		memcpy(log_ident_buf, ident, strlen(ident) + 1);
		log_ident = log_ident_buf;
	}
	log_level = level;
	log_hook = fn;
	log_hook_arg = arg;
	return 0;
}

void
fatal(const char *fmt, ...)
{
	char	 msg[900];
	va_list	 ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	log_msg(LOG_ERR, "%s", msg);
	exit(1);
}
