#!/bin/bash
# evfcgid through an independent FastCGI client, libfcgi's cgi-fcgi
# (CGI variables from the environment, the body on stdin): every route
# byte for byte, /size and /stream around record and buffer boundaries,
# a multi-megabyte /echo, the 400/404/413 answers, unix and IPv6
# listeners, and the command line's own errors.
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/http.sh"

command -v cgi-fcgi >/dev/null || { not_ok "cgi-fcgi is installed (libfcgi-bin)"; finish; }
command -v perl >/dev/null || { not_ok "perl is installed"; finish; }

# split_resp FILE: FILE.h gets the CGI header lines (no CR), FILE.b the
# body, byte for byte.  Fails when there is no blank line ending headers.
split_resp() {
	perl -e '
		open(my $f, "<", $ARGV[0]) or exit 2; binmode $f;
		local $/; my $s = <$f>; $s = "" unless defined $s;
		my $i = index($s, "\r\n\r\n"); exit 1 if $i < 0;
		(my $h = substr($s, 0, $i)) =~ s/\r//g;
		open(my $hf, ">", "$ARGV[0].h") or exit 2; print $hf "$h\n";
		open(my $bf, ">", "$ARGV[0].b") or exit 2; binmode $bf;
		print $bf substr($s, $i + 4);' "$1"
}

# hdr FILE NAME: the value of header NAME in FILE.h (case-insensitive).
hdr() {
	awk -v n="$2" 'BEGIN { n = tolower(n) }
		{ i = index($0, ":"); if (tolower(substr($0, 1, i - 1)) == n) {
			v = substr($0, i + 1); sub(/^[ \t]+/, "", v); print v; exit } }' "$1.h"
}

# check_resp NAME FILE STATUS [EXPECTED_BODY_FILE [CONTENT_TYPE]]: ok when
# the response in FILE has that status, a Content-Type (that one, if
# given), a Content-Length equal to its body's size, and that body.
check_resp() {
	local name=$1 r=$2 status=$3 exp=${4:-} type=${5:-} why="" st ct cl n
	if ! split_resp "$r"; then
		echo "# $name: no CGI header block in $(stat -c %s "$r") bytes: $(head -c 200 "$r" | tr -d '\0')"
		not_ok "$name"
		return
	fi
	st=$(hdr "$r" Status)
	ct=$(hdr "$r" Content-Type)
	cl=$(hdr "$r" Content-Length)
	n=$(stat -c %s "$r.b")
	[ "${st%% *}" = "$status" ] || why+=" Status '$st' (expected $status)"
	[ -n "$ct" ] || why+=" no Content-Type"
	[ -z "$type" ] || [ "$ct" = "$type" ] || why+=" Content-Type '$ct' (expected $type)"
	[ "$cl" = "$n" ] || why+=" Content-Length '$cl' for a body of $n bytes"
	if [ -n "$exp" ] && ! cmp -s "$r.b" "$exp"; then
		why+=" body of $n bytes differs from the expected $(stat -c %s "$exp")"
		why+=" ($(cmp "$r.b" "$exp" 2>&1 | head -n 1))"
	fi
	if [ -z "$why" ]; then ok "$name"; else echo "# $name:$why"; not_ok "$name"; fi
}

# req NAME ADDR URI STATUS [EXPECTED_BODY_FILE [TYPE [REQUEST_BODY_FILE]]]
req() {
	local r=$T/resp.$((++REQ_NO))
	fcgi_req "$2" "$3" "${7:-}" >"$r" 2>"$r.err"
	check_resp "$1" "$r" "$4" "${5:-}" "${6:-}"
}
REQ_NO=0

# --- Every route, byte for byte.
start_evfcgid --max-size 2m --max-body 8m
A=127.0.0.1:$EVFCGID_PORT

printf 'Hello World\n' >"$T/hello"
req "/hello: Hello World, text/plain" "$A" /hello 200 "$T/hello" text/plain
pattern 96256 >"$T/big"
req "/big: 96256 pattern bytes" "$A" /big 200 "$T/big"

for n in 0 1 7 8 9 63 64 65 65527 65528 65535 65536 65537 96256 131072 1048579; do
	pattern "$n" >"$T/exp.$n"
	req "/size?$n: exactly $n bytes" "$A" "/size?$n" 200 "$T/exp.$n"
done
for n in 0 1 8 65535 65536 65537 1048579; do
	req "/stream?$n: exactly $n bytes" "$A" "/stream?$n" 200 "$T/exp.$n"
done
pattern 2097152 >"$T/exp.max"
req "/size?N at --max-size (2 MiB): served" "$A" "/size?2097152" 200 "$T/exp.max"
req "/size?N one above --max-size: 413" "$A" "/size?2097153" 413
req "/stream?N one above --max-size: 413" "$A" "/stream?2097153" 413

