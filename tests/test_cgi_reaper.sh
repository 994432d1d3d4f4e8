#!/bin/bash
# evfcgid --cgi ends only what it started (issue 37, item 1).  The
# programs' parent is a reaper process of the daemon's (the subreaper of
# what they leave), not the daemon itself, so:
# - a process the daemon inherited (`sh -c 'sleep N & exec evfcgid ...'`,
#   run as nobody) survives 100 CGI requests;
# - in a container whose entrypoint starts nginx (which daemonizes) and
#   then `exec evfcgid --cgi`, so that evfcgid is PID 1 and nginx's master
#   its child, nginx's master and workers survive 100 CGI requests through
#   that nginx (before: 200, then 000: the sweep SIGKILLed nginx);
# - what a program leaves outside its process group (setsid, a double
#   fork) is still ended, in both;
# - a program that kills the reaper takes its siblings with it, and a new
#   reaper serves the next request.
# The container case needs root (unshare --pid); without it, skipped.
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/http.sh"
source "$(dirname "$0")/frontends.sh"
source "$(dirname "$0")/cgi.sh"

command -v cgi-fcgi >/dev/null || { not_ok "cgi-fcgi is installed"; finish; }
command -v perl >/dev/null || { not_ok "perl is installed"; finish; }

# as_nobody CMD...: execs CMD as nobody (call it in a subshell: spawn's).
as_nobody() {
	exec perl -MPOSIX -e 'POSIX::setgid(65534) && POSIX::setuid(65534) or
		die "setuid: $!"; exec @ARGV or die "exec: $!"' "$@"
}

# sleepers SECS: the pids of `sleep SECS` (SECS makes them this test's).
sleepers() { pgrep -f "^sleep $1\$" | tr '\n' ' '; }
none_sleeping() { [ -z "$(sleepers "$1")" ]; }
# parent_of PID: its parent's pid.
parent_of() { ps -o ppid= -p "$1" | tr -d ' '; }

ROOT=$(id -u)
WWW=$T/www
mkdir -p "$WWW/cgi-bin"
cp -p "$TOP/tests/cgi/hello.sh" "$TOP/tests/cgi/leave.sh" "$WWW/cgi-bin/"
[ "$ROOT" -eq 0 ] && chmod 755 "$T"
# Seconds no other test sleeps: this test's processes by their command line.
S=$((4000 + $$ % 1000))

# leave ADDR HOW SECS: a program at ADDR (raw FastCGI) leaves `sleep SECS`
# behind by HOW; prints what it answered (its pid).
leave() {
	SCRIPT_FILENAME=$WWW/cgi-bin/leave.sh fcgi_req "$1" "/cgi-bin/leave.sh?$2+$3" |
		body_of
}

# --- Inherited: a shell's background job. -------------------------------
port=$(freeport)
LOG=$T/inherit.log
if [ "$ROOT" -eq 0 ]; then
	spawn as_nobody sh -c 'sleep "$1" & exec "$2" --cgi --cgi-root "$3" \
		--listen "$4" --allow 127.0.0.1' sh "$S.1" "$CGI_EVFCGID" \
		"$WWW/cgi-bin" "127.0.0.1:$port" 2>"$LOG"
else
	spawn sh -c 'sleep "$1" & exec "$2" --cgi --cgi-root "$3" \
		--listen "$4" --allow 127.0.0.1' sh "$S.1" "$CGI_EVFCGID" \
		"$WWW/cgi-bin" "127.0.0.1:$port" 2>"$LOG"
fi
DAEMON=$SPAWNED
wait_port "127.0.0.1:$port"
inherited=$(sleepers "$S.1")
check "inherited: the sleep ($inherited) is the daemon's child ($DAEMON)" \
	eval '[ -n "$inherited" ] && [ "$(parent_of $inherited)" = "$DAEMON" ]'
for how in setsid double; do
	left=$(leave "127.0.0.1:$port" "$how" "$S.2")
	cgi_own_pid "$left"
	check "inherited: a program left sleep $S.2 by $how ($left)" \
		eval '[[ $left =~ ^[0-9]+$ ]]'
	check "inherited: what it left by $how is ended within 5 s" \
		wait_until 5 none_sleeping "$S.2"
