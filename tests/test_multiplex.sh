#!/bin/bash
# Multiplexing clients, in any record order, are served or refused per
# request, at once, never left waiting (no head-of-line deadlock):
#   - the real npm client fastcgi-client 0.2.0 (tests/node, installed by
#     scripts/install-deps): 64 requests at once on one connection, all
#     answered, then 2000 with 16 in flight; with --max-reqs at its
#     default it keeps to the FCGI_MAX_REQS it is told, and told nothing
#     it gets FCGI_OVERLOADED for each request beyond the limit;
#   - a raw client (tests/fcgi_order.py) that sends every BEGIN_REQUEST
#     first: those within the advertised FCGI_MAX_REQS served, the rest
#     refused with FCGI_OVERLOADED; --max-conn-requests 2 with 4
#     multiplexed: 2 served, 2 refused, then the connection closes;
#   - 65535 requests begun on one connection (--max-reqs 65535), then
#     finished: all answered, none timed out (tools/fcgi_load
#     --begin-first).
source "$(dirname "$0")/lib.sh"
source "$TOP/tests/http.sh"

NODE_DIR=$TOP/tests/node
ORDER=$TOP/tests/fcgi_order.py

# node_run ARGS...: the npm client's summary line for ARGS (see
# tests/node/fcgi_client.js), in NODE_OUT.
node_run() {
	NODE_OUT=$(cd "$NODE_DIR" && timeout 20 node fcgi_client.js "$@" 2>"$T/node.err")
	echo "# node fcgi_client.js $*: $NODE_OUT"
	[ -s "$T/node.err" ] && sed 's/^/#   /' "$T/node.err" | head -n 5
}

if ! grep -qs '"version": "0.2.0"' \
	"$NODE_DIR/node_modules/fastcgi-client/package.json"; then
	not_ok "fastcgi-client 0.2.0 in tests/node/node_modules (run scripts/install-deps)"
else
	ok "fastcgi-client 0.2.0 installed in tests/node by scripts/install-deps"

	start_evfcgid --max-reqs 64
	A=127.0.0.1:$EVFCGID_PORT
	read -r conns0 reqs0 <<<"$(status_of "$A" connections_total requests)"
	node_run "$EVFCGID_PORT" at-once 64
	check "npm client, 64 requests at once: all 64 answered, bodies checked" \
		test "$NODE_OUT" = "sent 64 answered 64 bad 0 overloaded 0 refused 0 max_reqs 64"
	read -r conns reqs <<<"$(status_of "$A" connections_total requests)"
	# Between the two /status: its GET_VALUES' connection, the one of
	# the 64, and the second /status'.
	check "npm client: the 64 on one connection (connections $((conns - conns0)), requests $((reqs - reqs0)) from one /status to the next)" \
		test "$((conns - conns0))" = 3 -a "$((reqs - reqs0))" = 65
	node_run "$EVFCGID_PORT" in-flight 2000 16
	check "npm client, 2000 requests 16 in flight: all answered" \
		test "$NODE_OUT" = "sent 2000 answered 2000 bad 0 overloaded 0 refused 0 max_reqs 64"

	start_evfcgid
	node_run "$EVFCGID_PORT" at-once 64
	check "npm client, default --max-reqs: keeps to the FCGI_MAX_REQS 16 it is told; the 16 it sends answered" \
		test "$NODE_OUT" = "sent 16 answered 16 bad 0 overloaded 0 refused 48 max_reqs 16"
	node_run "$EVFCGID_PORT" no-limits 64
	check "npm client told nothing, 64 at once: 16 answered, 48 FCGI_OVERLOADED" \
		test "$NODE_OUT" = "sent 64 answered 16 bad 0 overloaded 48 refused 0 max_reqs 64"
fi

start_evfcgid
A=127.0.0.1:$EVFCGID_PORT
out=$(timeout 20 python3 "$ORDER" "$EVFCGID_PORT" 10000)
echo "# fcgi_order.py 10000: $out"
check "raw client, BEGIN for 1..10000 first: 1..16 served, 17..10000 FCGI_OVERLOADED, none left waiting" \
	test "$out" = "max_reqs 16 mpxs 1 served 16 overloaded 9984 unanswered 0 bad 0 closed 0 first_overloaded 17"
out=$(timeout 20 python3 "$ORDER" "$EVFCGID_PORT" 16)
check "raw client, BEGIN for 1..16 first (the advertised limit): all served" \
	test "$out" = "max_reqs 16 mpxs 1 served 16 overloaded 0 unanswered 0 bad 0 closed 0 first_overloaded 0"

start_evfcgid --max-conn-requests 2
out=$(timeout 20 python3 "$ORDER" "$EVFCGID_PORT" 4 wait-close)
echo "# --max-conn-requests 2, fcgi_order.py 4: $out"
check "--max-conn-requests 2, 4 multiplexed: 2 served, 2 FCGI_OVERLOADED, then closed" \
	test "$out" = "max_reqs 2 mpxs 1 served 2 overloaded 2 unanswered 0 bad 0 closed 1 first_overloaded 3"

start_evfcgid --max-reqs 65535 --header-timeout 10
A=127.0.0.1:$EVFCGID_PORT
capture timeout 60 "$TOP/tools/fcgi_load" -c 1 -k -m 65535 -n 65535 \
	--begin-first "$A" /hello
echo "$OUT" | grep -E '^(requests|seconds|rps|errors):' | sed 's/^/# 65535 in flight: /'
check "65535 requests begun first on one connection, then finished: all answered" \
	grep -qx 'errors: 0' <<<"$OUT"
check "... 65535 of them" grep -qx 'requests: 65535' <<<"$OUT"
read -r th cerr <<<"$(status_of "$A" header closed_on_error)"
check "... no header timeout, no connection closed on error ($th, $cerr)" \
	test "$th" = 0 -a "$cerr" = 0
finish
