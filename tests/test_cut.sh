#!/bin/bash
# tests/test_cut.sh: a cut answer never reaches a client as a whole one.
# Behind nginx as nginx.conf.example sets it up (fastcgi_buffering off,
# kept upstream connections), a producer-streamed CSV export cut at the
# drain deadline reached curl as a complete chunked answer (exit 0): the
# FastCGI connection closed without END_REQUEST, at a record boundary, and
# nginx ended the answer cleanly (issue 27).  An answer the engine cuts
# now resets the connection (SO_LINGER 0), which every front end reports.
# Behind nginx, lighttpd, Apache and Caddy, each from its example config:
#   - tests/bin/export_app's /cut (evfcgi_respond_error after the header)
#     and /short (a body short of its Content-Length);
#   - its /export and the daemon's /stream, read at 4 MB/s, at the drain
#     deadline (1 s after SIGTERM).
# curl must not exit 0 (or the front end answers 5xx); Caddy 2 (Go's
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

declare -A APP_URL DAEMON_URL APP_PID DAEMON_PID FE_LOG
for fe in "${FRONTS[@]}"; do
	port=$(freeport)
	spawn "$APP" --listen "127.0.0.1:$port" --drain-timeout 1 2>"$T/app.$fe.log"
	APP_PID[$fe]=$SPAWNED
	wait_port "$port"
	start_fe "$fe" "$fe (export_app)" "127.0.0.1:$port" || continue
	APP_URL[$fe]=$URL
	case $fe in
	caddy) FE_LOG[$fe]=$FE_DIR/stderr ;;
	*) FE_LOG[$fe]=$FE_DIR/error.log ;;
	esac
	start_evfcgid --drain-timeout 1
	DAEMON_PID[$fe]=$EVFCGID_PID
	start_fe "$fe" "$fe (evfcgid)" "127.0.0.1:$EVFCGID_PORT" || continue
	DAEMON_URL[$fe]=$URL
done

# got FE NAME RC [STATUS]: reports curl's exit RC for NAME behind FE: a
# cut is reported when curl fails, or the front end answered an error
# status instead.  Caddy's chunked answers (/cut, /export) are only
# reported: their check is Caddy's log.
got() {
	local fe=$1 name=$2 rc=$3 status=${4:-200}
	if [ "$fe" = caddy ] && [[ $name = /cut* || $name = /export* ]]; then
		echo "# caddy: $name: curl exit $rc, HTTP $status"
	else
		check "$fe: $name: reported as cut (curl exit $rc, HTTP $status)" \
			test "$rc" -ne 0 -o "$status" -ge 500
	fi
}

for fe in "${!APP_URL[@]}"; do
	for what in cut short; do
		status=$(curl -sS -o "$T/$what.$fe" -w '%{http_code}' --max-time 10 \
			"${APP_URL[$fe]}/$what?30000" 2>/dev/null)
		rc=$?
		got "$fe" "/$what (after $(wc -c <"$T/$what.$fe") bytes)" $rc "$status"
	done
done

# The drain deadline: every download at once, then SIGTERM to every server.
declare -A CURL
for fe in "${!APP_URL[@]}"; do
	curl -sS -o /dev/null --limit-rate 4M --max-time 20 \
		"${APP_URL[$fe]}/export?3000000" 2>/dev/null &
	CURL[$fe.export]=$!
	[ -n "${DAEMON_URL[$fe]}" ] || continue
	curl -sS -o /dev/null --limit-rate 4M --max-time 20 \
		"${DAEMON_URL[$fe]}/stream?200000000" 2>/dev/null &
	CURL[$fe.stream]=$!
done
sleep 1
kill -TERM "${APP_PID[@]}" "${DAEMON_PID[@]}" 2>/dev/null
for k in "${!CURL[@]}"; do
	wait "${CURL[$k]}"
	rc=$?
	fe=${k%.*}
	got "$fe" "/${k#*.} at the drain deadline" $rc
done
if [ -n "${APP_URL[caddy]}" ]; then
	n=$(grep -c 'aborting with incomplete response' "${FE_LOG[caddy]}")
	check "caddy: its log says it aborted the cut chunked answers ($n times)" test "$n" -ge 2
fi
finish