done
capture "$TOP/tools/fcgi_load" -n 100 -p "SCRIPT_FILENAME=$WWW/cgi-bin/hello.sh" \
	"127.0.0.1:$port" /cgi-bin/hello.sh
ok200=$(awk '/^status 200:/ { print $3 }' <<<"$OUT")
check "inherited: 100 CGI requests answered 200 (${ok200:-0})" test "${ok200:-0}" = 100
check "inherited: the sleep the daemon inherited is still running after them" \
	kill -0 "$inherited"
check "inherited: the daemon logged no orphan ended but what programs left" \
	eval '[ "$(grep -c "ended what programs left" "$LOG")" -le 2 ]'
kill "$DAEMON"
wait "$DAEMON" 2>/dev/null
kill "$inherited" 2>/dev/null

# --- A program kills the reaper (it runs as the programs' user). --------
# The programs die with it (PR_SET_PDEATHSIG), their slots are freed, and
# a new reaper takes its place: the next request is served.  Before: the
# programs ran on unparented, and every request after got 503.
cat >"$WWW/cgi-bin/hold.sh" <<'EOF'
#!/bin/sh
echo $$ >"$PIDFILE"
exec sleep 1000
EOF
chmod 755 "$WWW/cgi-bin/hold.sh"
# reaper_of PID: the reaper among PID's children.
reaper_of() {
	local c
	for c in $(pgrep -P "$1"); do
		[ "$(cat "/proc/$c/comm" 2>/dev/null)" = evfcgid-reaper ] && echo "$c"
	done
}
port=$(freeport)
LOG=$T/killed.log
spawn "$CGI_EVFCGID" --cgi --cgi-root "$WWW/cgi-bin" --listen "127.0.0.1:$port" \
	--allow 127.0.0.1 --cgi-max 2 2>"$LOG"
DAEMON=$SPAWNED
wait_port "127.0.0.1:$port"
for i in 1 2; do
	PIDFILE=$T/hold.$i SCRIPT_FILENAME=$WWW/cgi-bin/hold.sh \
		timeout 30 cgi-fcgi -bind -connect "127.0.0.1:$port" </dev/null >/dev/null 2>&1 &
	PIDS+=("$!")
done
held=()
for i in 1 2; do
	wait_file "$T/hold.$i" 5 && held+=("$(cat "$T/hold.$i")")
done
for p in "${held[@]}"; do cgi_own_pid "$p"; done
reaper=$(reaper_of "$DAEMON")
check "reaper killed: 2 programs run, and a reaper (${held[*]}; reaper $reaper)" \
	eval '[ "${#held[@]}" = 2 ] && [ -n "$reaper" ]'
kill -KILL $reaper
check "reaper killed: its programs die with it (${held[*]})" wait_gone 3 "${held[@]}"
check "reaper killed: a new one takes its place, logged" \
	wait_for_line "$LOG" 'the process that parents the programs ended: [0-9]+ takes its place' 5
got=$(SCRIPT_FILENAME=$WWW/cgi-bin/hello.sh REQUEST_METHOD=GET \
	timeout 10 cgi-fcgi -bind -connect "127.0.0.1:$port" </dev/null 2>/dev/null)
check "reaper killed: the next request is served ($(head -1 <<<"$got" | tr -d '\r'))" \
	eval '[[ $got == *"hello from cgi"* ]]'
new=$(reaper_of "$DAEMON")
check "reaper killed: the new reaper ($new) is not the old ($reaper)" \
	eval '[ -n "$new" ] && [ "$new" != "$reaper" ]'
kill "$DAEMON"
wait "$DAEMON" 2>/dev/null

# --- Without /proc/PID/task/PID/children: said once at start. -----------
# A mount namespace whose /proc is an empty tmpfs (no /proc, as in some
# containers): leftovers outside a group cannot be found; one line says
# so at start, also with 2 workers.  Before: nothing was said.
if [ "$ROOT" -ne 0 ]; then
	ok "# SKIP no /proc: needs root (unshare --mount)"
