/*
 * log.h: levelled logging to stderr, a file or syslog.
 */
#ifndef LOG_H
#define LOG_H

#include <syslog.h>

/*
 * Sets where messages go: syslog when use_syslog, else path when not NULL
 * (appended), else stderr; messages above level (LOG_ERR..LOG_DEBUG) are
 * dropped.  Returns 0, or -1 with errno set (log_file_error() says why)
 * when path cannot be opened or is refused (see log_reopen()).
 */
int	log_init(const char *ident, int level, int use_syslog, const char *path);

/*
 * Reopens the log file (for SIGHUP after rotation); 0, or -1 with errno
 * and log_file_error() saying why.  A path that is a symbolic link, or
 * names anything but a regular file with one link, is refused.
 */
int	log_reopen(void);

/* Why log_init() or log_reopen() last failed to open the file. */
const char *log_file_error(void);

/*
 * Every message is escaped before it is written: '\\', '\n', '\r', '\t'
 * as two characters, other control bytes as \xHH, so that a line in the
 * log is always one message.
 */

/* Whether a message at prio would be written: guards costly formatting. */
int	log_enabled(int prio);

void	log_msg(int prio, const char *fmt, ...)
	    __attribute__((format(printf, 2, 3)));

/* Logs at LOG_ERR and exits 1: for start-up and broken invariants only. */
void	fatal(const char *fmt, ...)
	    __attribute__((format(printf, 1, 2), noreturn));

#define log_err(...)	log_msg(LOG_ERR, __VA_ARGS__)
#define log_warn(...)	log_msg(LOG_WARNING, __VA_ARGS__)
#define log_info(...)	log_msg(LOG_INFO, __VA_ARGS__)
#define log_debug(...)	log_msg(LOG_DEBUG, __VA_ARGS__)

#endif /* LOG_H */
