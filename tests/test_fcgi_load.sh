#!/bin/bash
# tests/test_fcgi_load.sh: tools/fcgi_load against the real evfcgid on
# free loopback ports (TCP, unix, IPv6): counts, exact byte totals checked
# against libfcgi's cgi-fcgi, statuses, latency line, connection reuse and
# multiplexing proven by the daemon's own /status counters, bodies both
# ways with -o and -b, --duration, timeouts, refused connections, the slow
# reader mode with backpressure seen in the daemon, and, from small perl
# servers, the answers a broken application gives.
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/http.sh"

F=${FCGI_LOAD:-$TOP/tools/fcgi_load}

for need in "$F" "$EVFCGID" "$TOP/tests/bin/freeport"; do
	if [ ! -x "$need" ]; then
		not_ok "$need is missing (make)"
		finish
	fi
done
command -v cgi-fcgi >/dev/null || { not_ok "cgi-fcgi is installed (libfcgi-bin)"; finish; }

# fcgi_load ARGS...: runs the tool under test; summary in $OUT, stderr in $ERR,
# exit status in $RC.
fcgi_load() { capture "$F" "$@"; }
# key NAME: the value of the summary line "NAME: value" in $OUT.
key() { awk -v k="$1: " 'index($0, k) == 1 { print substr($0, length(k) + 1) }' <<<"$OUT"; }
# summary_is REQUESTS STATUS COUNT ERRORS RC: the usual five facts at once,
# with a diagnostic when they differ.
summary_is() {
	local got want="$1 $3 $4 $5"
	got="$(key requests) $(key "status $2") $(key errors) $RC"
	[ "$got" = "$want" ] && return 0
	echo "# expected '$want', got '$got'; summary:" >&2
	sed 's/^/#   /' <<<"$OUT" >&2
	[ -n "$ERR" ] && head -n 5 <<<"$ERR" | sed 's/^/#   stderr: /' >&2
	return 1
}
# resp_len ADDR URI [BODY]: bytes of STDOUT content cgi-fcgi gets.
resp_len() { fcgi_req "$@" | wc -c; }

# --- command line ---
out=$("$F" --help)
rc=$?
check "--help: exit 0, usage on stdout" eval 'test $rc -eq 0 && grep -q "^usage: fcgi_load" <<<"$out"'
check "-h lists the summary keys" eval '"$F" -h | grep -q "latency_ms: p50=X p90=X p99=X max=X"'
"$F" --bogus 127.0.0.1:1 /hello >/dev/null 2>"$T/err"
rc=$?
check "unknown flag: exit 2 with a message" eval 'test $rc -eq 2 && grep -q "bogus" "$T/err"'
for args in "" "127.0.0.1:1" "-c 0 127.0.0.1:1 /x" "-c x 127.0.0.1:1 /x" \
	"-n 0 127.0.0.1:1 /x" "-n 1 -d 1 127.0.0.1:1 /x" "-m 2 127.0.0.1:1 /x" \
	"-k -m 70000 127.0.0.1:1 /x" "-d -1 127.0.0.1:1 /x" "--timeout 0 127.0.0.1:1 /x" \
	"--read-size 0 127.0.0.1:1 /x" "--pause -5 127.0.0.1:1 /x" "-t abc 127.0.0.1:1 /x" \
	"-p novalue 127.0.0.1:1 /x" "-p =v 127.0.0.1:1 /x" "127.0.0.1:1 x" \
	"127.0.0.1 /x" "127.0.0.1:0 /x" "::1:80 /x" "[::1 /x" "unix: /x" \
	"-b $T/no-such-file 127.0.0.1:1 /x" "-o $T/no-such-dir/f 127.0.0.1:1 /x" \
	"-c 100000000 127.0.0.1:1 /x" "-k --begin-first 127.0.0.1:1 /x"; do
	# shellcheck disable=SC2086
	"$F" $args >/dev/null 2>"$T/err"
	rc=$?
	check "exit 2 with a message for: fcgi_load ${args//$T\//}" \
		eval 'test $rc -eq 2 -a -s "$T/err"'
done

