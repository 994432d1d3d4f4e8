#!/bin/bash
# tests/test_http_many.sh: tools/http_many, many clients in one process
# from many source addresses, on loopback (127.0.0.0/8 needs no namespace):
# through nginx and evfcgid every client of a run is counted complete and
# its body checked byte for byte; a fake server's corrupted, cut and hung
# answers are reported as bad_body, cut and unfinished; the descriptor
# limit it cannot raise is said clearly.
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/http.sh"
source "$(dirname "$0")/frontends.sh"

MANY=$TOP/tools/http_many
for need in "$MANY" "$EVFCGID" "$NGINX" "$TOP/tests/bin/freeport"; do
	if [ ! -x "$need" ]; then
		not_ok "$need is missing (make all)"
		finish
	fi
done

# kv KEY TEXT: the value of KEY in http_many's summary.
kv() { tr ' ' '\n' <<<"$2" | sed -n "s/^$1=//p" | head -n 1; }
# all_of 'CMD && CMD ...': for check, a list of conditions as one.
all_of() { eval "$1"; }

# --- command line ---
out=$("$MANY" --help)
check "--help exits 0 and documents the summary" grep -q 'rate_median' <<<"$out"
"$MANY" --no-such-flag http://127.0.0.1:1/ >/dev/null 2>&1
check "an unknown flag exits 2" [ $? -eq 2 ]
# one_line WHAT REGEX ARGS...: http_many ARGS exits 2 with one line on
# stderr that matches REGEX, and nothing on stdout.
one_line() {
	local what=$1 re=$2
	shift 2
	capture "$MANY" "$@"
	check "$what: exit 2, one line on stderr ($(head -c 120 <<<"$ERR"))" all_of '
		[ "$RC" -eq 2 ] && [ -z "$OUT" ] && [ "$(wc -l <<<"$ERR")" -eq 1 ] &&
		grep -qE "^http_many: $re" <<<"$ERR"'
}
one_line "an unknown long flag" "unknown .*option --no-such-flag" \
	--no-such-flag http://127.0.0.1:1/
one_line "an unknown short flag" "unknown option -x" -x http://127.0.0.1:1/
one_line "-c without its value" "missing value for -c \(--connections\)" \
	http://127.0.0.1:1/ -c
one_line "--check=1" "--check takes no value" --check=1 http://127.0.0.1:1/
one_line "no URL" "exactly one URL expected, got 0" -c 2
one_line "two URLs" "exactly one URL expected, got 2" http://a/ http://b/
# A bad value says what is wanted; seconds under a millisecond are
# refused (the timers would make them none: a progress line on every turn
# of the loop, a run over at once); more source addresses than clients
# could ever use are refused before they are allocated.
one_line "-c 0" "bad value for --connections: 0 \(a whole number from 1 to 1000000\)" \
	-c 0 http://127.0.0.1:1/
one_line "-c -5" "bad value for --connections: -5 \(a whole" -c -5 http://127.0.0.1:1/
one_line "-r 1x" "bad value for --open-rate: 1x \(a whole" -r 1x http://127.0.0.1:1/
one_line "-p 0.0001" "bad value for --progress: 0.0001 \(seconds from 0.001 to 1000000\)" \
	-p 0.0001 http://127.0.0.1:1/
one_line "-t 1e-9" "bad value for --time-limit: 1e-9 \(seconds" -t 1e-9 http://127.0.0.1:1/
one_line "-i 0.0009" "bad value for --idle: 0.0009 \(seconds" -i 0.0009 http://127.0.0.1:1/
one_line "a reversed range" "bad value for --source: 127.0.0.9-127.0.0.1 \(LAST is below FIRST\)" \
	-s 127.0.0.9-127.0.0.1 http://127.0.0.1:1/
one_line "a name as --source" "bad value for --source: localhost \(not an IPv4" \
	-s localhost http://127.0.0.1:1/
one_line "a /11 of sources" "bad value for --source: 10.0.0.0-10.31.255.255 \(more than 1000000 source addresses in all\)" \
	-s 10.0.0.0-10.31.255.255 http://127.0.0.1:1/
one_line "1,000,001 sources from two options" "bad value for --source: 10.1.0.0 \(more than 1000000" \
	-s 10.0.0.0-10.15.66.63 -s 10.1.0.0 http://127.0.0.1:1/
# --source-file: one that names no address, or is no file, is refused;
# a line of any length is read as one line.
printf '# nothing but a comment\n\n' >"$T/none.addrs"
one_line "a source file with no address" "--source-file $T/none.addrs: no address in it" \
	-S "$T/none.addrs" http://127.0.0.1:1/
one_line "a directory as the source file" "--source-file $T: Is a directory" \
	-S "$T" http://127.0.0.1:1/
one_line "a missing source file" "--source-file $T/nope: No such file" \
	-S "$T/nope" http://127.0.0.1:1/
{ printf '# %0200d\n' 0; echo 127.0.2.1; printf '  127.0.2.2\t\n'; } >"$T/long.addrs"
if have_ipv6_loopback; then
	capture "$MANY" -s ::1 http://[::1]:1/
	check "-s ::1 (one IPv6 address) binds and dials: the refused connect counted" \
		all_of '[ "$RC" -eq 1 ] && grep -qx "error connect ECONNREFUSED: 1" <<<"$OUT"'
