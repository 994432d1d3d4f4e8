#!/bin/bash
# tests/test_floor.sh: the instruments of make bench are known correct
# before they measure anything.  bench/floor, the machine's floor, answers
# /hello and /big byte for byte as evfcgid does (fcgi_load -o against the
# demo body), one connection per request and kept, multiplexed (-k -m 4)
# and pipelined (several requests in one write, and the same bytes dribbled
# a few at a time, records split anywhere), with every request id getting
# its own answer and END_REQUEST; GET_VALUES, an unknown role and an
# unknown management type get their answers.  Then tools/kept_rounds
# against nginx (the example config) in front of evfcgid, for a few rounds.
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/http.sh"
source "$(dirname "$0")/frontends.sh"

FLOOR=${FLOOR:-$TOP/bench/floor}	# override: a sanitizer build
F=$TOP/tools/fcgi_load
KR=$TOP/tools/kept_rounds

for need in "$FLOOR" "$F" "$EVFCGID" "$TOP/tests/bin/freeport"; do
	if [ ! -x "$need" ]; then
		not_ok "$need is missing (make)"
		finish
	fi
done

printf 'Hello World\n' >"$T/hello"
pattern 96256 >"$T/big"

# fcgi_load ARGS...: the summary in $OUT, exit status in $RC.
fcgi_load() { capture "$F" "$@"; }
key() { awk -v k="$1: " 'index($0, k) == 1 { print substr($0, length(k) + 1) }' <<<"$OUT"; }
# all_ok N: fcgi_load answered N requests, all 200, no error.
all_ok() {
	local got
	got="$(key requests) $(key 'status 200') $(key errors) $RC"
	[ "$got" = "$1 $1 0 0" ] && return 0
	echo "# expected '$1 $1 0 0', got '$got'" >&2
	sed 's/^/#   /' <<<"$OUT$ERR" | head -n 12 >&2
	return 1
}

port=$(freeport)
A=127.0.0.1:$port
spawn "$FLOOR" --listen "$A" 2>"$T/floor.log"
FLOOR_PID=$SPAWNED
wait_port "$port"

# --- byte for byte ---
for route in hello big; do
	for mode in "" "-k" "-k -m 4"; do
		rm -f "$T/got"
		# shellcheck disable=SC2086
		fcgi_load -n 1 $mode -o "$T/got" "$A" "/$route"
		check "floor /$route ${mode:-(a connection per request)}: the body byte for byte" \
			eval 'all_ok 1 && same_file "$T/got" "$T/$route"'
	done
done
fcgi_check "floor /hello through cgi-fcgi: Status, type, length, body" "$A" /hello 200 \
	"$T/hello" text/plain
fcgi_check "floor /big through cgi-fcgi: Status, length, body" "$A" /big 200 "$T/big" text/plain
r=$T/pathinfo
REQUEST_METHOD=GET SCRIPT_NAME=/bi PATH_INFO=g cgi-fcgi -bind -connect "$A" </dev/null >"$r" 2>/dev/null
cgi_response_check "floor: without REQUEST_URI, SCRIPT_NAME + PATH_INFO (/bi + g) route" "$r" 200 "$T/big"
fcgi_check "floor /nope: 404" "$A" /nope 404

# --- counts and bytes under load ---
hello_bytes=$(fcgi_req "$A" /hello | wc -c)
big_bytes=$(fcgi_req "$A" /big | wc -c)
fcgi_load -n 400 -c 8 "$A" /hello
check "floor: 400 /hello, a connection each (closed by the floor), all answered" all_ok 400
fcgi_load -n 20000 -c 4 -k -m 4 "$A" /hello
check "floor: 20000 /hello on 4 kept connections, 4 ids in flight each" \
	eval 'all_ok 20000 && test "$(key bytes)" = $((20000 * hello_bytes))'
fcgi_load -n 2000 -c 4 -k -m 4 "$A" /big
check "floor: 2000 /big multiplexed (-k -m 4), every STDOUT byte counted" \
	eval 'all_ok 2000 && test "$(key bytes)" = $((2000 * big_bytes))'
fcgi_load -n 2000 -c 64 -k -m 16 "$A" /big
check "floor: 2000 /big on 64 kept connections, 16 ids in flight each" all_ok 2000
fcgi_load -n 5000 -c 2 -k --read-size 1000 "$A" /big
check "floor: /big read 1000 bytes at a time, kept" all_ok 5000

