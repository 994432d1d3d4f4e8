/*
 * app.h: evfcgid's demo routes (/hello, /big, /size, /stream, /echo,
 * /sleep, /redirect, /upload), written against the public evfcgi.h API
 * only.  (/status is the daemon's: src/daemon/status.c.)
 */
#ifndef APP_H
#define APP_H

#include <stdint.h>

#include "evfcgi.h"

/* The demo body: this 64-byte line over and over, cut at the length. */
#define APP_PATTERN_LINE \
	"abcdefghijklmnopqrstuvwxyz0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZ.\n"
#define APP_BIG_SIZE	96256		/* 94 KiB: the original experiment */

struct app_config {
	uint64_t	max_size;	/* largest /size?N and /stream?N */
};

/* Registers the demo routes on srv.  Returns 0, or -1 when out of memory. */
int	app_register(struct evfcgi_server *srv, const struct app_config *cfg);

/* Frees what the routes keep between requests, once the server is freed. */
void	app_release(void);

#endif /* APP_H */
