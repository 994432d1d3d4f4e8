# tests/http.sh: requests to the daemons and the checks of their answers:
# over FastCGI with libfcgi's cgi-fcgi, and over HTTP through a front end
# with curl; a FastCGI client of its own for IPv6 and for a client that
# never reads; a command's exit and message; and a fake HTTP server for
# the HTTP tools' failure cases.  Source it after tests/lib.sh (it uses T,
# ok, not_ok, check, spawn, freeport, wait_port, wait_for_line, pattern,
# now_ns and ms_since).

# --- FastCGI requests -----------------------------------------------------

# fcgi_req ADDR URI [BODYFILE]: one request through libfcgi's cgi-fcgi;
# prints the CGI response (headers and body) on stdout.
fcgi_req() {
	local uri=$2 q=""
	[[ $uri == *\?* ]] && q=${uri#*\?}
	if [ -n "${3:-}" ]; then
		REQUEST_METHOD=POST REQUEST_URI=$uri QUERY_STRING=$q \
		CONTENT_LENGTH=$(stat -c %s "$3") SCRIPT_NAME=${uri%%\?*} \
			cgi-fcgi -bind -connect "$1" <"$3"
	else
		REQUEST_METHOD=GET REQUEST_URI=$uri QUERY_STRING=$q \
		SCRIPT_NAME=${uri%%\?*} cgi-fcgi -bind -connect "$1" </dev/null
	fi
}

# body_of: strips the CGI header block from a response on stdin.
body_of() { sed '1,/^\r$/d'; }

# json_numbers KEY...: the numbers of these keys in the JSON on stdin (a
# /status answer), space-separated in the order asked (a key's first
# occurrence; nothing for a key not there).  Pure bash: no process.
json_numbers() {
	local k json re out=""
	IFS= read -r -d '' json
	for k in "$@"; do
		re="\"$k\":([0-9]*)"
		if [[ $json =~ $re ]]; then
			out+="${out:+ }${BASH_REMATCH[1]}"
		else
			out+="${out:+ }"
		fi
	done
	echo "$out"
}

# status_of ADDR KEY...: numbers from one /status of evfcgid (or
# blocking_fcgid), asked directly over FastCGI (ADDR as for cgi-fcgi
# -connect: HOST:PORT or a socket path), space-separated in the order
# asked.  That request counts in what it reports (one more request, one
# more connection).
status_of() {
	local addr=$1
	shift
	fcgi_req "$addr" /status 2>/dev/null | json_numbers "$@"
}

# fcgi_hello ADDR [SECONDS]: true if /hello answers "Hello World" (within
# SECONDS, when given).
fcgi_hello() {
	local -a limit=()
	[ -n "${2:-}" ] && limit=(timeout "$2")
	REQUEST_METHOD=GET REQUEST_URI=/hello QUERY_STRING="" SCRIPT_NAME=/hello \
		"${limit[@]}" cgi-fcgi -bind -connect "$1" </dev/null 2>/dev/null |
		grep -q '^Hello World$'
}

# --- Checks of an answer ----------------------------------------------------

# answer_faults BODY TYPE LENGTH [TYPE_WANTED [EXPECTED_BODY_FILE]]: what
# is wrong with an answer whose body is in the file BODY and whose
# Content-Type and Content-Length say TYPE and LENGTH: no type, not the
# type wanted, a length other than the body's, a body other than
# expected.  Prints nothing when all is well.
answer_faults() {
	local body=$1 ct=$2 cl=$3 type=${4:-} exp=${5:-} n
	n=$(stat -c %s "$body")
	[ -n "$ct" ] || printf ' no Content-Type'
	[ -z "$type" ] || [ "$ct" = "$type" ] || printf " Content-Type '%s' (expected %s)" "$ct" "$type"
	[ "$cl" = "$n" ] || printf " Content-Length '%s' for a body of %s bytes" "$cl" "$n"
	if [ -n "$exp" ] && ! cmp -s "$body" "$exp"; then
		printf ' body of %s bytes differs from the expected %s' "$n" "$(stat -c %s "$exp")"
		printf ' (%s)' "$(cmp "$body" "$exp" 2>&1 | head -n 1)"
	fi
}

# report NAME WHY: ok when WHY is empty, else WHY as a diagnostic and not
# ok.
report() {
	if [ -z "$2" ]; then ok "$1"; else echo "# $1:$2"; not_ok "$1"; fi
}

# header_value FILE NAME: the value of NAME in the last header block of
# FILE (HTTP as curl -D writes it, or CGI); case-insensitive, CR removed.
header_value() {
	tr -d '\r' <"$1" | awk -v n="$2" 'BEGIN { n = tolower(n) }
		/^HTTP\// { v = "" }
		{ i = index($0, ":"); if (i && tolower(substr($0, 1, i - 1)) == n) {
			v = substr($0, i + 1); sub(/^[ \t]+/, "", v) } }
		END { print v }'
}

# split_cgi FILE: FILE.h gets the CGI header lines of the response in
# FILE (no CR), FILE.b its body, byte for byte.  Fails when no blank line ends the
# headers.
split_cgi() {
	perl -e '
		open(my $f, "<", $ARGV[0]) or exit 2; binmode $f;
		local $/; my $s = <$f>; $s = "" unless defined $s;
		my $i = index($s, "\r\n\r\n"); exit 1 if $i < 0;
		(my $h = substr($s, 0, $i)) =~ s/\r//g;
		open(my $hf, ">", "$ARGV[0].h") or exit 2; print $hf "$h\n";
		open(my $bf, ">", "$ARGV[0].b") or exit 2; binmode $bf;
		print $bf substr($s, $i + 4);' "$1"
}

# cgi_response_check NAME FILE STATUS [EXPECTED_BODY_FILE [TYPE]]: ok when
# the CGI response in FILE has a Status of STATUS and a reason, a
# Content-Type (TYPE, if given), a Content-Length equal to its body's
# size, and the expected body byte for byte.  Leaves FILE.h and FILE.b.
cgi_response_check() {
	local name=$1 r=$2 status=$3 st why=""
	if ! split_cgi "$r"; then
		report "$name" " no CGI header block in $(stat -c %s "$r") bytes: $(head -c 200 "$r" | tr -d '\0')"
		return
	fi
	st=$(header_value "$r.h" Status)
	[[ $st == "$status "* ]] || why=" Status '$st' (expected '$status REASON')"
	why+=$(answer_faults "$r.b" "$(header_value "$r.h" Content-Type)" \
		"$(header_value "$r.h" Content-Length)" "${5:-}" "${4:-}")
	report "$name" "$why"
}

# fcgi_check NAME ADDR URI STATUS [EXPECTED_BODY_FILE [TYPE [REQUEST_BODY_FILE]]]:
# one request through cgi-fcgi (a POST of REQUEST_BODY_FILE when given),
# its answer checked as by cgi_response_check.  Sets RESP to the file of
# the response (RESP.b: its body).
FCGI_NO=0
fcgi_check() {
	RESP=$T/resp.$((++FCGI_NO))
	fcgi_req "$2" "$3" "${7:-}" >"$RESP" 2>"$RESP.err"
	cgi_response_check "$1" "$RESP" "$4" "${5:-}" "${6:-}"
}

# check_path_info_route ADDR: without REQUEST_URI, the route is
# SCRIPT_NAME + PATH_INFO (/si + ze: /size) and the query QUERY_STRING.
check_path_info_route() {
	local r=$T/resp.path_info
	REQUEST_METHOD=GET SCRIPT_NAME=/si PATH_INFO=ze QUERY_STRING=65 \
		cgi-fcgi -bind -connect "$1" </dev/null >"$r" 2>/dev/null
	pattern 65 >"$T/exp.65"
	cgi_response_check "no REQUEST_URI: SCRIPT_NAME + PATH_INFO route" "$r" 200 "$T/exp.65"
}

# --- A FastCGI client in perl ---------------------------------------------
# For what cgi-fcgi cannot do: IPv6 (it speaks IPv4 only), and a client
# that sends its request and then never reads (a 4 KiB SO_RCVBUF set
# before connect(), so the server's writes block soon).
#   perl -e "$FCGI_CLIENT_PL" ADDR URI read: the STDOUT stream on stdout;
#     fails without an END_REQUEST.
#   perl -e "$FCGI_CLIENT_PL" ADDR URI stall: says "started" once the
#     answer begins, then sleeps without reading.
# ADDR is HOST:PORT, [V6]:PORT or a socket path.  The request is a GET
# (REQUEST_METHOD, REQUEST_URI and QUERY_STRING), without keep-conn.
FCGI_CLIENT_PL='
use strict; use warnings; use Socket qw(:all); use IO::Handle;
my ($addr, $uri, $mode) = @ARGV; my $s;
if ($addr =~ m{^/}) {
	socket($s, AF_UNIX, SOCK_STREAM, 0) or die "socket: $!";
	connect($s, pack_sockaddr_un($addr)) or die "connect $addr: $!";
} else {
	my ($h, $p) = $addr =~ /^\[(.*)\]:(\d+)$/ ? ($1, $2) : $addr =~ /^(.*):(\d+)$/;
	my ($err, $ai) = getaddrinfo($h, $p, { socktype => SOCK_STREAM });
	die "$addr: $err" if $err;
	socket($s, $ai->{family}, SOCK_STREAM, 0) or die "socket: $!";
	setsockopt($s, SOL_SOCKET, SO_RCVBUF, 4096) if $mode eq "stall";
	connect($s, $ai->{addr}) or die "connect $addr: $!";
}
binmode $s;
my $q = $uri =~ /\?(.*)$/ ? $1 : "";
my %p = (REQUEST_METHOD => "GET", REQUEST_URI => $uri, QUERY_STRING => $q);
my $nv = join "", map { pack("CC", length $_, length $p{$_}) . $_ . $p{$_} } sort keys %p;
sub rec { my ($t, $c) = @_; my $pad = (8 - length($c) % 8) % 8;
	pack("CCnnCC", 1, $t, 1, length $c, $pad, 0) . $c . ("\0" x $pad) }
my $req = rec(1, pack("nCx5", 1, 0)) . rec(4, $nv) . rec(4, "") . rec(5, "");
syswrite($s, $req) == length $req or die "write: $!";
my ($buf, $n) = ("", 0);
if ($mode eq "stall") {
	while (length($buf) < 8 && ($n = sysread($s, $buf, 8, length $buf))) {}
	STDOUT->autoflush(1); print "started\n"; sleep 60; exit 0;
}
while (($n = sysread($s, $buf, 65536, length $buf))) {}
my ($out, $end) = ("", 0);
while (length($buf) >= 8) {
	my ($v, $t, $id, $clen, $plen) = unpack("CCnnC", $buf);
	last if length($buf) < 8 + $clen + $plen;
	$out .= substr($buf, 8, $clen) if $t == 6;
	$end = 1 if $t == 3;
	substr($buf, 0, 8 + $clen + $plen) = "";
}
binmode STDOUT; print $out; exit($end ? 0 : 1);
'

# fcgi_client_check NAME ADDR URI STATUS [EXPECTED_BODY_FILE [TYPE]]: one
# GET by the perl client (10 s at most), its answer checked as by
# cgi_response_check.
fcgi_client_check() {
	local r=$T/resp.$((++FCGI_NO))
	if timeout 10 perl -e "$FCGI_CLIENT_PL" "$2" "$3" read >"$r" 2>"$r.err"; then
		cgi_response_check "$1" "$r" "$4" "${5:-}" "${6:-}"
	else
		report "$1" " no END_REQUEST; $(head -c 300 "$r.err")"
	fi
}

# fcgi_stall ADDR URI: starts a perl client that asks for URI and never
# reads; waits (5 s at most) until the answer has begun.  Sets SPAWNED.
FCGI_STALL_NO=0
fcgi_stall() {
	local out=$T/stall.$((++FCGI_STALL_NO))
	spawn perl -e "$FCGI_CLIENT_PL" "$1" "$2" stall >"$out" 2>&1
	wait_for_line "$out" '^started$' 5
}

# --- A command's exit -------------------------------------------------------

# exits_with NAME WANT_RC PATTERN CMD...: CMD, its stdin /dev/null, ends by
# itself (5 s) with WANT_RC ("nonzero" for any failure) and says, on
# stdout or stderr, something matching PATTERN (extended, any case).
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

# --- HTTP through a front end (tests/test_nginx.sh, test_lighttpd.sh) ------

# http_check NAME URL STATUS [EXPECTED_BODY_FILE [TYPE [POST_FILE]]]: one
# request with curl (a POST of POST_FILE when given); ok when the answer
# has that HTTP status, a Content-Type (TYPE, if given), a Content-Length
# equal to the body's size, and the expected body byte for byte.  Leaves
# the body in $HTTP_BODY.
HTTP_NO=0
http_check() {
	local name=$1 url=$2 status=$3 exp=${4:-} type=${5:-} post=${6:-}
	local r=$T/http.$((++HTTP_NO)) code why=""
	local -a args=(-sS -o "$r.b" -D "$r.h" -w '%{http_code}' --max-time 60)
	[ -n "$post" ] && args+=(--data-binary "@$post" -H 'Content-Type: application/octet-stream' -H 'Expect:')
	code=$(curl "${args[@]}" "$url" 2>"$r.err")
	HTTP_BODY=$r.b
	[ -e "$r.b" ] || : >"$r.b"
	[ "$code" = "$status" ] || why=" HTTP $code (expected $status) $(head -c 200 "$r.err")"
	why+=$(answer_faults "$r.b" "$(header_value "$r.h" Content-Type)" \
		"$(header_value "$r.h" Content-Length)" "$type" "$exp")
	report "$name" "$why"
}

# jq_true FILTER FILE: FILE is JSON and FILTER is true of it.
jq_true() { jq -e "$1" "$2" >/dev/null 2>&1; }

# http_route_checks LABEL BASE_URL MAX_SIZE MAX_BODY: every demo route
# through a front end, byte for byte, against evfcgid started with
# --max-size MAX_SIZE --max-body MAX_BODY (both under 64 MiB, the front
# ends' own body cap).  Test names start with LABEL.
http_route_checks() {
	local l=$1 u=$2 maxsize=$3 maxbody=$4 n ms start
	mkdir -p "$T/exp"
	printf 'Hello World\n' >"$T/exp/hello"
	http_check "$l: /hello" "$u/hello" 200 "$T/exp/hello" text/plain
	pattern 96256 >"$T/exp/big"
	http_check "$l: /big, 96256 bytes" "$u/big" 200 "$T/exp/big"
	for n in 0 1 7 8 9 65527 65528 65535 65536 65537 131072 1048579; do
		[ -e "$T/exp/$n" ] || pattern "$n" >"$T/exp/$n"
		http_check "$l: /size?$n" "$u/size?$n" 200 "$T/exp/$n"
	done
	for n in 0 1 65536 1048579; do
		http_check "$l: /stream?$n" "$u/stream?$n" 200 "$T/exp/$n"
	done
	http_check "$l: /size above --max-size: 413" "$u/size?$((maxsize + 1))" 413
	[ -e "$T/exp/in.5m" ] || head -c 5242880 /dev/urandom >"$T/exp/in.5m"
	http_check "$l: POST /echo, 5 MiB of random bytes back" "$u/echo" 200 \
		"$T/exp/in.5m" "" "$T/exp/in.5m"
	: >"$T/exp/empty"
	http_check "$l: POST /echo, empty body" "$u/echo" 200 "$T/exp/empty" "" "$T/exp/empty"
	[ -e "$T/exp/over" ] || head -c "$((maxbody + 1))" /dev/zero >"$T/exp/over"
	http_check "$l: POST /echo above --max-body: 413" "$u/echo" 413 "" "" "$T/exp/over"
	printf 'slept 200 ms\n' >"$T/exp/slept"
	start=$(now_ns)
	http_check "$l: /sleep?200" "$u/sleep?200" 200 "$T/exp/slept"
	ms=$(ms_since "$start")
	check "$l: /sleep?200 took at least 200 ms ($ms ms)" test "$ms" -ge 200
	http_check "$l: /status, application/json" "$u/status" 200 "" application/json
	if command -v jq >/dev/null; then
		check "$l: /status is JSON with requests and connections_total" \
			jq_true '(.requests | numbers) and (.connections_total | numbers)' "$HTTP_BODY"
	else
		check "$l: /status has requests and connections_total" \
			grep -q '"requests":[0-9].*"connections_total":[0-9]\|"connections_total":[0-9].*"requests":[0-9]' "$HTTP_BODY"
	fi
	http_check "$l: /nope: 404" "$u/nope" 404
	http_check "$l: /size?abc: 400" "$u/size?abc" 400
	http_check "$l: /stream?12x: 400" "$u/stream?12x" 400
}

# --- A fake HTTP server -----------------------------------------------------
# For the HTTP tools' failure cases (perl-base is on every Debian).  Modes:
# "silent" accepts and never answers; "short" promises 100 bytes and sends
# 20; "dribble" sends a chunked "hello world" (extension, trailer) one byte
# every 2 ms, so every split of head and framing is seen.  Each answer
# ends with a close; a connection that sends no request (a port probe) is
# closed.
FAKE_HTTP_PL='
	my ($port, $mode) = @ARGV;
	$SIG{PIPE} = "IGNORE";
	my $s = IO::Socket::INET->new(LocalAddr => "127.0.0.1",
	    LocalPort => $port, Listen => 64, ReuseAddr => 1) or die "$!";
	my @held;
	while (my $c = $s->accept) {
		if ($mode eq "silent") { push @held, $c; next; }
		my $req = "";
		while ($req !~ /\r?\n\r?\n/) {
			my $n = sysread($c, $req, 4096, length $req);
			last unless $n;
		}
		if ($req !~ /\r?\n\r?\n/) { close $c; next; }	# a port probe
		if ($mode eq "short") {
			print $c "HTTP/1.1 200 OK\r\nContent-Length: 100\r\n" .
			    "Connection: close\r\n\r\n" . ("x" x 20);
		} else {
			setsockopt($c, Socket::IPPROTO_TCP(), Socket::TCP_NODELAY(), 1);
			for my $ch (split //, "HTTP/1.1 200 OK\r\n" .
			    "Transfer-Encoding: chunked\r\n\r\n5\r\nhello\r\n" .
			    "6;ext=1\r\n world\r\n0\r\nX-Trailer: x\r\n\r\n") {
				syswrite($c, $ch);
				select(undef, undef, undef, 0.002);
			}
		}
		close $c;
	}'

# start_fake_http VAR MODE: the fake HTTP server in MODE on a free loopback
# port, which goes in the variable VAR; waits until it accepts.  Spawned
# as perl itself, so the pid spawn records is the one stopped on exit.
start_fake_http() {
	local port
	port=$(freeport)
	printf -v "$1" '%s' "$port"
	spawn perl -MIO::Socket::INET -e "$FAKE_HTTP_PL" "$port" "$2"
	wait_port "$port"
}

# --- tools/http_load's summary (tests/test_http_load.sh, test_http_load_rate.sh)
# http_load ARGS...: runs the tool under test; summary in $OUT, stderr in $ERR,
# exit status in $RC.
http_load() { capture "$HTTP_LOAD" "$@"; }
# Fields of the summary in $OUT.
fetches() { awk 'NR == 1 { print $1 }' <<<"$OUT"; }
maxpar() { awk 'NR == 1 { print $3 }' <<<"$OUT"; }
bytes() { awk 'NR == 1 { print $6 }' <<<"$OUT"; }
seconds() { awk 'NR == 1 { print $9 }' <<<"$OUT"; }
rate() { awk '/fetches\/sec/ { print $1 }' <<<"$OUT"; }
code() { awk -v c="$1" '$1 == "code" && $2 == c { print $4 }' <<<"$OUT"; }
# first_ms: the mean of msecs/first-response, whole milliseconds.
first_ms() { awk '/^msecs\/first-response/ { printf("%d", $2) }' <<<"$OUT"; }
# per_conn N: the body bytes/s of each of N connections that ran together.
per_conn() { awk -v b="$(bytes)" -v s="$(seconds)" -v n="$1" 'BEGIN { printf("%.0f", s > 0 ? b / n / s : 0) }'; }
# line_count TEXT: the N of the summary line "N TEXT", or 0.
line_count() { awk -v t="$1" '{ n = $1; $1 = ""; if (substr($0, 2) == t) f = n } END { print f + 0 }' <<<"$OUT"; }
# g N: N formatted as the summary prints byte totals (%g).
g() { printf '%g' "$1"; }
# urls FILE URL...: writes a URL file.
urls() { local f=$1; shift; printf '%s\n' "$@" >"$f"; }
# log_count FILE [LINE]: how many lines of FILE are LINE (or how many lines
# it has).
log_count() { if [ $# -gt 1 ]; then grep -cFx -- "$2" "$1"; else wc -l <"$1"; fi; }
# log_has N FILE [LINE]: true if log_count FILE [LINE] is at least N.
log_has() { [ "$(log_count "${@:2}")" -ge "$1" ]; }
# logged N FILE [LINE]: log_count FILE [LINE], once it is N or after 2 s
# (nginx logs a request just after it has sent the answer).
logged() { wait_until 2 log_has "$@"; log_count "${@:2}"; }