head -c 5242880 /dev/urandom >"$T/in.5m"
req "/echo: 5 MiB of random bytes back byte for byte" "$A" /echo 200 "$T/in.5m" "" "$T/in.5m"
head -c 65537 /dev/urandom >"$T/in.64k"
req "/echo: 65537 random bytes back" "$A" /echo 200 "$T/in.64k" "" "$T/in.64k"
: >"$T/empty"
req "/echo: an empty body back" "$A" /echo 200 "$T/empty" "" "$T/empty"
head -c 8388609 /dev/zero >"$T/in.8m1"
req "/echo: one byte above --max-body (8 MiB): 413" "$A" /echo 413 "" "" "$T/in.8m1"

start=$(now_ns)
printf 'slept 300 ms\n' >"$T/slept"
req "/sleep?300: the answer" "$A" "/sleep?300" 200 "$T/slept"
ms=$(ms_since "$start")
check "/sleep?300: took at least 300 ms ($ms ms)" test "$ms" -ge 300

req "/status: 200, application/json" "$A" /status 200 "" application/json
st=$T/resp.$REQ_NO.b
missing=""
for k in connections requests bytes_queued peak_bytes_queued stalled_sockets limits; do
	grep -q "\"$k\":" "$st" || missing+=" $k"
done
check "/status: has connections, requests, queue and limits${missing:+ (missing:$missing)}" test -z "$missing"
if command -v jq >/dev/null; then
	check "/status: valid JSON (jq)" eval 'jq -e . "$st" >/dev/null'
elif perl -MJSON::PP -e 1 2>/dev/null; then
	check "/status: valid JSON (JSON::PP)" perl -MJSON::PP -0777 -ne 'decode_json($_)' "$st"
fi

req "/nope: 404" "$A" /nope 404
req "/hello/more: 404 (routes are exact paths)" "$A" /hello/more 404
req "/size?abc: 400" "$A" "/size?abc" 400
req "/size without N: 400" "$A" "/size" 400
req "/stream?12x: 400" "$A" "/stream?12x" 400
req "/sleep?soon: 400" "$A" "/sleep?soon" 400

# The path comes from REQUEST_URI, the query from QUERY_STRING; without
# REQUEST_URI, SCRIPT_NAME + PATH_INFO.
r=$T/resp.split
REQUEST_METHOD=GET SCRIPT_NAME=/si PATH_INFO=ze QUERY_STRING=65 \
	cgi-fcgi -bind -connect "$A" </dev/null >"$r" 2>/dev/null
pattern 65 >"$T/exp.65"
check_resp "no REQUEST_URI: SCRIPT_NAME + PATH_INFO route" "$r" 200 "$T/exp.65"

check "the daemon is still running" kill -0 "$EVFCGID_PID"
kill -TERM "$EVFCGID_PID"
wait "$EVFCGID_PID"
rc=$?
check "SIGTERM: exit 0 (got $rc)" test "$rc" -eq 0

# --- A unix socket listener.
sock=$T/evfcgid.sock
spawn "$EVFCGID" --listen "unix:$sock" 2>"$T/unix.log"
wait_port "unix:$sock"
req "unix socket: /hello" "$sock" /hello 200 "$T/hello"
req "unix socket: /big" "$sock" /big 200 "$T/big"
req "unix socket: /echo 64 KiB + 1" "$sock" /echo 200 "$T/in.64k" "" "$T/in.64k"

# --- An IPv6 listener.  libfcgi's cgi-fcgi only speaks IPv4, so this is a
# hand-made FastCGI request over bash's /dev/tcp, decoded record by record.

