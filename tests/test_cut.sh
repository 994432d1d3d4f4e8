#!/bin/bash
# tests/test_cut.sh: a cut answer never reaches a client as a whole one.
# Behind nginx as nginx.conf.example sets it up (fastcgi_buffering off,
# kept upstream connections), a producer-streamed CSV export cut at the
# drain deadline reached curl as a complete chunked answer (exit 0): the
# FastCGI connection closed without END_REQUEST, at a record boundary, and
# nginx ended the answer cleanly (issue 27).  Over TCP a reset (SO_LINGER
# 0) is an upstream error; over a unix socket, the transport nginx.conf.
# example ships, a reset is only an EOF, and nginx took it for the end
# (issue 35: curl exit 0, or a hang until nginx's keep-alive timeout).  A
# cut answer now ends with the cut mark, a record header of version 0
# that no front end can take, before the reset.
# Behind nginx, lighttpd and Apache over TCP and over a unix socket, and
# Caddy over TCP, each from its example config:
#   - tests/bin/export_app's /cut (evfcgi_respond_error after the header)
#     and /short (a body short of its Content-Length);
#   - its /export and the daemon's /stream, read at 4 MB/s, at the drain
#     deadline (1 s after SIGTERM).  export_app's main returns right after
#     evfcgi_run(), as README's does: the engine itself cuts at the
#     deadline, not evfcgi_server_free().
# curl must not exit 0 (or the front end answers 5xx), and must end within
# CUT_SECS of the cut, far below nginx's 75 s keep-alive (the times are
# printed: nginx and lighttpd well within a second or two, Apache at its
# KeepAliveTimeout of 5 s, over either transport); Caddy 2 (Go's
# net/http) ends a chunked answer whose backend failed with the closing
# chunk all the same, so for those its log must say it aborted them.  The
# answers are large: kernel buffers on loopback grow to megabytes, and a
# cut the client has not reached yet is still a cut.
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/http.sh"
source "$(dirname "$0")/frontends.sh"

command -v curl >/dev/null || { not_ok "curl is installed"; finish; }
APP=$TOP/tests/bin/export_app
FRONTS=()
for fe in nginx lighttpd apache caddy; do
	bin=${fe^^}
	if [ -x "${!bin}" ]; then FRONTS+=("$fe"); else not_ok "$fe is installed (${!bin}; make deps)"; fi
done

# A cut that passed for an EOF ended at nginx's 75 s keep-alive timeout;
# Apache ends a cut answer at its own KeepAliveTimeout (5 s).  The bound
# is far from both, so that a slow machine does not fail it.
CUT_SECS=30
# Apache's children (www-data) reach the unix sockets in $T, as
# test_apache.sh lets them.
chmod 0711 "$T"
# Each case is FRONT_END.TRANSPORT (tcp or unix).
declare -A APP_URL DAEMON_URL APP_PID DAEMON_PID FE_LOG
for fe in "${FRONTS[@]}"; do
	for tr in tcp unix; do
		[ "$fe.$tr" = caddy.unix ] && continue
		k=$fe.$tr
		if [ $tr = tcp ]; then
			port=$(freeport)
			addr=127.0.0.1:$port
		else
			addr=unix:$T/app.$k.sock
		fi
		spawn "$APP" --listen "$addr" --drain-timeout 1 2>"$T/app.$k.log"
		APP_PID[$k]=$SPAWNED
		wait_port "$addr"
		start_fe "$fe" "$k (export_app)" "$addr" || continue
		APP_URL[$k]=$URL
		case $fe in
		caddy) FE_LOG[$k]=$FE_DIR/stderr ;;
		*) FE_LOG[$k]=$FE_DIR/error.log ;;
		esac
		if [ $tr = tcp ]; then
			start_evfcgid --drain-timeout 1
			addr=127.0.0.1:$EVFCGID_PORT
		else
			addr=unix:$T/evfcgid.$k.sock
			EVFCGID_LOG=$T/evfcgid.$k.log
			spawn "$EVFCGID" --listen "$addr" --socket-mode 0666 \
				--drain-timeout 1 2>"$EVFCGID_LOG"
			EVFCGID_PID=$SPAWNED
			wait_port "$addr"
		fi
		DAEMON_PID[$k]=$EVFCGID_PID
		start_fe "$fe" "$k (evfcgid)" "$addr" || continue
		DAEMON_URL[$k]=$URL
	done
done

# got CASE NAME RC SECS [STATUS]: reports curl's exit RC for NAME behind
# CASE (FRONT_END.TRANSPORT): a cut is reported when curl fails, or the
# front end answered an error status instead, within CUT_SECS.  Caddy's
# chunked answers (/cut, /export) are only reported: their check is
# Caddy's log.
got() {
	local k=$1 name=$2 rc=$3 secs=$4 status=${5:-200}
	if [[ $k = caddy.* ]] && [[ $name = /cut* || $name = /export* ]]; then
		echo "# $k: $name: curl exit $rc, HTTP $status, ${secs}s"
	else
		check "$k: $name: reported as cut (curl exit $rc, HTTP $status)" \
			test "$rc" -ne 0 -o "$status" -ge 500
		check "$k: $name: the client saw it in ${secs}s (at most $CUT_SECS)" \
			test "${secs%.*}" -lt "$CUT_SECS"
	fi
}

for k in "${!APP_URL[@]}"; do
	for what in cut short; do
		t0=$EPOCHREALTIME
		status=$(curl -sS -o "$T/$what.$k" -w '%{http_code}' --max-time 100 \
			"${APP_URL[$k]}/$what?30000" 2>/dev/null)
		rc=$?
		secs=$(awk -v a="$t0" -v b="$EPOCHREALTIME" 'BEGIN { printf "%.2f", b - a }')
		got "$k" "/$what (after $(wc -c <"$T/$what.$k") bytes)" $rc "$secs" "$status"
	done
done

# The drain deadline: every download at once, then SIGTERM to every server.
# Each curl writes its exit status and when it ended.
CURLS=()
for k in "${!APP_URL[@]}"; do
	( curl -sS -o /dev/null --limit-rate 4M --max-time 100 \
		"${APP_URL[$k]}/export?3000000" 2>/dev/null
	  echo "$? $EPOCHREALTIME" >"$T/end.$k.export" ) &
	CURLS+=($!)
	[ -n "${DAEMON_URL[$k]}" ] || continue
	( curl -sS -o /dev/null --limit-rate 4M --max-time 100 \
		"${DAEMON_URL[$k]}/stream?200000000" 2>/dev/null
	  echo "$? $EPOCHREALTIME" >"$T/end.$k.stream" ) &
	CURLS+=($!)
done
sleep 1
t0=$EPOCHREALTIME
kill -TERM "${APP_PID[@]}" "${DAEMON_PID[@]}" 2>/dev/null
wait "${CURLS[@]}"
for f in "$T"/end.*; do
	k=${f#"$T"/end.}
	read -r rc t1 <"$f"
	# The deadline is 1 s after SIGTERM, the cut's grace 1 s more.
	secs=$(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.2f", b - a - 1 }')
	got "${k%.*}" "/${k##*.} at the drain deadline" "$rc" "$secs"
done
for k in "${!APP_PID[@]}"; do
	grep -h "drain deadline" "$T/app.$k.log" | sed "s/^/# $k export_app: /"
done
if [ -n "${APP_URL[caddy.tcp]}" ]; then
	n=$(grep -c 'aborting with incomplete response' "${FE_LOG[caddy.tcp]}")
	check "caddy: its log says it aborted the cut chunked answers ($n times)" test "$n" -ge 2
fi
finish
