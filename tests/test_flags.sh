#!/bin/bash
# Every flag of evfcgid --help, with a good value and a bad one, from the
# command line and from a --config file: a good value starts the daemon
# (it serves its socket and exits 0 on SIGTERM); a bad one exits with the
# status evfcgid(8) gives (2 for a bad option or value, 1 for a file that
# cannot be opened), its message naming the flag (--name) or the file's
# line (FILE:LINE: name), and nothing bound.  Then the order of the
# checks (a bad port before the refusal to run as root, --user before
# binding), the exit statuses of the runtime failures, and -v / -vv.
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/http.sh"

SOCK=$T/f.sock
if [ "$(id -u)" -eq 0 ]; then
	U=nobody G=nogroup
	getent group nogroup >/dev/null || G=$(id -gn nobody)
else
	U=$(id -un) G=$(id -gn)
fi

# NAME|GOOD|BAD|PATTERN|STATUS|EXTRA: the options that take a value.  The
# bad value's message has PATTERN after the flag's name (and a blank,
# unless PATTERN starts with one or a colon); EXTRA are
# arguments given with both (a good --cgi-root needs --cgi).
cases=(
	"listen|unix:$T/l.sock|127.0.0.1:99999|127.0.0.1:99999: bad port|2|"
	"socket-mode|0600|0999|0999: expected an octal mode|2|"
	"socket-owner|$U|no-such-user-x|no-such-user-x: no such user|2|"
	"socket-group|$G|no-such-group-x|no-such-group-x: no such group|2|"
	"allow|127.0.0.0/8, ::1|10.0.0.0/33|: '10.0.0.0/33' is not an IPv4 or IPv6 address|2|"
	"max-conns|100|0|0: expected a number from 1 to|2|"
	"max-reqs|8|lots|lots: expected a number|2|"
	"max-conn-requests|100|-1|-1: expected a number|2|"
	"max-params|64k|1x|1x: expected a number|2|"
	"max-body|1m|1t|1t: expected a number|2|"
	"max-size|1k|k|k: expected a number|2|"
	"high-water|1m|0|0: expected a number from 1|2|"
	"low-water|1k|1g| 1073741824 is above --high-water|2|"
	"max-queued|64m|0|0: expected a number from 1|2|"
	"share-floor|8k|0|0: expected a number from 1|2|"
	"max-input|64m|0|0: expected a number from 1|2|"
	"header-timeout|10|0|0: expected a number from 1 to 86400|2|"
	"idle-timeout|10|86401|86401: expected a number from 1 to 86400|2|"
	"write-timeout|10|0|0: expected a number from 1|2|"
	"drain-timeout|3|0|0: expected a number from 1|2|"
	"sndbuf|64k|4g|4g: expected a number from 0|2|"
	"cgi-root|$T|$T| needs --cgi|2|"
	"cgi-max|4|0|0: expected a number from 1|2|"
	"cgi-queue|10|x|x: expected a number|2|"
	"cgi-timeout|30|-5|-5: expected a number|2|"
	"cgi-lifetime|60|-1|-1: expected a number|2|"
	"cgi-kill-grace|2|0|0: expected a number from 1|2|"
	"cgi-max-header|8k|100|100: expected a number from 256|2|"
	"cgi-hold|128k|1k|1k: expected a number from 65536|2|"
	"cgi-stderr-rate|5|x|x: expected a number|2|"
	"cgi-write-timeout|60|x|x: expected a number from 0|2|"
	"cgi-nproc|100|-1|-1: expected a number from 0|2|"
	"cgi-pids|16|x|x: expected a number from 0|2|"
	"cgi-user|$U|no-such-user-x|no-such-user-x: no such user|2|--cgi --cgi-root $T"
	"workers|2|65|65: expected a number from 1 to 64|2|"
	"event-backend|poll|kqueue|: 'kqueue' is not epoll, poll or select|2|"
	"user|$U|no-such-user-x|no-such-user-x: no such user|2|"
	"group|$G|no-such-group-x|no-such-group-x: no such group|2|--user $U"
	"access-log|$T/access.log|/nonexistent/a.log|/nonexistent/a.log: No such file|1|"
	"log-file|$T/daemon.log|/nonexistent/d.log| /nonexistent/d.log: No such file|1|"
)
# The flags that take no value, and those that are no config file line.
onoff="cgi cgi-argv allow-root syslog verbose quiet"
cmdonly="config help version"

