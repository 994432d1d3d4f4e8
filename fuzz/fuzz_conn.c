/*
 * fuzz_conn.c: libFuzzer harness.  Each input is what a peer sends on one
 * connection: the codec parses it record by record and pair by pair, then
 * the whole daemon (connection layer and demo routes) serves it over a
 * socketpair.  Any crash, leak or sanitizer report is a bug: peer input
 * must only ever close its own connection.
 */
#include <sys/socket.h>

#include <fcntl.h>
#include <signal.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <event2/event.h>

#include "app.h"
#include "evfcgi.h"
#include "fcgi_proto.h"
#include "log.h"
#include "status.h"

int	LLVMFuzzerTestOneInput(const uint8_t *, size_t);

static void
fuzz_codec(const uint8_t *data, size_t len)
{
	struct fcgi_record	 rec;
	struct fcgi_nv		 nv;
	ssize_t			 n, m;
	size_t			 off = 0, poff;

	while ((n = fcgi_parse(data + off, len - off, &rec)) > 0) {
		for (poff = 0; (m = fcgi_nv_parse(rec.content + poff,
		    rec.hdr.content_length - poff, &nv)) > 0; poff += (size_t)m)
			;
		off += (size_t)n;
	}
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t len)
{
	struct app_config	 cfg = { .max_size = 1 << 20 };
	struct evfcgi_limits	 lim;
	struct event_base	*base;
	struct evfcgi_server	*srv;
	char			 sink[65536];
	size_t			 off = 0;
	ssize_t			 n;
	int			 sv[2], i;

	fuzz_codec(data, len);
	/* As evfcgi.h asks of every application. */
	signal(SIGPIPE, SIG_IGN);
	log_init("fuzz", LOG_ERR, 0, NULL);
	evfcgi_limits_default(&lim);
	lim.max_params = 4096;
	lim.max_body = 65536;
	lim.high_water = 16384;
	lim.low_water = 4096;
	if ((base = event_base_new()) == NULL ||
	    (srv = evfcgi_server_new(base, &lim)) == NULL ||
	    app_register(srv, &cfg) == -1 ||
	    status_register(srv, cfg.max_size) == -1 ||
	    socketpair(AF_UNIX, SOCK_STREAM, 0, sv) == -1)
		abort();
	if (evfcgi_adopt(srv, sv[0]) == -1)
		abort();
	fcntl(sv[1], F_SETFL, O_NONBLOCK);
	for (i = 0; i < 2000 && (off < len || i < 50); i++) {
		if (off < len && (n = write(sv[1], data + off, len - off)) > 0)
			off += (size_t)n;
		if (off == len)
			shutdown(sv[1], SHUT_WR);
		event_base_loop(base, EVLOOP_NONBLOCK);
		while (read(sv[1], sink, sizeof(sink)) > 0)
			;
	}
	close(sv[1]);
	evfcgi_server_free(srv);
	event_base_free(base);
	return 0;
}