# --- counts and exact bytes ---
start_evfcgid
A=127.0.0.1:$EVFCGID_PORT
HELLO=$(resp_len "$A" /hello)
echo "# cgi-fcgi: /hello is $HELLO bytes of STDOUT (CGI headers and body)"
fcgi_load -n 1000 -c 10 "$A" /hello
check "-n 1000 -c 10 /hello: 1000 requests, status 200: 1000, errors: 0, exit 0" \
	summary_is 1000 200 1000 0 0
check "-n 1000: bytes = 1000 x $HELLO, as cgi-fcgi counts one response" \
	test "$(key bytes)" = $((1000 * HELLO))
check "summary: every line in its format, in order" eval '
	awk "NR == 1 && /^requests: [0-9]+$/ { n++ }
	     NR == 2 && /^seconds: [0-9]+\\.[0-9]+$/ { n++ }
	     NR == 3 && /^rps: [0-9]+\\.[0-9][0-9]?$/ { n++ }
	     NR == 4 && /^bytes: [0-9]+$/ { n++ }
	     NR == 5 && /^latency_ms: p50=[0-9.]+ p90=[0-9.]+ p99=[0-9.]+ max=[0-9.]+$/ { n++ }
	     NR == 6 && /^status 200: 1000$/ { n++ }
	     NR == 7 && /^errors: 0$/ { n++ }
	     END { exit !(n == 7 && NR == 7) }" <<<"$OUT"'
check "latency: 0 < p50 <= p90 <= p99 <= max" eval '
	key latency_ms | tr " =" "\n\n" | awk "NR % 2 == 0 { v[++n] = \$1 }
		END { exit !(n == 4 && v[1] > 0 && v[1] <= v[2] && v[2] <= v[3] && v[3] <= v[4]) }"'
check "rps agrees with requests / seconds (within 2%)" \
	awk -v r="$(key rps)" -v n="$(key requests)" -v s="$(key seconds)" \
	'BEGIN { e = n / s; exit !(r > 0 && r >= e * 0.98 && r <= e * 1.02) }'

BIG=$(resp_len "$A" /big)
fcgi_load -n 20 -c 4 "$A" /big
check "/big x 20 over 4 connections: bytes = 20 x $BIG (cgi-fcgi's count)" \
	eval 'summary_is 20 200 20 0 0 && test "$(key bytes)" = $((20 * BIG))'
STREAM=$(resp_len "$A" "/stream?300001")
fcgi_load -n 6 -c 3 -k "$A" "/stream?300001"
check "/stream?300001 x 6 kept: bytes = 6 x $STREAM (cgi-fcgi's count)" \
	eval 'summary_is 6 200 6 0 0 && test "$(key bytes)" = $((6 * STREAM))'

P=500
lim=$(ulimit -Hn)
[ "$lim" != unlimited ] && [ $((lim / 4)) -lt $P ] && P=$((lim / 4))
fcgi_load -n $((4 * P)) -c $P "$A" /hello
check "-c $P: $((4 * P)) requests, all 200" summary_is $((4 * P)) 200 $((4 * P)) 0 0

fcgi_load -q -n 5 "$A" /hello
check "-q: no summary, exit 0" test -z "$OUT" -a "$RC" -eq 0
fcgi_load -n 5 -t 10 "$A" /hello
check "-t 10 on a quick run: nothing cut off, exit 0" summary_is 5 200 5 0 0

# --- statuses: not errors ---
fcgi_load -n 50 -c 5 "$A" /nope
check "/nope: status 404: 50, errors: 0, exit 0" summary_is 50 404 50 0 0
check "/nope: no 200 line" test -z "$(key 'status 200')"
fcgi_load -n 3 -p REQUEST_URI=/nope "$A" /hello
check "-p replaces a default variable (REQUEST_URI=/nope routes to 404)" summary_is 3 404 3 0 0
fcgi_load -n 2 -p "X_EXTRA=a b=c" "$A" /hello
check "-p adds a variable (value with = and space)" summary_is 2 200 2 0 0