# fcgi_v6 HOST PORT URI OUT: one request (REQUEST_URI and QUERY_STRING
# only, no body, no keep-conn); OUT gets the STDOUT stream.  Fails when
# the records do not end with an END_REQUEST.
fcgi_v6() {
	local uri=$3 q="" params="" p name val
	[[ $uri == *\?* ]] && q=${uri#*\?}
	for p in "REQUEST_URI=$uri" "QUERY_STRING=$q" "REQUEST_METHOD=GET"; do
		name=${p%%=*}
		val=${p#*=}
		params+=$(printf '\\x%02x\\x%02x' "${#name}" "${#val}")$name$val
	done
	local plen=$(( $(printf "$params" | wc -c) ))
	exec 3<>"/dev/tcp/$1/$2" || return 1
	{
		printf '\x01\x01\x00\x01\x00\x08\x00\x00\x00\x01\x00\x00\x00\x00\x00\x00'
		printf '\x01\x04\x00\x01'"$(printf '\\x%02x\\x%02x' $((plen >> 8)) $((plen & 255)))"'\x00\x00'
		printf "$params"
		printf '\x01\x04\x00\x01\x00\x00\x00\x00'
		printf '\x01\x05\x00\x01\x00\x00\x00\x00'
	} >&3
	timeout 10 cat <&3 >"$4.raw"
	exec 3<&-
	perl -e '
		open(my $f, "<", $ARGV[0]) or exit 2; binmode $f;
		local $/; my $s = <$f>; my ($out, $end) = ("", 0);
		while (length($s) >= 8) {
			my ($v, $type, $id, $clen, $plen) = unpack("C C n n C", $s);
			last if length($s) < 8 + $clen + $plen;
			$out .= substr($s, 8, $clen) if $type == 6;
			$end = 1 if $type == 3;
			$s = substr($s, 8 + $clen + $plen);
		}
		binmode STDOUT; print $out; exit($end ? 0 : 1);' "$4.raw" >"$4"
}

port=$(freeport)
spawn "$EVFCGID" --listen "[::1]:$port" 2>"$T/v6.log"
v6pid=$SPAWNED
wait_port "[::1]:$port"
if fcgi_v6 ::1 "$port" /hello "$T/v6.hello"; then
	check_resp "[::1]:PORT: /hello" "$T/v6.hello" 200 "$T/hello" text/plain
else
	not_ok "[::1]:PORT: /hello (no END_REQUEST)"
fi
if fcgi_v6 ::1 "$port" /big "$T/v6.big"; then
	check_resp "[::1]:PORT: /big" "$T/v6.big" 200 "$T/big"
else
	not_ok "[::1]:PORT: /big (no END_REQUEST)"
fi
grep -q 'listening on \[::1\]' "$T/v6.log" && ok "[::1]: logs where it listens" ||
	not_ok "[::1]: logs where it listens"
kill "$v6pid"

# --- The command line: clear errors, non-zero exits; --help and --version.

# exits_with NAME WANT_RC PATTERN CMD...: CMD ends by itself (5 s) with
# WANT_RC ("nonzero" for any failure) and says something matching PATTERN.
exits_with() {
	local name=$1 want=$2 pat=$3 out rc
	shift 3
	out=$(timeout 5 "$@" </dev/null 2>&1)
	rc=$?
	if [ "$rc" -eq 124 ]; then
		echo "# $name: still running after 5 s"
		not_ok "$name"
	elif { [ "$want" = nonzero ] && [ "$rc" -eq 0 ]; } ||
	    { [ "$want" != nonzero ] && [ "$rc" -ne "$want" ]; }; then
		echo "# $name: exit $rc; said: $(head -n 3 <<<"$out")"
		not_ok "$name"
	elif ! grep -qiE -e "$pat" <<<"$out"; then
		echo "# $name: exit $rc but no /$pat/ in: $(head -n 3 <<<"$out")"
		not_ok "$name"
	else
		ok "$name"
	fi
}

exits_with "a bad flag: non-zero exit, names the flag" nonzero 'bogus' \
	"$EVFCGID" --bogus --listen 127.0.0.1:1
exits_with "a flag without its value: non-zero exit" nonzero 'listen|argument|requires' \
	"$EVFCGID" --listen
exits_with "a non-numeric --max-conns: non-zero exit, says which" nonzero 'max-conns' \
	"$EVFCGID" --max-conns lots --listen 127.0.0.1:1
exits_with "a non-numeric --sndbuf: non-zero exit, says which" nonzero 'sndbuf' \
	"$EVFCGID" --sndbuf lots --listen 127.0.0.1:1
busy=$(freeport)
spawn "$EVFCGID" --listen "127.0.0.1:$busy" 2>/dev/null
busypid=$SPAWNED
wait_port "$busy"
exits_with "a port in use: non-zero exit, says so" nonzero "127\.0\.0\.1:$busy.*(in use|bind)|(in use|bind).*127\.0\.0\.1:$busy" \
	"$EVFCGID" --listen "127.0.0.1:$busy"
kill "$busypid"
exits_with "an address not on this host: non-zero exit, says so" nonzero '192\.0\.2\.1' \
	"$EVFCGID" --listen "192.0.2.1:$(freeport)"
exits_with "a malformed address: non-zero exit, names it" nonzero 'nonsense' \
	"$EVFCGID" --listen nonsense
exits_with "a unix socket in a missing directory: non-zero exit, names it" nonzero "$T/no/such" \
	"$EVFCGID" --listen "unix:$T/no/such/dir.sock"
exits_with "--help: exit 0, lists --listen" 0 '--listen' "$EVFCGID" --help
exits_with "-h: exit 0" 0 'usage' "$EVFCGID" -h
exits_with "--version: exit 0, says evfcgid and a version" 0 'evfcgid [0-9]+\.[0-9]+' "$EVFCGID" --version
exits_with "-V: exit 0" 0 'evfcgid' "$EVFCGID" -V

finish