fi
"$MANY" -s 127.0.0.9-127.0.0.1 http://127.0.0.1:1/ >/dev/null 2>&1
check "a reversed --source range exits 2" [ $? -eq 2 ]

# --- through nginx (the example) and evfcgid, 300 clients, 100 sources ---
start_evfcgid
FE=$T/nginx
if nginx_conf "$FE" "$(freeport)" "127.0.0.1:$EVFCGID_PORT" && start_nginx "$FE"; then
	URL=http://127.0.0.1:$(cat "$FE/port")
	capture "$MANY" -c 300 -s 127.0.1.1-127.0.1.100 --check -t 10 "$URL/size?200000"
	echo "$OUT" | sed 's/^/# /'
	check "300 clients: exit 0" [ "$RC" -eq 0 ]
	check "300 clients: all connected and complete, none cut" \
		[ "$(kv connected "$OUT")/$(kv complete "$OUT")/$(kv cut "$OUT")" = 300/300/0 ]
	check "300 clients: 60,000,000 body bytes checked, none bad" \
		[ "$(kv checked "$OUT")/$(kv bad_body "$OUT")" = 60000000/0 ]
	rmin=$(kv rate_min "$OUT")
	check "300 clients: a per-client rate is reported" [ "${rmin:-0}" -gt 0 ]
	n=$(awk '{ print $1 }' "$FE/access.log" | sort -u | wc -l)
	check "nginx saw 100 source addresses 127.0.1.1-100 (got $n)" \
		all_of '[ "$n" -eq 100 ] && grep -q "^127\.0\.1\.100 " "$FE/access.log"'
else
	not_ok "nginx starts"
fi

# --- a fake server: corrupted, cut and hung answers ---
# /bad: a 100000-byte pattern body whose byte 70000 is wrong; /cut: says
# 100000 bytes and closes after 50000; /hang: sends 1000 and holds on
# until the client closes; /busy: a 503 whose body is not the pattern;
# /varied: status 400 + the connection's number (mod 100).
FAKE_PL='
use strict; use warnings; use IO::Socket::INET;
my $s = IO::Socket::INET->new(LocalAddr => "127.0.0.1", LocalPort => $ARGV[0],
    Listen => 512, ReuseAddr => 1) or die "listen: $!";