# --- connection reuse and multiplexing, from the daemon's counters ---
# connections_total and requests from one /status probe, which counts
# itself: one of each between two probes.
read -r c0 r0 <<<"$(status_of "$A" connections_total requests)"
fcgi_load -n 600 -c 5 -k "$A" /hello
read -r c1 r1 <<<"$(status_of "$A" connections_total requests)"
echo "# -k -c 5 -n 600: connections_total $c0 -> $c1, requests $r0 -> $r1 (the probe is one of each)"
check "-k -c 5 -n 600: all answered" summary_is 600 200 600 0 0
check "-k: the daemon saw 5 connections for 600 requests" test $((c1 - c0 - 1)) -eq 5
check "-k: the daemon saw 600 requests" test $((r1 - r0 - 1)) -eq 600
fcgi_load -n 200 -c 5 "$A" /hello
read -r c2 r2 <<<"$(status_of "$A" connections_total requests)"
check "control, no -k: one connection per request (200)" test $((c2 - c1 - 1)) -eq 200
fcgi_load -n 400 -c 2 -k -m 4 "$A" /hello
read -r c3 r3 <<<"$(status_of "$A" connections_total requests)"
check "-k -m 4 -c 2 -n 400: all answered over 2 connections" \
	eval 'summary_is 400 200 400 0 0 && test $((c3 - c2 - 1)) -eq 2'
t0=$(now_ns)
fcgi_load -n 4 -c 1 -k -m 4 "$A" "/sleep?300"
wall=$(ms_since "$t0")
read -r c4 r4 <<<"$(status_of "$A" connections_total requests)"
echo "# 4 x /sleep?300 multiplexed on one connection: $wall ms"
check "-k -m 4: four 300 ms requests at once on one connection (${wall} ms < 900)" \
	eval 'summary_is 4 200 4 0 0 && test $((c4 - c3 - 1)) -eq 1 -a "$wall" -lt 900'
t0=$(now_ns)
fcgi_load -n 20 -c 1 -k -m 20 "$A" "/sleep?300"
wall=$(ms_since "$t0")
check "-m 20 past the daemon's 16: 16 answered, the 4 beyond refused at once (FCGI_OVERLOADED, ${wall} ms < 900)" \
	eval 'summary_is 16 200 16 "4 (overloaded 4)" 1 && test "$wall" -lt 900'
fcgi_load -n 20 -c 1 -k -m 20 --begin-first "$A" /hello
check "--begin-first -m 20: 20 BEGINs first, the 16 the daemon takes answered, the 4 beyond refused" \
	summary_is 16 200 16 "4 (overloaded 4)" 1

# --- bodies: -o and -b ---
pattern 1048579 >"$T/exp.size"
fcgi_load -n 1 -o "$T/got.size" "$A" "/size?1048579"
check "-o: /size?1048579 body identical to the pattern" \
	eval 'summary_is 1 200 1 0 0 && same_file "$T/got.size" "$T/exp.size"'
head -c $((2 * 1024 * 1024)) /dev/urandom >"$T/rand"
fcgi_load -n 1 -b "$T/rand" -o "$T/got.echo" "$A" /echo
check "-b 2 MiB random to /echo, -o: identical bytes back" \
	eval 'summary_is 1 200 1 0 0 && same_file "$T/got.echo" "$T/rand"'
ECHO=$(resp_len "$A" /echo "$T/rand")
fcgi_load -n 8 -c 2 -k -m 2 -b "$T/rand" -o "$T/got.echo2" "$A" /echo
check "-b with -k -m 2: 8 echoes of 2 MiB, bytes = 8 x $ECHO, -o intact" \
	eval 'summary_is 8 200 8 0 0 && test "$(key bytes)" = $((8 * ECHO)) &&
	same_file "$T/got.echo2" "$T/rand"'
: >"$T/empty"
fcgi_load -n 1 -b "$T/empty" -o "$T/got.empty" "$A" /echo
check "-b of an empty file: empty echo" \
	eval 'summary_is 1 200 1 0 0 && test ! -s "$T/got.empty"'

# --- time ---
t0=$(now_ns)
fcgi_load -d 2 -c 4 "$A" /hello
wall=$(ms_since "$t0")
echo "# -d 2: $(key requests) requests, seconds $(key seconds), wall $wall ms"
check "-d 2: runs 1.8..4 s (wall $wall ms), requests made, exit 0" \
	eval 'test "$wall" -ge 1800 -a "$wall" -le 4000 -a "$(key requests)" -gt 0 -a $RC -eq 0'
