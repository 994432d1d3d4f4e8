#!/bin/bash
# Operating evfcgid: --config FILE (and the command line over it), --allow
# (and FCGI_WEB_SERVER_ADDRS), unix socket owner and group, --user/--group
# and the refusal to run as root, and --access-log (its lines, SIGHUP
# after a move).
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/http.sh"

F=$TOP/tools/fcgi_load
ROOT=0
[ "$(id -u)" -eq 0 ] && ROOT=1

# exited PID / term_wait PID: PID (a child of this shell) is a zombie or
# gone; SIGTERM to it, true when it exits 0 within 10 s.
exited() {
	[ ! -e "/proc/$1/stat" ] ||
		[ "$(sed 's/.*) //' "/proc/$1/stat" 2>/dev/null | cut -d' ' -f1)" = Z ]
}
term_wait() {
	kill -TERM "$1"
	wait_until 10 exited "$1" || return 1
	wait "$1"
}

# daemon ARGS...: evfcgid with ARGS (no --listen added), stderr in
# $T/d.N.log; sets D_PID and D_LOG.
DN=0
daemon() {
	D_LOG=$T/d.$((++DN)).log
	spawn "$EVFCGID" "$@" 2>"$D_LOG"
	D_PID=$SPAWNED
}

# hello_from SRC HOST PORT: a FastCGI /hello to HOST:PORT from the local
# address SRC (cgi-fcgi cannot choose it; loopback answers 127.0.0.2 from
# 127.0.0.1); prints what came back, nothing when the server closed.
hello_from() {
	perl -MIO::Socket::IP -e '
		$SIG{PIPE} = "IGNORE";
		my ($src, $host, $port) = @ARGV;
		my $s = IO::Socket::IP->new(LocalHost => $src, PeerHost => $host,
		    PeerPort => $port, Type => SOCK_STREAM) or die "connect: $@\n";
		sub rec { pack("CCnnCC", 1, $_[0], 1, length $_[1], 0, 0) . $_[1] }
		my $nv = "";
		for (["REQUEST_METHOD", "GET"], ["REQUEST_URI", "/hello"]) {
			$nv .= pack("CC", length $_->[0], length $_->[1]) . $_->[0] . $_->[1];
		}
		print $s rec(1, pack("nCx5", 1, 0)) . rec(4, $nv) . rec(4, "") . rec(5, "");
		local $/;
		my $r = <$s>;
		print $r if defined $r;' "$@"
}
served_from() { hello_from "$@" 2>/dev/null | grep -q 'Hello World'; }
refused_from() {
	local out
	out=$(hello_from "$@" 2>&1 | head -c 200)
	[ -z "$out" ] || { echo "# got: $out"; return 1; }
}

# status_line N: HTTP status of the CGI answer in $T/ans (Status: line).
answer_status() { sed -n 's/^Status: \([0-9]*\).*/\1/p' "$T/ans" | tr -d '\r'; }

# --- --config -------------------------------------------------------------
read -r p1 p2 <<<"$(freeport 2 | tr '\n' ' ')"
cat >"$T/good.conf" <<EOF
# evfcgid test configuration

listen 127.0.0.1:$p1
   max-conns   5
max-size 1k
	# an indented comment
drain-timeout 3
EOF
daemon --config "$T/good.conf"
wait_port "$p1"
fcgi_req "127.0.0.1:$p1" "/size?2000" >"$T/ans"
check "--config: max-size 1k from the file applies (/size?2000: $(answer_status))" \
	test "$(answer_status)" = 413
mc=$(fcgi_req "127.0.0.1:$p1" /status | grep -o '"max_conns":[0-9]*')
check "--config: max-conns 5 from the file applies ($mc)" test "$mc" = '"max_conns":5'
check "--config: SIGTERM, exit 0" term_wait "$D_PID"

daemon --config "$T/good.conf" --max-size 4k --listen "127.0.0.1:$p2"
wait_port "$p2"
fcgi_req "127.0.0.1:$p2" "/size?2000" >"$T/ans"
check "--config: the command line's --max-size overrides the file's (200: $(answer_status))" \
	test "$(answer_status)" = 200
check "--config: the command line's --listen replaces the file's ($p1 closed)" \
	bash -c "! (exec 3<>/dev/tcp/127.0.0.1/$p1) 2>/dev/null"
term_wait "$D_PID"

