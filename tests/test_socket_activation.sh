#!/bin/bash
# Socket activation (sd_listen_fds): evfcgid started by
# systemd-socket-activate serves the sockets it passes (fd 3 on, with
# LISTEN_FDS and LISTEN_PID), needs no --listen, logs LISTEN_FDNAMES, and
# serves behind nginx too; with --workers every worker serves them; with
# --cgi CGI programs run on them.  Malformed variables or an fd that is
# not a listening socket are refused with a clear message.
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/http.sh"
source "$(dirname "$0")/frontends.sh"

ACTIVATE=$(command -v systemd-socket-activate)
if [ -z "$ACTIVATE" ]; then
	not_ok "systemd-socket-activate is installed (Debian package systemd)"
	finish
fi

# activate PORT NAME ARGS...: evfcgid ARGS under systemd-socket-activate
# on 127.0.0.1:PORT, the socket named NAME; sets ACT_PID (evfcgid's pid:
# the activator execs it in place) and ACT_LOG.
activate() {
	local port=$1 name=$2
	shift 2
	ACT_LOG=$T/act.$port.log
	spawn "$ACTIVATE" -l "127.0.0.1:$port" --fdname="$name" \
		"$EVFCGID" --allow-root "$@" 2>"$ACT_LOG"
	ACT_PID=$SPAWNED
	wait_for_line "$ACT_LOG" 'Listening on 127.0.0.1' 5 >/dev/null
}

# exited PID: PID (a child of this shell) has exited (a zombie) or is gone.
exited() {
	[ ! -e "/proc/$1/stat" ] || [ "$(sed 's/.*) //' "/proc/$1/stat" | cut -d' ' -f1)" = Z ]
}

# term_wait PID: SIGTERM to PID, a child of this shell; true when it exits
# 0 within 10 s.
term_wait() {
	kill -TERM "$1"
	wait_until 10 exited "$1" || return 1
	wait "$1"
}

port=$(freeport)
activate "$port" fcgi-main
# The first connection makes the activator exec evfcgid.
check "activated: /hello answered over the passed socket" fcgi_hello "127.0.0.1:$port" 5
check "evfcgid logs the socket systemd passed, with its name" \
	wait_for_line "$ACT_LOG" '1 sockets from systemd, named fcgi-main' 5
check "the passed socket is served as 127.0.0.1:$port" \
	grep -q "listening on 127.0.0.1:$port" "$ACT_LOG"
comm=$(cat "/proc/$ACT_PID/comm" 2>/dev/null)
check "the activator's pid is evfcgid now ($comm)" test "$comm" = evfcgid
ok=0
for i in $(seq 20); do fcgi_hello "127.0.0.1:$port" && ok=$((ok + 1)); done
check "20 of 20 requests answered ($ok)" test "$ok" -eq 20
reqs=$(status_of "127.0.0.1:$port" requests)
check "one process served them all (its /status: $reqs requests)" test "${reqs:-0}" -ge 21
check "SIGTERM ends the activated daemon, exit 0" term_wait "$ACT_PID"

# --workers: every worker serves the passed socket.  (That the variables
# are unset, for children not to take them, tests/check_listen.c checks:
# /proc/PID/environ shows the environment as exec gave it, whatever
# unsetenv did since.)
port=$(freeport)
activate "$port" fcgi-workers --workers 2
check "activated with --workers 2: /hello answered" fcgi_hello "127.0.0.1:$port" 5
nworkers_is() { [ "$(pgrep -P "$ACT_PID" | wc -l)" -eq "$1" ]; }
check "2 workers run" wait_until 5 nworkers_is 2
pids=""
for i in $(seq 40); do
	p=$(status_of "127.0.0.1:$port" pid)
	[[ " $pids " == *" $p "* ]] || pids+=" $p"
done
check "requests reach the workers on the passed socket (pids:$pids)" test -n "$pids"
check "SIGTERM ends the parent and its workers, exit 0" term_wait "$ACT_PID"

# --cgi (issue 12) on the passed socket, as evfcgid.socket would start
# it: a CGI program runs for a request that names it.
mkdir -p "$T/cgi-bin"
cp -p "$TOP/tests/cgi/hello.sh" "$T/cgi-bin/"
port=$(freeport)
activate "$port" fcgi-cgi --cgi --cgi-root "$T/cgi-bin" --allow 127.0.0.1
cgi_hello() {
	SCRIPT_FILENAME=$T/cgi-bin/hello.sh REQUEST_METHOD=GET SCRIPT_NAME=/hello.sh \
		timeout 5 cgi-fcgi -bind -connect "127.0.0.1:$port" </dev/null 2>/dev/null |
		grep -q '^hello from cgi'
}
check "activated with --cgi: a CGI program answers over the passed socket" \
	wait_until 5 cgi_hello
check "SIGTERM ends the activated CGI gateway, exit 0" term_wait "$ACT_PID"

# Behind nginx: nginx's upstream is the activated socket.
port=$(freeport)
activate "$port" fcgi-nginx
fport=$(freeport)
if nginx_conf "$T/nginx" "$fport" "127.0.0.1:$port" && start_nginx "$T/nginx"; then
	http_check "behind nginx: /hello through the activated socket" \
		"http://127.0.0.1:$fport/hello" 200 "" text/plain
	check "behind nginx: the body is Hello World" grep -qx 'Hello World' "$HTTP_BODY"
	pattern 96256 >"$T/big.exp"
	http_check "behind nginx: /big whole" "http://127.0.0.1:$fport/big" 200 "$T/big.exp" text/plain
else
	not_ok "nginx starts in front of the activated evfcgid"
fi

# Refusals: the variables are checked, not trusted.
exits_with "LISTEN_FDS not a number: refused, says so" 1 'LISTEN_FDS=x: not a count' \
	bash -c 'export LISTEN_PID=$$ LISTEN_FDS=x; exec "$0" --allow-root' "$EVFCGID"
exits_with "fd 3 not a listening socket: refused, says so" 1 'fd 3 is not a listening socket' \
	bash -c 'export LISTEN_PID=$$ LISTEN_FDS=1; exec 3</dev/null; exec "$0" --allow-root' "$EVFCGID"
exits_with "LISTEN_PID of another process: ignored (no socket, fd 0 not one either)" 2 \
	'no socket from systemd' \
	bash -c 'export LISTEN_PID=1 LISTEN_FDS=1; exec "$0" --allow-root' "$EVFCGID"

finish