check "-d 2: seconds: about 2" awk -v s="$(key seconds)" 'BEGIN { exit !(s >= 1.95 && s < 2.5) }'
t0=$(now_ns)
fcgi_load -d 0.5 -c 2 -k "$A" "/sleep?2000"
wall=$(ms_since "$t0")
check "-d 0.5 with 2 s requests in flight: stops at 0.5 s, none counted, no errors, exit 0" \
	eval 'test "$(key requests) $(key errors) $RC" = "0 0 0" -a "$wall" -lt 1500'

t0=$(now_ns)
fcgi_load -n 3 -c 3 --timeout 0.1 "$A" "/sleep?300"
wall=$(ms_since "$t0")
check "/sleep?300 with --timeout 0.1: errors: 3 (timeout 3), exit 1, in ~0.1 s ($wall ms)" \
	eval 'test "$(key requests) $(key errors) $RC" = "0 3 (timeout 3) 1" -a "$wall" -lt 1000'
check "--timeout: each timeout named on stderr" test "$(grep -c 'failed (timeout)' <<<"$ERR")" -eq 3
fcgi_load -n 3 -c 1 -k --timeout 0.1 "$A" "/sleep?300"
check "--timeout on a kept connection: timeouts counted, exit 1" \
	test "$(key errors) $RC" = "3 (timeout 3) 1"
fcgi_load -n 2 --timeout 2 "$A" "/sleep?300"
check "/sleep?300 within --timeout 2: answered" summary_is 2 200 2 0 0

# --- failures ---
DEAD=$(freeport)
fcgi_load -n 10 -c 2 "127.0.0.1:$DEAD" /hello
check "refused port: errors: 10 (connect 10), exit 1" \
	test "$(key requests) $(key errors) $RC" = "0 10 (connect 10) 1"
check "refused port: the reason on stderr" grep -q 'refused' <<<"$ERR"
fcgi_load -n 3 "unix:$T/no-such-socket" /hello
check "missing unix socket: connect errors, exit 1" \
	test "$(key errors) $RC" = "3 (connect 3) 1"

# --- unix and IPv6 listeners ---
spawn "$EVFCGID" --listen "unix:$T/s" 2>"$T/evfcgid.unix.log"
wait_port "unix:$T/s"
fcgi_load -n 300 -c 3 "unix:$T/s" /hello
check "unix:$T/s: 300 requests, bytes = 300 x $HELLO" \
	eval 'summary_is 300 200 300 0 0 && test "$(key bytes)" = $((300 * HELLO))'
fcgi_load -n 300 -c 3 -k -m 2 "unix:$T/s" /hello
check "unix: -k -m 2 works" summary_is 300 200 300 0 0
if ! have_ipv6_loopback; then
	echo "# no IPv6 loopback here: [::1] skipped"
else
	P6=$(freeport)
	spawn "$EVFCGID" --listen "[::1]:$P6" 2>"$T/evfcgid.v6.log"
	wait_port "[::1]:$P6"
	fcgi_load -n 100 -c 2 "[::1]:$P6" /hello
	check "[::1]:PORT: 100 requests" summary_is 100 200 100 0 0
fi

# --- the slow reader: backpressure reaches the daemon ---
t0=$(now_ns)
spawn "$F" --rcvbuf 4096 --read-size 512 --pause 5 -t 2 "$A" "/size?67108864" \
	>"$T/slow.out" 2>"$T/slow.err"
slow=$SPAWNED
sleep 1
queued=$(status_of "$A" bytes_queued)
stalled=$(status_of "$A" stalled_sockets)
wait "$slow"
rc=$?
wall=$(ms_since "$t0")
OUT=$(cat "$T/slow.out")
echo "# slow reader: $(key bytes) bytes in $(key seconds) s; daemon meanwhile: $queued bytes queued, $stalled stalled"
check "slow mode -t 2: exit 3 after ~2 s ($wall ms)" test "$rc" -eq 3 -a "$wall" -ge 1800 -a "$wall" -lt 3500
check "slow mode: bytes > 0 and far below 64 MiB ($(key bytes))" \
	test "$(key bytes)" -gt 0 -a "$(key bytes)" -lt 4194304
check "slow mode: the cut-off request is neither completed nor an error" \
	test "$(key requests) $(key errors)" = "0 0"