printf 'listen 127.0.0.1:%s\n# fine so far\nfrobnicate 1\n' "$p1" >"$T/unknown.conf"
exits_with "--config: an unknown option is refused with file:line" 2 \
	"unknown.conf:3: unknown option 'frobnicate'" "$EVFCGID" --config "$T/unknown.conf"
printf '\nmax-conns lots\n' >"$T/bad.conf"
exits_with "--config: a bad value is refused with file:line and the range" 2 \
	'bad.conf:2: max-conns lots: expected a number from 1 to' "$EVFCGID" --config "$T/bad.conf"
printf 'syslog yes\n' >"$T/flag.conf"
exits_with "--config: a value for a flag without one is refused" 2 \
	'flag.conf:1: syslog takes no value' "$EVFCGID" --config "$T/flag.conf"
printf 'log-file\n' >"$T/noval.conf"
exits_with "--config: an option without its value is refused" 2 \
	'noval.conf:1: log-file needs a value' "$EVFCGID" --config "$T/noval.conf"
printf 'config /etc/other.conf\n' >"$T/nested.conf"
exits_with "--config: config inside a config file is refused" 2 \
	"nested.conf:1: unknown option 'config'" "$EVFCGID" --config "$T/nested.conf"
exits_with "--config: a missing file is named" 2 \
	'--config /nonexistent/evfcgid.conf: No such file' "$EVFCGID" --config /nonexistent/evfcgid.conf

# --- --allow and FCGI_WEB_SERVER_ADDRS --------------------------------------
# daemon_on_free_port ARGS...: daemon ARGS with --listen 0.0.0.0:$p (and
# [::1]:$p6 when the host has it) on free ports, tried again on others if
# another program took one meanwhile.
daemon_on_free_port() {
	local try
	for try in 1 2 3 4 5; do
		p=$(freeport) p6=""
		local -a l=(--listen "0.0.0.0:$p")
		have_ipv6_loopback && { p6=$(freeport); l+=(--listen "[::1]:$p6"); }
		daemon "${l[@]}" "$@"
		wait_port "$p" 5 && kill -0 "$D_PID" 2>/dev/null && return 0
		sed 's/^/# /' "$D_LOG"
	done
	return 1
}
daemon_on_free_port --allow 127.0.0.1
check "--allow 127.0.0.1: a peer at 127.0.0.1 is served" served_from 127.0.0.1 127.0.0.1 "$p"
check "--allow 127.0.0.1: a peer at 127.0.0.2 is closed at once" refused_from 127.0.0.2 127.0.0.1 "$p"
check "the refusal is logged with the peer" \
	wait_for_line "$D_LOG" '127\.0\.0\.2:[0-9]+: not an allowed peer: closed' 5
if [ -n "${p6:-}" ]; then
	check "--allow 127.0.0.1: a peer at ::1 is closed at once" refused_from ::1 ::1 "$p6"
	check "the IPv6 refusal is counted" test "$(status_of "127.0.0.1:$p" denied)" -ge 2
fi
# A flood of refused peers: the daemon serves on, the log stays short.
perl -MIO::Socket::IP -e 'for (1 .. 300) { IO::Socket::IP->new(LocalHost => "127.0.0.2",
	PeerHost => "127.0.0.1", PeerPort => $ARGV[0], Type => SOCK_STREAM) }' "$p"
check "300 more refused peers: the daemon still serves 127.0.0.1" fcgi_hello "127.0.0.1:$p" 5
denied=$(status_of "127.0.0.1:$p" denied)
check "/status counts them (denied $denied >= 300)" test "${denied:-0}" -ge 300
lines=$(grep -c 'not an allowed peer' "$D_LOG")
check "the log is rate-limited: $lines lines for $denied refusals" test "$lines" -le 3
term_wait "$D_PID"

# Repeatable, and prefixes: every --allow counts, the last does not replace.
daemon_on_free_port --allow 127.0.0.2 --allow ::1 --allow 127.0.0.0/31
check "--allow 127.0.0.2 --allow ::1 --allow 127.0.0.0/31: 127.0.0.1 is served" \
	served_from 127.0.0.1 127.0.0.1 "$p"