# --- pipelined, and split anywhere ---
# A perl client: on one connection, /hello (id 1), /big (id 2), /nope
# (id 3), /hello (id 7, PARAMS split over three records, and a STDIN body
# that is read and dropped) all with KEEP_CONN, then GET_VALUES, a
# FILTER role (id 9) and an unknown management type 99; written in one
# go or CHUNK bytes at a time.  Prints, per id, the STDOUT bytes and the
# END_REQUEST's protocol status, then the management answers.
PIPE_PL='
use strict; use warnings; use IO::Socket::INET;
my ($port, $chunk) = @ARGV;
my $s = IO::Socket::INET->new(PeerAddr => "127.0.0.1", PeerPort => $port) or die "$!";
binmode $s; $s->autoflush(1);
sub rec { my ($t, $id, $c) = @_; my $pad = (8 - length($c) % 8) % 8;
	pack("CCnnCC", 1, $t, $id, length $c, $pad, 0) . $c . ("\0" x $pad) }
sub nv { my %p = @_; join "", map { pack("CC", length $_, length $p{$_}) . $_ . $p{$_} } sort keys %p }
sub req { my ($id, $uri) = @_; rec(1, $id, pack("nCx5", 1, 1)) .
	rec(4, $id, nv(REQUEST_METHOD => "GET", REQUEST_URI => $uri)) . rec(4, $id, "") . rec(5, $id, "") }
my $p7 = nv(REQUEST_METHOD => "POST", REQUEST_URI => "/hello?x=1", CONTENT_LENGTH => "5");
my $all = req(1, "/hello") . req(2, "/big") . req(3, "/nope") .
	rec(1, 7, pack("nCx5", 1, 1)) . rec(4, 7, substr($p7, 0, 5)) .
	rec(4, 7, substr($p7, 5, 9)) . rec(4, 7, substr($p7, 14)) . rec(4, 7, "") .
	rec(5, 7, "abcde") . rec(5, 7, "") .
	rec(9, 0, nv(FCGI_MPXS_CONNS => "", FCGI_MAX_REQS => "", NOPE => "")) .
	rec(1, 9, pack("nCx5", 3, 1)) . rec(99, 0, "x" x 8);
if ($chunk) { for (my $i = 0; $i < length $all; $i += $chunk) {
	syswrite($s, substr($all, $i, $chunk)); select(undef, undef, undef, 0.0005) } }
