#!/bin/bash
# evfcgi.h alone: a translation unit that includes it first and nothing of
# libevent compiles warning-free, every libevent header poisoned (an
# include directory ahead of the system's where each one is an #error);
# then a whole application written that way (a server on the library's own
# loop, the query, the path below a prefix route, printf, a body cap per
# route, the body read with evfcgi_body_bytes(), JSON error pages, the
# log named) is built, run and asked over
# FastCGI with cgi-fcgi.
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/http.sh"

command -v cgi-fcgi >/dev/null || { not_ok "cgi-fcgi is installed"; finish; }

LIBEVENT_INC=$(pkg-config --variable=includedir libevent 2>/dev/null || echo /usr/include)
mkdir -p "$T/poison/event2"
n=0
for h in "$LIBEVENT_INC"/event2/*.h "$LIBEVENT_INC"/ev*.h; do
	[ -f "$h" ] || continue
	rel=${h#"$LIBEVENT_INC"/}
	echo "#error \"$rel included: evfcgi.h must stand alone\"" >"$T/poison/$rel"
	n=$((n + 1))
done
check "libevent's headers poisoned ($n of them)" test "$n" -gt 10

# Poisoning works: a file that does include libevent is refused.
printf '#include <event2/event.h>\nint x;\n' >"$T/leak.c"
check "a file including <event2/event.h> is refused under the poison" \
	bash -c "! cc -c -I'$T/poison' -o /dev/null '$T/leak.c' 2>/dev/null"

for std in c99 c11; do
	printf '#include "evfcgi.h"\nint evfcgi_h_alone;\n' >"$T/alone.c"
	check "evfcgi.h compiles alone, first include, -std=$std -pedantic" \
		cc -std=$std -pedantic -Wall -Wextra -Werror -I"$T/poison" \
		-I"$TOP/src/engine" -c -o /dev/null "$T/alone.c"
done

cat >"$T/notes.c" <<'EOF'
#include "evfcgi.h"

#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <syslog.h>

/* GET /greet/NAME?n=N: "hello NAME" N times. */
static void
greet(struct evfcgi_req *req, void *arg)
{
	const char	*n;
	int		 i, times = 1;

	(void)arg;
	switch (evfcgi_query_param(req, "n", &n)) {
	case -1:
		evfcgi_respond_error(req, 400, "bad query");
		return;
	case 1:
		if (sscanf(n, "%d", &times) != 1 || times < 0 || times > 9) {
			evfcgi_respond_error(req, 400, "n: 0..9");
			return;
		}
	}
	evfcgi_header(req, 200, "text/plain", -1);
	for (i = 0; i < times; i++)
		evfcgi_printf(req, "hello %s\n", evfcgi_path_rest(req));
	evfcgi_finish(req);
}

static void
upload(struct evfcgi_req *req, void *arg)
{
	const void	*body;
	size_t		 len;

	(void)arg;
	if ((body = evfcgi_body_bytes(req, &len)) == NULL)
		evfcgi_respond_error(req, 503, NULL);
	else
		evfcgi_respond(req, 200, "text/plain", body, len);
}

static int
json_error(struct evfcgi_req *req, int status, const char *detail,
    const char **ctype, char *buf, size_t size, void *arg)
{
	(void)req;
	(void)arg;
	*ctype = "application/json";
	return snprintf(buf, size, "{\"error\":\"%s\",\"status\":%d}",
	    detail != NULL ? detail : "", status);
}

int
main(int argc, char **argv)
{
	struct evfcgi_server	*srv;
	char			 err[256];

	signal(SIGPIPE, SIG_IGN);
	if (argc != 2 || (srv = evfcgi_server_new(NULL, NULL)) == NULL ||
	    evfcgi_set_log("notes", LOG_INFO, NULL, NULL) == -1 ||
	    evfcgi_route_prefix(srv, "/greet/", greet, NULL) == -1 ||
	    evfcgi_route_methods(srv, "/up", "POST", upload, NULL) == -1 ||
	    evfcgi_route_body_limit(srv, "/up", 0, 16) == -1 ||
	    evfcgi_set_error_page(srv, json_error, NULL) == -1 ||
	    evfcgi_handle_signals(srv) == -1)
		return 1;
	if (evfcgi_listen(srv, argv[1], 0600, err, sizeof(err)) == -1) {
		fprintf(stderr, "%s\n", err);
		return 1;
	}
	evfcgi_run(srv);
	evfcgi_server_free(srv);
	return 0;
}
EOF
if cc -std=c11 -Wall -Wextra -Werror -I"$T/poison" -I"$TOP/src/engine" -o "$T/notes" "$T/notes.c" \
	"$TOP/src/libevfcgi.a" $(pkg-config --libs libevent 2>/dev/null || echo -levent) \
	2>"$T/notes.err"; then
	ok "an application on evfcgi.h alone builds (libevent linked, not included)"
else
	sed 's/^/# /' "$T/notes.err"
	not_ok "an application on evfcgi.h alone builds (libevent linked, not included)"
	finish
fi

port=$(freeport)
spawn "$T/notes" "127.0.0.1:$port" 2>"$T/notes.log"
wait_port "$port"
A=127.0.0.1:$port
ask() {	# ask METHOD URI [BODY]
	local q=${2#*\?}
	[ "$q" = "$2" ] && q=
	printf '%s' "${3-}" | REQUEST_METHOD=$1 REQUEST_URI=$2 QUERY_STRING=$q \
		CONTENT_LENGTH=${#3} cgi-fcgi -bind -connect "$A"
}
out=$(ask GET '/greet/w%6frld?x=1&n=2')
check "notes: /greet/w%6frld?n=2 is 200" grep -q '^Status: 200' <<<"$out"
check "notes: its body is 'hello world' twice (path rest, query, printf)" \
	test "$(body_of <<<"$out" | tr '\n' '|')" = "hello world|hello world|"
out=$(ask GET '/greet/x?n=%zz')
check "notes: n=%zz is 400" grep -q '^Status: 400' <<<"$out"
check "notes: the 400 is the application's JSON" \
	test "$(body_of <<<"$out")" = '{"error":"bad query","status":400}'
out=$(ask GET '/nowhere')
check "notes: the engine's 404 is JSON too" \
	test "$(body_of <<<"$out")" = '{"error":"","status":404}'
check "notes: ... with Content-Type application/json" \
	grep -q $'^Content-Type: application/json\r$' <<<"$out"
out=$(ask POST /up 0123456789abcdef)
check "notes: a 16-byte POST /up is taken (200)" grep -q '^Status: 200' <<<"$out"
check "notes: ... and comes back whole from evfcgi_body_bytes()" \
	test "$(body_of <<<"$out")" = 0123456789abcdef
out=$(ask POST /up 0123456789abcdefg)
check "notes: a 17-byte POST /up is 413 from the engine" grep -q '^Status: 413' <<<"$out"
check "notes: ... as JSON" \
	test "$(body_of <<<"$out")" = '{"error":"request body above the limit of 16 bytes","status":413}'
out=$(ask GET /up)
check "notes: GET /up is 405 in JSON" \
	test "$(body_of <<<"$out")" = '{"error":"","status":405}'

kill "$SPAWNED"
wait_gone 5 "$SPAWNED"
check "notes: its log lines are named notes[PID]" grep -q " notes\[$SPAWNED\] " "$T/notes.log"
check "notes: and none evfcgid[PID]" bash -c "! grep -q 'evfcgid\[' '$T/notes.log'"
finish