check "... and 127.0.0.2 (the first --allow) is served" served_from 127.0.0.2 127.0.0.1 "$p"
check "... and 127.0.0.3 (outside every entry) is closed" refused_from 127.0.0.3 127.0.0.1 "$p"
[ -n "${p6:-}" ] && check "... and ::1 is served" served_from ::1 ::1 "$p6"
term_wait "$D_PID"
printf 'allow 127.0.0.2   # the front end\nallow 127.0.0.0/31 # and the other\n' \
	>"$T/allow.conf"
daemon_on_free_port --config "$T/allow.conf"
check "allow twice in a --config file with # comments: 127.0.0.1 is served" \
	served_from 127.0.0.1 127.0.0.1 "$p"
check "... and 127.0.0.2" served_from 127.0.0.2 127.0.0.1 "$p"
check "... and 127.0.0.3 is not" refused_from 127.0.0.3 127.0.0.1 "$p"
term_wait "$D_PID"

FCGI_WEB_SERVER_ADDRS=127.0.0.2 daemon_on_free_port
check "FCGI_WEB_SERVER_ADDRS=127.0.0.2: 127.0.0.2 is served" served_from 127.0.0.2 127.0.0.1 "$p"
check "FCGI_WEB_SERVER_ADDRS=127.0.0.2: 127.0.0.1 is not" refused_from 127.0.0.1 127.0.0.1 "$p"
term_wait "$D_PID"

daemon --listen "unix:$T/allow.sock" --allow 192.0.2.1
wait_port "unix:$T/allow.sock"
check "--allow does not filter unix socket peers" fcgi_hello "$T/allow.sock" 5
term_wait "$D_PID"
exits_with "--allow with a name, not an address: refused, says which" 2 \
	"--allow: 'localhost' is not an IPv4 or IPv6 address" \
	"$EVFCGID" --listen 127.0.0.1:0 --allow 127.0.0.1,localhost

# --- unix socket owner and group -------------------------------------------
if [ "$ROOT" -eq 1 ]; then
	owner=nobody group=nogroup
	getent group nogroup >/dev/null || group=$(id -gn nobody)
else
	owner=$(id -un) group=$(id -gn)
fi
daemon --listen "unix:$T/own.sock" --socket-owner "$owner" --socket-group "$group" --socket-mode 0640
wait_port "unix:$T/own.sock"
og=$(stat -c '%U:%G %a' "$T/own.sock")
check "--socket-owner $owner --socket-group $group --socket-mode 0640: the socket is $og" \
	test "$og" = "$owner:$group 640"
term_wait "$D_PID"
exits_with "--socket-owner of no user: refused (a bad value: 2), says so" 2 \
	'--socket-owner no-such-user-x: no such user' \
	"$EVFCGID" --listen "unix:$T/o2.sock" --socket-owner no-such-user-x
check "... and the socket file is not left behind" test ! -e "$T/o2.sock"
exits_with "--socket-group of no group: refused (a bad value: 2), says so" 2 \
	'--socket-group no-such-group-x: no such group' \
	"$EVFCGID" --listen "unix:$T/o3.sock" --socket-group no-such-group-x

# --- --user, --group, root -------------------------------------------------
exits_with "--user of no user: refused (a bad value: 2), says so" 2 \
	'--user no-such-user-x: no such user' \
	"$EVFCGID" --listen 127.0.0.1:0 --user no-such-user-x
exits_with "--group without --user: refused" 2 '--group needs --user' \
	"$EVFCGID" --listen 127.0.0.1:0 --group nogroup