check "slow mode: the time limit is named on stderr" grep -q 'cut off' "$T/slow.err"
check "while it read, the daemon held its output queued ($queued bytes)" test "${queued:-0}" -gt 0
check "the daemon's queue drained once the slow reader went" \
	eval 'sleep 0.3; test "$(status_of "$A" bytes_queued)" -eq 0'
fcgi_load --read-size 1000 --pause 1 -o "$T/got.paused" "$A" "/size?100000"
check "--read-size 1000 --pause 1 on /size?100000: complete and intact" \
	eval 'summary_is 1 200 1 0 0 && pattern 100000 | cmp -s - "$T/got.paused"'

# --- a broken application, from small perl servers ---
# Modes: garbage (HTTP instead of records), close (reads, closes),
# noheader (STDOUT without a CGI header block), wrongid (a record for an
# id never sent), status (Status 503 with STDERR: a valid answer).
FAKE='
	use IO::Socket::INET;
	my ($port, $mode) = @ARGV;
	$SIG{PIPE} = "IGNORE";
	my $s = IO::Socket::INET->new(LocalAddr => "127.0.0.1",
	    LocalPort => $port, Listen => 64, ReuseAddr => 1) or die "$!";
	sub rec { my ($t, $id, $d) = @_; my $l = length $d; my $p = (8 - $l % 8) % 8;
		return pack("CCnnCC", 1, $t, $id, $l, $p, 0) . $d . ("\0" x $p); }
	my $end = rec(6, 1, "") . rec(3, 1, pack("NCCCC", 0, 0, 0, 0, 0));
	while (my $c = $s->accept) {
		my $req = "";
		while ($req !~ /\x01\x05\x00\x01\x00\x00\x00\x00\z/) {
			my $n = sysread($c, $req, 65536, length $req);
			last unless $n;
		}
		next unless length $req;	# a port probe
		if ($mode eq "garbage") { syswrite($c, "HTTP/1.0 200 OK\r\n\r\nhi\n") }
		elsif ($mode eq "noheader") { syswrite($c, rec(6, 1, "hi\n") . $end) }
		elsif ($mode eq "wrongid") { syswrite($c, rec(6, 7, "Status: 200\r\n\r\n")) }
		elsif ($mode eq "status") {
			syswrite($c, rec(6, 1, "Status: 503 Busy\r\nContent-Type: text/plain\r\n\r\nbusy\n") .
			    rec(7, 1, "oops\n") . $end);
		}
		close $c;
	}'
for mode in garbage close noheader wrongid status; do
	port=$(freeport)
	spawn perl -e "$FAKE" "$port" "$mode"
	eval "PORT_$mode=$port"
	wait_port "$port"
done
fcgi_load -n 4 -c 2 "127.0.0.1:$PORT_garbage" /hello
check "not FastCGI at all: errors: 4 (malformed 4), exit 1" \
	test "$(key requests) $(key errors) $RC" = "0 4 (malformed 4) 1"
fcgi_load -n 4 -c 2 "127.0.0.1:$PORT_close" /hello
check "closed before END_REQUEST: errors: 4 (closed 4), exit 1" \
	test "$(key requests) $(key errors) $RC" = "0 4 (closed 4) 1"
fcgi_load -n 2 "127.0.0.1:$PORT_noheader" /hello
check "STDOUT without CGI headers: errors: 2 (malformed 2), exit 1" \
	test "$(key requests) $(key errors) $RC" = "0 2 (malformed 2) 1"
fcgi_load -n 2 "127.0.0.1:$PORT_wrongid" /hello
check "a record for an id not in flight: errors: 2 (malformed 2), exit 1" \
	eval 'test "$(key requests) $(key errors) $RC" = "0 2 (malformed 2) 1" && grep -q "id 7" <<<"$ERR"'
fcgi_load -n 3 -o "$T/got.503" "127.0.0.1:$PORT_status" /hello
check "Status: 503 with STDERR: status 503: 3, errors: 0, exit 0" summary_is 3 503 3 0 0
check "... the STDERR bytes are reported, -o has the body only" \
	eval 'grep -q "15 bytes on FCGI_STDERR" <<<"$ERR" && test "$(cat "$T/got.503")" = busy'
fcgi_load -n 5 -k "127.0.0.1:$PORT_status" /hello
check "-k on a server that closes after each answer: resent on a new connection, no errors" \
	summary_is 5 503 5 0 0

finish