else { syswrite($s, $all) == length $all or die "short write" }
my ($buf, %out, %end, @mgmt) = ("");
my $deadline = time + 10;
while (keys(%end) < 5 || @mgmt < 2) {
	die "timeout" if time > $deadline;
	my $n = sysread($s, $buf, 65536, length $buf); die "closed early" unless $n;
	while (length($buf) >= 8) {
		my ($v, $t, $id, $clen, $plen) = unpack("CCnnC", $buf);
		last if length($buf) < 8 + $clen + $plen;
		my $c = substr($buf, 8, $clen);
		$out{$id} .= $c if $t == 6;
		$end{$id} = unpack("x4C", $c) if $t == 3;
		push @mgmt, "values " . join(",", sort map { s/[^A-Z_=0-9,]//gr } ($c =~ /(FCGI_[A-Z_]+)/g)) if $t == 10;
		push @mgmt, "unknown_type " . unpack("C", $c) if $t == 11;
		substr($buf, 0, 8 + $clen + $plen) = "";
	}
}
for my $id (sort { $a <=> $b } keys %end) {
	my $o = $out{$id} // ""; my $i = index($o, "\r\n\r\n");
	if ($i >= 0) { open(my $f, ">", "body.$id") or die; binmode $f; print $f substr($o, $i + 4); close $f; }
	my ($st) = $o =~ /^Status: (\d+)/;
	print "id $id end $end{$id} status ", $st // "-", "\n";
}
print "$_\n" for @mgmt;
'
expected_pipe="id 1 end 0 status 200
id 2 end 0 status 200
id 3 end 0 status 404
id 7 end 0 status 200
id 9 end 3 status -
values FCGI_MAX_REQS,FCGI_MPXS_CONNS
unknown_type 99"
for chunk in 0 7 1000; do
	mkdir -p "$T/pipe.$chunk"
	got=$(cd "$T/pipe.$chunk" && timeout 20 perl -e "$PIPE_PL" "$port" "$chunk" 2>&1)
	what="in one write"
	[ "$chunk" -gt 0 ] && what="$chunk bytes at a time"
	if [ "$got" = "$expected_pipe" ] && same_file "$T/pipe.$chunk/body.1" "$T/hello" &&
	    same_file "$T/pipe.$chunk/body.2" "$T/big" && same_file "$T/pipe.$chunk/body.7" "$T/hello"; then
		ok "floor: 4 requests, GET_VALUES, a FILTER role and type 99 pipelined $what: each answered"
	else
		echo "# got: $(tr '\n' '|' <<<"$got")"
		echo "# expected: $(tr '\n' '|' <<<"$expected_pipe")"
		not_ok "floor: 4 requests, GET_VALUES, a FILTER role and type 99 pipelined $what: each answered"
	fi
done

# --- bad input closes that connection only ---
printf '\2\1\0\1\0\0\0\0' | timeout 5 perl -MIO::Socket::INET -e '
	my $s = IO::Socket::INET->new(PeerAddr => "127.0.0.1", PeerPort => $ARGV[0]) or die;
	local $/; my $in = <STDIN>; syswrite($s, $in); my $b; exit(sysread($s, $b, 100) == 0 ? 0 : 1)' "$port"
check "floor: a record of version 2 closes that connection" test $? -eq 0
fcgi_check "floor: still answers after a malformed record" "$A" /hello 200 "$T/hello"
check "floor: still running" kill -0 "$FLOOR_PID"

# --- kept_rounds through nginx and evfcgid ---
if [ ! -x "$KR" ]; then
	not_ok "$KR is missing (make)"
	finish
fi
out=$("$KR" --help)
rc=$?
check "kept_rounds --help: exit 0, usage on stdout" eval 'test $rc -eq 0 && grep -q "^usage: kept_rounds" <<<"$out"'
"$KR" --bogus 2>"$T/err" >/dev/null
rc=$?
check "kept_rounds: an unknown flag is exit 2 with a message" eval 'test $rc -eq 2 && grep -q bogus "$T/err"'
for args in "" "-c 0 http://127.0.0.1:1/hello" "-r x http://127.0.0.1:1/hello" \
	"ftp://127.0.0.1/hello" "http://127.0.0.1:1/hello extra"; do
	# shellcheck disable=SC2086
	"$KR" $args >/dev/null 2>"$T/err"
	rc=$?
	check "kept_rounds: exit 2 with a message for: kept_rounds $args" \
		eval 'test $rc -eq 2 -a -s "$T/err"'
done
"$KR" -c 2 -r 1 "http://127.0.0.1:$(freeport)/hello" >/dev/null 2>"$T/err"
rc=$?
check "kept_rounds: a refused connection is exit 1 with a message" \
	eval 'test $rc -eq 1 && grep -qi refused "$T/err"'

if ! command -v "$NGINX" >/dev/null 2>&1 && [ ! -x "$NGINX" ]; then
	not_ok "nginx is installed (scripts/install-deps)"
	finish
fi
start_evfcgid
nport=$(freeport)
if nginx_conf "$T/nginx" "$nport" "127.0.0.1:$EVFCGID_PORT" workers=1 && start_nginx "$T/nginx"; then
	capture "$KR" -c 50 -r 20 "http://127.0.0.1:$nport/hello"
	echo "$OUT" | sed 's/^/# /'
	check "kept_rounds -c 50 -r 20 through nginx + evfcgid: 1000 answers, exit 0" \
		eval 'test $RC -eq 0 && grep -q "^responses: 1000$" <<<"$OUT" && grep -q "^errors: 0$" <<<"$OUT"'
	reqs=$(status_of "127.0.0.1:$EVFCGID_PORT" requests)
	check "kept_rounds: evfcgid served those 1000 (its /status: $reqs, itself included)" \
		test "${reqs:-0}" -ge 1001
	conns=$(grep -c '"GET /hello HTTP/1.1" 200' "$T/nginx/access.log")
	check "kept_rounds: nginx logged 1000 GET /hello HTTP/1.1 200 ($conns)" test "$conns" -eq 1000
	capture "$KR" -c 4 -r 3 "http://127.0.0.1:$nport/big"
	check "kept_rounds /big: 12 answers of 96256 bytes (body bytes counted)" \
		eval 'test $RC -eq 0 && grep -q "^responses: 12$" <<<"$OUT" && grep -q "^body_bytes: $((12 * 96256))$" <<<"$OUT"'
	capture "$KR" -c 2 -r 2 "http://127.0.0.1:$nport/nope"
	check "kept_rounds: a 404 is counted as an error, exit 1" \
		eval 'test $RC -eq 1 && grep -q "^errors: 4" <<<"$OUT"'
else
	not_ok "nginx starts in front of evfcgid"
fi

finish