if [ "$ROOT" -eq 1 ]; then
	exits_with "as root without --user: refused, says what to do" 2 \
		'refusing to run as root: give --user USER .* or --allow-root' \
		env -u EVFCGID_ALLOW_ROOT "$EVFCGID" --listen 127.0.0.1:0
	p=$(freeport)
	env -u EVFCGID_ALLOW_ROOT "$EVFCGID" --listen "127.0.0.1:$p" --allow-root 2>"$T/ar.log" &
	arpid=$!
	PIDS+=("$arpid")
	check "as root with --allow-root: runs and serves" wait_port "$p"
	term_wait "$arpid"
	# A port below 1024 shows that binding happens before root is given up.
	low=""
	for c in $(seq 1023 -1 900); do
		ss -Hltn "sport = :$c" | grep -q . || { low=$c; break; }
	done
	uid=$(id -u nobody) gid=$(getent group nogroup | cut -d: -f3)
	[ -n "$gid" ] || gid=$(id -g nobody)
	env -u EVFCGID_ALLOW_ROOT "$EVFCGID" --listen "127.0.0.1:$low" --user nobody \
		--group "$(getent group "$gid" | cut -d: -f1)" 2>"$T/user.log" &
	upid=$!
	PIDS+=("$upid")
	wait_port "$low"
	check "--user nobody: binds 127.0.0.1:$low (below 1024) and serves" \
		fcgi_hello "127.0.0.1:$low" 5
	wait_for_line "$T/user.log" 'running as nobody' 5 >/dev/null
	ids=$(awk '/^Uid:/ { print $2, $3, $4, $5 } /^Gid:/ { print $2, $3, $4, $5 } /^Groups:/ { $1 = ""; print "groups" $0 }' "/proc/$upid/status" | tr '\n' '|')
	check "--user nobody: real, effective, saved and fs uid and gid are nobody's, no other group ($ids)" \
		test "$ids" = "$uid $uid $uid $uid|$gid $gid $gid $gid|groups $gid|"
	check "--user nobody: logged" grep -q "running as nobody (uid $uid, gid $gid)" "$T/user.log"
	check "--user nobody: SIGTERM, exit 0" term_wait "$upid"
	p=$(freeport)
	env -u EVFCGID_ALLOW_ROOT "$EVFCGID" --listen "127.0.0.1:$p" --user nobody --workers 2 2>"$T/uw.log" &
	uwpid=$!
	PIDS+=("$uwpid")
	wait_port "$p"
	bad=""
	for w in $(pgrep -P "$uwpid") "$uwpid"; do
		[ "$(awk '/^Uid:/ { print $2 $3 $4 $5 }' "/proc/$w/status")" = "$uid$uid$uid$uid" ] || bad+=" $w"
	done
	check "--user nobody --workers 2: parent and workers all run as nobody (not:${bad:- none})" test -z "$bad"
	term_wait "$uwpid"
else
	echo "# not root: the drop itself is not tried; its refusal is"
	exits_with "--user of another user, not root: refused, says why" 1 \
		'only root can change user' "$EVFCGID" --listen 127.0.0.1:0 --user root
fi

# --- --access-log -------------------------------------------------------------
p=$(freeport)
daemon --listen "127.0.0.1:$p" --access-log "$T/access.log" --max-size 1m
wait_port "$p"
check "--access-log: the file is created at start" test -e "$T/access.log"
REMOTE_ADDR=192.0.2.9 SERVER_PROTOCOL=HTTP/1.1 HTTP_USER_AGENT='curl "quoted"' \
	HTTP_REFERER=http://example.com/ fcgi_req "127.0.0.1:$p" /hello >/dev/null
REMOTE_ADDR=192.0.2.9 SERVER_PROTOCOL=HTTP/1.1 fcgi_req "127.0.0.1:$p" "/size?1000" >/dev/null
REMOTE_ADDR=192.0.2.9 SERVER_PROTOCOL=HTTP/1.1 fcgi_req "127.0.0.1:$p" "/size?2000000" >/dev/null
REMOTE_ADDR=192.0.2.9 SERVER_PROTOCOL=HTTP/1.1 fcgi_req "127.0.0.1:$p" /no/such >/dev/null
REQUEST_METHOD=HEAD REQUEST_URI=/big SERVER_PROTOCOL=HTTP/1.1 \
	cgi-fcgi -bind -connect "127.0.0.1:$p" </dev/null >/dev/null
HTTP_USER_AGENT=$'x\n1.2.3.4 - - [forged] "GET /admin HTTP/1.1" 200 1 "-" "-" 0.1\n\001\377' \
	SERVER_PROTOCOL=HTTP/1.1 fcgi_req "127.0.0.1:$p" /hello >/dev/null
six() { [ "$(wc -l <"$T/access.log")" -ge 6 ]; }
wait_until 5 six
sed 's/^/#   /' "$T/access.log"
line_ok() {
	grep -qE "$1" "$T/access.log" || { echo "# no line like /$1/"; return 1; }
}
ts='\[[0-9]{2}/[A-Z][a-z]{2}/[0-9]{4}:[0-9]{2}:[0-9]{2}:[0-9]{2} \+0000\]'
check "access log: /hello 200 12 bytes, referer, user agent escaped, time taken" \
	line_ok "^192\.0\.2\.9 - - $ts \"GET /hello HTTP/1\.1\" 200 12 \"http://example\.com/\" \"curl \\\\\"quoted\\\\\"\" [0-9]+\.[0-9]{3}$"