# good_run WHAT SOCKET ARGS...: evfcgid ARGS serves SOCKET and exits 0 on
# SIGTERM.
good_run() {
	local what=$1 sock=$2 pid rc
	shift 2
	rm -f "$sock"
	"$EVFCGID" "$@" </dev/null >/dev/null 2>"$T/good.err" &
	pid=$!
	PIDS+=("$pid")
	if ! wait_port "unix:$sock" 10 2>/dev/null; then
		kill "$pid" 2>/dev/null
		wait "$pid"
		sed 's/^/# /' "$T/good.err" | head -n 3
		not_ok "$what: starts and serves"
		return
	fi
	kill -TERM "$pid"
	wait "$pid"
	rc=$?
	if [ "$rc" -ne 0 ]; then
		sed 's/^/# /' "$T/good.err" | head -n 3
		not_ok "$what: starts, serves, exit $rc after SIGTERM (not 0)"
	else
		ok "$what: starts, serves, exits 0 after SIGTERM"
	fi
}

# bad_run WHAT STATUS PATTERN ARGS...: evfcgid ARGS exits STATUS at once,
# saying something matching PATTERN (extended regex), and, for a bad
# value (2), binds nothing and says no "listening on".
bad_run() {
	local what=$1 want=$2 pat=$3 out rc
	shift 3
	rm -f "$SOCK"
	out=$(timeout 10 "$EVFCGID" "$@" </dev/null 2>&1)
	rc=$?
	if [ "$rc" -ne "$want" ]; then
		echo "# exit $rc; said: $(head -n 2 <<<"$out")"
		not_ok "$what: exit $want"
	elif ! grep -qE -e "$pat" <<<"$out"; then
		echo "# said: $(head -n 2 <<<"$out"); wanted /$pat/"
		not_ok "$what: exit $want, the message names it"
	elif [ "$want" -eq 2 ] && { [ -e "$SOCK" ] ||
	    grep -q 'listening on' <<<"$out"; }; then
		not_ok "$what: exit 2, and nothing bound (said: $out)"
	else
		ok "$what: exit $want, says: $(head -n 1 <<<"$out" | cut -c1-90)"
	fi
}

# re TEXT: TEXT as an extended regex matching itself.
re() { sed 's/[][\.*^$?+(){}|/]/\\&/g' <<<"$1"; }

conf=$T/f.conf
# write_conf LINE...: the config file: a comment line, then the LINEs.
write_conf() {
	printf '# evfcgid test_flags\n' >"$conf"
	printf '%s\n' "$@" >>"$conf"
}

covered=" "
for c in "${cases[@]}"; do
	IFS='|' read -r name good bad pat status extra <<<"$c"
	[[ $pat == [:\ ]* ]] || pat=" $pat"
	covered+="$name "
	read -r -a ex <<<"$extra"
	[ "$name" = cgi-root ] && ex+=(--cgi)
	sock=$SOCK
	lst=(--listen "unix:$SOCK")
	if [ "$name" = listen ]; then
		sock=$T/l.sock
		lst=()
	fi
	good_run "--$name $good" "$sock" "${lst[@]}" "${ex[@]}" "--$name" "$good"
	write_conf "$name $good   # a comment after the value" \
		"${lst[@]:+listen unix:$SOCK}"
	good_run "config line '$name $good # ...'" "$sock" --config "$conf" \
		"${ex[@]}"
	[ "$name" = cgi-root ] && ex=("${ex[@]:0:${#ex[@]}-1}")
	bad_run "--$name $bad" "$status" "--$name$(re "$pat")" \
		--listen "unix:$SOCK" "${ex[@]}" "--$name" "$bad"
	write_conf "listen unix:$SOCK" "$name $bad # a comment"
	bad_run "config line '$name $bad'" "$status" \
		"$(re "$conf"):3: $name$(re "$pat")" --config "$conf" "${ex[@]}"
done