$SIG{CHLD} = "IGNORE";
my $line = "abcdefghijklmnopqrstuvwxyz0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZ.\n";
my $body = substr($line x 1600, 0, 100000);
my $n = 0;
while (my $c = $s->accept) {
	$n++;
	next if fork;
	my ($req, $path) = ("", "");
	while (<$c>) { $req .= $_; last if /^\r?$/; }
	$path = $1 if $req =~ m{^GET (\S+)};
	my $b = $body;
	substr($b, 70000, 1) = "#" if $path eq "/bad";
	if ($path eq "/varied") {
		print $c "HTTP/1.1 " . (400 + $n % 100) . " Varied\r\nContent-Length: 0\r\nConnection: close\r\n\r\n";
		close $c; exit 0;
	}
	if ($path eq "/busy") {
		print $c "HTTP/1.1 503 Busy\r\nContent-Length: 5\r\nConnection: close\r\n\r\nbusy\n";
		close $c; exit 0;
	}
	print $c "HTTP/1.1 200 OK\r\nContent-Length: 100000\r\nConnection: close\r\n\r\n";
	if ($path eq "/cut") { print $c substr($b, 0, 50000); }
	elsif ($path eq "/hang") { print $c substr($b, 0, 1000); $c->flush; sysread($c, my $x, 1); }
	else { print $c $b; }
	close $c; exit 0;
}'
PPORT=$(freeport)
spawn perl -e "$FAKE_PL" "$PPORT"
if wait_port "127.0.0.1:$PPORT" 5; then
	P=http://127.0.0.1:$PPORT
	capture "$MANY" -c 20 -s 127.0.2.1-127.0.2.20 --check -t 10 "$P/good"
	check "fake /good: 20 complete, exit 0" \
		all_of '[ "$RC" -eq 0 ] && [ "$(kv complete "$OUT")/$(kv bad_body "$OUT")" = 20/0 ]'
	capture "$MANY" -c 2 -S "$T/long.addrs" --check -t 10 "$P/good"
	check "a source file with a 200-byte comment line is read: 2 clients from it complete" \
		all_of '[ "$RC" -eq 0 ] && [ "$(kv complete "$OUT")" = 2 ]'
	capture "$MANY" -c 20 -s 127.0.2.1-127.0.2.20 --check -t 10 "$P/bad"
	check "fake /bad: 20 bodies reported bad, exit 1" \
		all_of '[ "$RC" -eq 1 ] && [ "$(kv bad_body "$OUT")" = 20 ]'
	check "fake /bad: the first wrong byte is named (70000)" \
		grep -q 'body byte 70000 differs' <<<"$ERR"
	"$MANY" -c 20 -t 10 "$P/bad" >"$T/nocheck" 2>/dev/null
	check "fake /bad without --check: complete, nothing checked" \
		[ "$(kv complete "$(cat "$T/nocheck")")/$(kv checked "$(cat "$T/nocheck")")" = 20/0 ]
	capture "$MANY" -c 20 -s 127.0.2.1-127.0.2.20 --check -t 10 "$P/cut"
	check "fake /cut: 20 cut while reading, 0 complete, exit 1" \
		all_of '[ "$RC" -eq 1 ] && [ "$(kv cut "$OUT")/$(kv complete "$OUT")" = 20/0 ]'
	check "fake /cut: the kind is counted (closed in the body: 20)" \
		grep -qx 'error closed in the body: 20' <<<"$OUT"
	check "fake /cut: 1,000,000 body bytes arrived, all good" \
		[ "$(kv body "$OUT")/$(kv bad_body "$OUT")" = 1000000/0 ]
	capture "$MANY" -c 20 --check -t 10 "$P/busy"
	check "fake /busy: 20 errors 'http 503', no bad body (only 2xx is checked), exit 1" \
		all_of '[ "$RC" -eq 1 ] && grep -qx "error http 503: 20" <<<"$OUT" &&
		[ "$(kv bad_body "$OUT")/$(kv checked "$OUT")" = 0/0 ]'
	check "fake /busy: the 20 whole 503 answers are http_error, not complete" \
		[ "$(kv http_error "$OUT")/$(kv complete "$OUT")" = 20/0 ]
	# 40 statuses, 40 kinds: 31 are named, the other 9 counted as such.
	capture "$MANY" -Q -c 40 -t 10 "$P/varied"
	named=$(grep -c '^error http 4[0-9][0-9]: 1$' <<<"$OUT")
	sum=$(awk '/^error / { n += $NF } END { print n + 0 }' <<<"$OUT")
	check "fake /varied: 40 kinds of error: 31 named once, 'other kinds: 9', 40 in all" \
		all_of '[ "$named" -eq 31 ] && grep -qx "error other kinds: 9" <<<"$OUT" &&
		[ "$sum" -eq 40 ] && [ "$RC" -eq 1 ]'
	capture "$MANY" -c 20 --check -t 1 "$P/hang"
	check "fake /hang, -t 1: 20 unfinished (still reading), none cut, exit 3" \
		all_of '[ "$RC" -eq 3 ] && [ "$(kv unfinished "$OUT")/$(kv cut "$OUT")" = 20/0 ]'
	# SIGTERM ends a run as the time limit does, summary and all (how
	# tools/many-slow-clients stops its slow clients once it measured).
	"$MANY" -c 20 --check -p 0.1 "$P/hang" >"$T/term.out" 2>"$T/term.err" &
	mpid=$!
	wait_until 10 grep -q 'connected=20 ' "$T/term.err"
	kill -TERM "$mpid"
	wait "$mpid"
	rc=$?
	OUT=$(cat "$T/term.out")
	check "fake /hang, SIGTERM once all read: 20 unfinished, summary printed, exit 3" \
		all_of '[ "$rc" -eq 3 ] && [ "$(kv unfinished "$OUT")/$(kv cut "$OUT")" = 20/0 ] &&
		grep -q "^rate_min=" <<<"$OUT"'
	# Opened 2 a second and cut off at 1 s: most were never opened; they
	# are counted (unopened), and the time limit alone is exit 3.
	capture "$MANY" -c 10 -r 2 -t 1 "$P/hang"
	echo "$OUT" | head -n 1 | sed 's/^/# /'
	fin=$(kv unfinished "$OUT") unop=$(kv unopened "$OUT")
	check "fake /hang, -c 10 -r 2 -t 1: unfinished + unopened = 10, most unopened, exit 3" \
		all_of '[ "$RC" -eq 3 ] && [ "${fin:-0}" -ge 1 ] && [ "${unop:-0}" -ge 5 ] &&
		[ $((fin + unop)) -eq 10 ] && [ "$(kv connected "$OUT")" = "$fin" ]'
else
	not_ok "the fake server listens"
fi

# --- the descriptor limit: said, not a crash, when it cannot be raised ---
capture setpriv --reuid=nobody --regid=nogroup --clear-groups \
	bash -c "ulimit -n 100 && ulimit -Hn 100 && exec '$MANY' -c 500 http://127.0.0.1:1/"
check "500 clients under a hard limit of 100 (not root): exit 2" [ "$RC" -eq 2 ]
check "... saying what is needed and what the limit is" \
	grep -q '500 connections need 510 open files; the limit is 100 (hard 100)' <<<"$ERR"
capture bash -c "ulimit -Sn 1024 && exec '$MANY' -Q -c 5000 -t 5 http://127.0.0.1:1/"
check "5000 clients from a soft limit of 1024: raised, 5000 refused connects counted" \
	grep -qx 'error connect ECONNREFUSED: 5000' <<<"$OUT"

finish