elif ! unshare --mount true 2>/dev/null; then
	ok "# SKIP no /proc: unshare --mount fails here"
else
	port=$(freeport)
	LOG=$T/noproc.log
	spawn unshare --mount sh -c 'mount -t tmpfs none /proc && exec "$@"' sh \
		"$CGI_EVFCGID" --cgi --cgi-root "$WWW/cgi-bin" --listen "127.0.0.1:$port" \
		--allow 127.0.0.1 --workers 2 2>"$LOG"
	NOPROC=$SPAWNED
	wait_port "127.0.0.1:$port"
	# (A #! script cannot run there: its interpreter opens /dev/fd/3.)
	n=$(grep -c 'no /proc/PID/task/PID/children' "$LOG")
	check "no /proc: one line at start says leftovers are not ended ($n)" test "$n" = 1
	kill "$NOPROC"
	wait "$NOPROC" 2>/dev/null
fi

# --- A container: evfcgid is PID 1, nginx (started first) its child. ----
if [ "$ROOT" -ne 0 ]; then
	ok "# SKIP container case: needs root (unshare --pid --mount-proc)"
elif ! unshare --pid --fork --mount-proc true 2>/dev/null; then
	ok "# SKIP container case: unshare --pid --fork --mount-proc fails here"
elif [ ! -x "$NGINX" ]; then
	not_ok "nginx is installed ($NGINX)"
else
	port=$(freeport)
	SOCK=$T/ct.sock
	FE=$T/ct-nginx
	nginx_cgi_conf "$FE" "$port" "unix:$SOCK" "$WWW" || not_ok "nginx config"
	# The entrypoint's nginx daemonizes: its master is PID 1's child.
	sed -i 's/^daemon off;/daemon on;/' "$FE/nginx.conf"
	LOG=$T/container.log
	spawn unshare --pid --fork --mount-proc sh -c '"$1" -p "$2" \
		-c "$2/nginx.conf" -e "$2/error.log" || exit 1
		exec "$3" --cgi --cgi-root "$4" --listen "unix:$5" --allow-root' \
		sh "$NGINX" "$FE" "$CGI_EVFCGID" "$WWW/cgi-bin" "$SOCK" 2>"$LOG"
	UNSHARE=$SPAWNED
	wait_port "unix:$SOCK"
	wait_port "$port"
	DAEMON=$(pgrep -P "$UNSHARE" | head -1)
	# Ended on exit: PID 1's end ends its namespace.
	[ -n "$DAEMON" ] && PIDS+=("$DAEMON")
	master=$(pgrep -P "$DAEMON" -f 'nginx: master' | head -1)
	workers=$(pgrep -P "${master:-0}" | tr '\n' ' ')
	check "container: nginx's master ($master) is evfcgid's ($DAEMON) child, with workers ($workers)" \
		eval '[ -n "$master" ] && [ -n "$workers" ]'
	for how in setsid double; do
		left=$(curl -s --max-time 10 "http://127.0.0.1:$port/cgi-bin/leave.sh?$how+$S.3")
		check "container: a program left sleep $S.3 by $how (pid $left inside)" \
			eval '[[ $left =~ ^[0-9]+$ ]]'
		check "container: what it left by $how is ended within 5 s" \
			wait_until 5 none_sleeping "$S.3"
	done
	codes=$(for i in $(seq 100); do
		curl -s -o /dev/null --max-time 10 -w '%{http_code}\n' \
			"http://127.0.0.1:$port/cgi-bin/hello.sh"
	done | sort | uniq -c | tr -s ' \n' ' ')
	check "container: 100 GETs through that nginx all answered 200 ($codes)" \
		test "$codes" = " 100 200 "
	check "container: nginx's master still runs" kill -0 "$master"
	# shellcheck disable=SC2086
	check "container: its workers still run ($workers)" kill -0 $workers
	kill "$DAEMON" 2>/dev/null
	wait "$UNSHARE" 2>/dev/null
fi

finish