# The flags without a value: on, and with a value (refused).
for name in $onoff; do
	covered+="$name "
	ex=()
	[ "$name" = allow-root ] || ex=(--allow-root)
	# --cgi has no default root (issue 18): it is given one.
	[ "$name" = cgi ] && ex+=(--cgi-root "$T")
	[ "$name" = cgi-argv ] && ex+=(--cgi --cgi-root "$T")
	good_run "--$name" "$SOCK" --listen "unix:$SOCK" "${ex[@]}" "--$name"
	write_conf "$name # on" "listen unix:$SOCK"
	good_run "config line '$name # on'" "$SOCK" --config "$conf" "${ex[@]}"
	bad_run "--$name=1" 2 "option '--$name' doesn't allow an argument" \
		--listen "unix:$SOCK" "--$name=1"
	write_conf "listen unix:$SOCK" "$name 1"
	bad_run "config line '$name 1'" 2 "$(re "$conf"):3: $name takes no value" \
		--config "$conf"
done

# --config, --help, --version: the command line's alone.
covered+="$cmdonly "
write_conf "listen unix:$SOCK"
good_run "--config FILE" "$SOCK" --config "$conf"
bad_run "--config of no file" 2 "--config /nonexistent/e\.conf: No such file" \
	--config /nonexistent/e.conf
for name in $cmdonly; do
	write_conf "listen unix:$SOCK" "$name"
	bad_run "config line '$name'" 2 "$(re "$conf"):3: unknown option '$name'" \
		--config "$conf"
done
for name in help version; do
	out=$("$EVFCGID" "--$name" 2>&1)
	rc=$?
	check "--$name: exit 0, prints it" test "$rc" -eq 0 -a -n "$out"
	bad_run "--$name=x" 2 "option '--$name' doesn't allow an argument" \
		"--$name=x"
done

# Every flag of --help has its cases above.
missing=""
for f in $("$EVFCGID" --help | grep -oE '^ *(-[a-zA-Z], )?--[a-z-]+' |
    sed 's/.*--//'); do
	[[ $covered == *" $f "* ]] || missing+=" --$f"
done
check "every flag of --help is tried here (missing:${missing:- none})" test -z "$missing"
bad_run "an unknown flag" 2 "unrecognized option '--frobnicate'" --frobnicate

# --- Exit statuses and the order of the checks ---------------------------
bad_run "no --listen, no socket on fd 0" 2 "no --listen given" </dev/null
bad_run "--listen with no port" 2 "--listen nowhere: expected HOST:PORT" \
	--listen nowhere
if [ "$(id -u)" -eq 0 ]; then
	EVFCGID_ALLOW_ROOT=0 bad_run \
		"as root, a bad port is reported as such, before the refusal" 2 \
		"--listen 127.0.0.1:99999: bad port" --listen 127.0.0.1:99999
fi
bad_run "--user of no user: exit 2 before binding (no 'listening on')" 2 \
	"--user no-such-user-x: no such user" \
	--listen "unix:$SOCK" --user no-such-user-x
# A bind that fails is a runtime failure: 1, the address's option named.
p=$(freeport)
spawn "$EVFCGID" --listen "127.0.0.1:$p" 2>/dev/null
wait_port "$p"
bad_run "--listen on a port in use: exit 1" 1 "--listen: .*127\.0\.0\.1:$p" \
	--listen "127.0.0.1:$p"
write_conf "listen unix:$SOCK" "listen 127.0.0.1:$p  # taken"
bad_run "config listen on a port in use: exit 1, file:line" 1 \
	"$(re "$conf"):3: listen: .*127\.0\.0\.1:$p" --config "$conf"
kill "$SPAWNED"

# -v is info (the default), -vv debug: a request logs debug lines only then.
for v in -q "" -v -vv; do
	rm -f "$SOCK"
	spawn "$EVFCGID" --listen "unix:$SOCK" $v 2>"$T/v$v.log"
	wait_port "unix:$SOCK"
	fcgi_hello "$SOCK" 5
	kill -TERM "$SPAWNED"
	wait "$SPAWNED"
done
check "-q: no info line" bash -c "! grep -q ' info: ' '$T/v-q.log'"
check "no flag: info lines, no debug line" \
	bash -c "grep -q ' info: ' '$T/v.log' && ! grep -q ' debug: ' '$T/v.log'"
check "-v: info lines, no debug line (info is the default)" \
	bash -c "grep -q ' info: ' '$T/v-v.log' && ! grep -q ' debug: ' '$T/v-v.log'"
check "-vv: debug lines (every record)" grep -q ' debug: .*record BEGIN_REQUEST' "$T/v-vv.log"
finish
