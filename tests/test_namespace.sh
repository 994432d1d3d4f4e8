#!/bin/bash
# The library's one namespace: an application that defines fatal,
# log_msg, log_init, conn_new, req_new and listen_bind of its own (names
# the engine uses inside) links against src/libevfcgi.a and against
# src/libevfcgi.so, runs, and serves a request without the engine calling
# any of them; nm shows no global defined in either library but evfcgi_*.
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/http.sh"

command -v cgi-fcgi >/dev/null || { not_ok "cgi-fcgi is installed"; finish; }

cat >"$T/app.c" <<'EOF'
#include <signal.h>
#include <stdio.h>
#include <event2/event.h>
#include "evfcgi.h"

/* The application's own, with signatures unlike the engine's. */
static int	calls;
void fatal(const char *why) { fprintf(stderr, "app: %s\n", why); calls++; }
int log_msg(int level) { calls++; return level; }
int log_init(void) { calls++; return 0; }
void *conn_new(void) { calls++; return NULL; }
void *req_new(void) { calls++; return NULL; }
int listen_bind(void) { calls++; return -1; }

static void
count(struct evfcgi_req *req, void *arg)
{
	char	 msg[32];
	int	 n;

	(void)arg;
	n = snprintf(msg, sizeof(msg), "app calls %d\n", calls);
	evfcgi_respond(req, 200, "text/plain", msg, (size_t)n);
}

int
main(int argc, char **argv)
{
	struct evfcgi_limits	 lim;
	struct evfcgi_server	*srv;
	struct event_base	*base = event_base_new();
	char			 err[128];

	evfcgi_limits_default(&lim);
	if (argc < 2 || (srv = evfcgi_server_new(base, &lim)) == NULL)
		return 1;
	signal(SIGPIPE, SIG_IGN);
	evfcgi_route(srv, "/count", count, NULL);
	if (evfcgi_listen(srv, argv[1], 0600, err, sizeof(err)) != 0) {
		fprintf(stderr, "%s\n", err);
		return 1;
	}
	evfcgi_handle_signals(srv);
	return evfcgi_run(srv);
}
EOF

EVLIBS=$(pkg-config --libs libevent 2>/dev/null || echo -levent)
EVCFLAGS=$(pkg-config --cflags libevent 2>/dev/null)

# try KIND CC-ARGS...: builds the app with CC-ARGS, runs it, asks /count.
try() {
	local kind=$1 port out
	shift
	if ! cc -std=c11 -Wall -I"$TOP/src/engine" $EVCFLAGS -o "$T/app-$kind" \
	    "$T/app.c" "$@" $EVLIBS 2>"$T/cc-$kind.err"; then
		sed 's/^/# /' "$T/cc-$kind.err" | head -n 8
		not_ok "an app defining fatal, log_msg, conn_new, req_new ... links against the $kind library"
		return
	fi
	ok "an app defining fatal, log_msg, conn_new, req_new ... links against the $kind library"
	port=$(freeport)
	spawn "$T/app-$kind" "127.0.0.1:$port" 2>"$T/app-$kind.log"
	wait_port "$port"
	out=$(REQUEST_METHOD=GET REQUEST_URI=/count cgi-fcgi -bind \
		-connect "127.0.0.1:$port" </dev/null 2>&1)
	check "$kind: the app serves, and the engine called none of its names ($(body_of <<<"$out"))" \
		test "$(body_of <<<"$out")" = "app calls 0"
	kill "$SPAWNED"
}
try static "$TOP/src/libevfcgi.a"
try shared -L"$TOP/src" -Wl,-rpath,"$TOP/src" -levfcgi

# only_evfcgi: the names nm printed on stdin that are not evfcgi_*.
only_evfcgi() { awk 'NF >= 3 && $3 !~ /^evfcgi_/ { print $3 }'; }
extra=$(nm -g --defined-only "$TOP/src/libevfcgi.a" | only_evfcgi)
n=$(nm -g --defined-only "$TOP/src/libevfcgi.a" | grep -c ' evfcgi_')
check "libevfcgi.a: $n globals, every one evfcgi_* (others: $(echo $extra | head -c 200))" \
	test -z "$extra" -a "$n" -gt 20
extra=$(nm -D --defined-only "$TOP/src/libevfcgi.so" | grep -v ' A EVFCGI_' | only_evfcgi)
n=$(nm -D --defined-only "$TOP/src/libevfcgi.so" | grep -c ' evfcgi_')
check "libevfcgi.so: $n globals, every one evfcgi_* (others: $(echo $extra | head -c 200))" \
	test -z "$extra" -a "$n" -gt 20
finish
