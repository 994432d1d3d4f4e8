/*
 * log.c: levelled logging to stderr, a file or syslog (see log.h).
 */
#include <sys/types.h>

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

static const char	*prio_name(int);

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

int
log_reopen(void)
{
	int	 fd;

	if (log_path == NULL)
		return 0;
	fd = open(log_path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0640);
	if (fd == -1)
		return -1;
	if (log_fd != STDERR_FILENO)
		close(log_fd);
	log_fd = fd;
	return 0;
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

void
log_msg(int prio, const char *fmt, ...)
{
	char		 line[1024], when[32];
	struct tm	 tm;
	time_t		 now;
	va_list		 ap;
	int		 n, m, saved = errno;

	if (!log_enabled(prio))
		return;
	va_start(ap, fmt);
	if (log_hook != NULL) {
		(void)vsnprintf(line, sizeof(line), fmt, ap);
		va_end(ap);
		log_hook(prio, line, log_hook_arg);
		errno = saved;
		return;
	}
	if (log_syslog) {
		vsyslog(prio, fmt, ap);
		va_end(ap);
		errno = saved;
		return;
	}
	now = time(NULL);
	gmtime_r(&now, &tm);
	strftime(when, sizeof(when), "%Y-%m-%dT%H:%M:%SZ", &tm);
	n = snprintf(line, sizeof(line), "%s %s[%d] %s: ", when, log_ident,
	    (int)getpid(), prio_name(prio));
	m = vsnprintf(line + n, sizeof(line) - (size_t)n - 1, fmt, ap);
	va_end(ap);
	if (m < 0)
		m = 0;
	if ((size_t)(n + m) > sizeof(line) - 2)
		m = (int)sizeof(line) - 2 - n;
	line[n + m] = '\n';
	/* One write per line keeps lines whole when several processes log. */
	(void)!write(log_fd, line, (size_t)(n + m + 1));
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