check "access log: /size?1000 200 1000 bytes" line_ok "\"GET /size\?1000 HTTP/1\.1\" 200 1000 \"-\" \"-\" [0-9]+\.[0-9]{3}$"
check "access log: over --max-size, 413 and its error page's bytes" line_ok "\"GET /size\?2000000 HTTP/1\.1\" 413 [0-9]+ "
check "access log: unknown path, 404" line_ok "\"GET /no/such HTTP/1\.1\" 404 [0-9]+ "
check "access log: HEAD /big, 200 and no body bytes" line_ok "^- - - $ts \"HEAD /big HTTP/1\.1\" 200 0 "
check "access log: a user agent with newlines cannot forge a line (6 lines, escaped)" \
	bash -c "[ \$(wc -l <'$T/access.log') -eq 6 ] && ! grep -q '^1\.2\.3\.4' '$T/access.log' &&
		grep -qF '\"x\\x0a1.2.3.4 - - [forged] \\\"GET /admin' '$T/access.log' && grep -qF '\\x01\\xff\" ' '$T/access.log'"
"$F" -n 2000 -c 4 -k "127.0.0.1:$p" /hello >/dev/null 2>&1
hellos() { [ "$(grep -c '"GET /hello' "$T/access.log")" -ge 2002 ]; }
wait_until 5 hellos
n=$(grep -c '"GET /hello HTTP/1.1" 200 12 ' "$T/access.log")
check "access log: 2000 kept-connection requests, 2000 more whole lines ($n in all)" test "$n" -eq 2002
mv "$T/access.log" "$T/access.log.1"
kill -HUP "$D_PID"
wait_file "$T/access.log" 5
SERVER_PROTOCOL=HTTP/1.0 fcgi_req "127.0.0.1:$p" "/size?7" >/dev/null
wait_until 5 grep -q 'size?7' "$T/access.log"
check "SIGHUP after mv: the next line goes to a new file at the path" grep -q '"GET /size?7 HTTP/1.0" 200 7 ' "$T/access.log"
check "SIGHUP after mv: the moved file kept its lines and got no more" \
	bash -c "[ \$(wc -l <'$T/access.log.1') -eq 2006 ] && ! grep -q 'size?7' '$T/access.log.1'"
# The time taken is BEGIN_REQUEST to END_REQUEST, a part of what the client
# waits for each request: so over the same requests, one at a time, its
# median cannot exceed the client's median round trip.  (Taken from the
# loop's cached clock, which on Linux is the 4 ms kernel tick, /hello's
# 0.05 ms was logged as 0 to 3.5 ms, median 1.8.)
lat=$("$F" -n 300 -c 1 -k "127.0.0.1:$p" /hello 2>&1 | sed -n 's/^latency_ms: p50=\([0-9.]*\).*/\1/p')
SERVER_PROTOCOL=HTTP/1.1 fcgi_req "127.0.0.1:$p" "/sleep?20" >/dev/null
slept() { grep -q 'sleep?20' "$T/access.log"; }
wait_until 5 slept
logmed=$(awk '/"GET \/hello /{ print $NF }' "$T/access.log" | sort -n | awk '{ v[NR] = $1 } END { if (NR == 300) print v[150] }')
check "access log: median time of 300 /hello ($logmed ms) within the client's median round trip ($lat ms)" \
	awk -v s="$logmed" -v c="$lat" 'BEGIN { exit !(s != "" && c != "" && s + 0 <= c + 0) }'
check "access log: /sleep?20 logged as at least 20 ms" \
	awk '/sleep\?20 /{ t = $NF } END { exit !(t != "" && t + 0 >= 20) }' "$T/access.log"
check "/sleep?0 answers at once (the sleep, timed by the real clock, has none left)" \
	eval 'SERVER_PROTOCOL=HTTP/1.1 timeout 5 bash -c "$(declare -f fcgi_req); fcgi_req 127.0.0.1:$p /sleep?0" | grep -q "^slept 0 ms"'
check "--access-log: SIGTERM, exit 0" term_wait "$D_PID"
exits_with "--access-log in a missing directory: refused, says so" 1 \
	'--access-log /nonexistent/dir/a.log: No such file' \
	"$EVFCGID" --listen 127.0.0.1:0 --access-log /nonexistent/dir/a.log

finish
