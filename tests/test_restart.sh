#!/bin/bash
# Restarts behind nginx under load, with two evfcgid in one upstream (as
# nginx.conf.example shows; nginx's fastcgi_next_upstream error timeout,
# its default, sends a request whose daemon went away to the other, and
# max_fails=1 fail_timeout=2s leaves that daemon alone for 2 s):
# SIGTERM to one (it drains within its deadline), a rolling restart of
# both, zero failed requests; and the figure for a kill -9 of one.
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/frontends.sh"
HTTP_LOAD=$TOP/tools/http_load

# backend NAME: starts evfcgid on the port in PORT_NAME; sets PID_NAME.
backend() {
	local port_var=PORT_$1 pid_var=PID_$1
	spawn "$EVFCGID" --listen "127.0.0.1:${!port_var}" --drain-timeout 5 \
		-q 2>>"$T/evfcgid.$1.log"
	printf -v "$pid_var" %s "$SPAWNED"
	wait_port "127.0.0.1:${!port_var}"
}

# load SECONDS OUT: http_load on /hello through nginx in the background,
# open loop: RATE fetches a second, each on a connection of its own,
# whatever the answers' pace (a closed loop of 10 in flight made some 7000
# a second here and spent 12 processor-seconds on a 12 s test; what is
# judged is that none fails, not how many there are).
RATE=400
load() {
	"$HTTP_LOAD" -rate "$RATE" -jitter -seconds "$1" "$T/urls" >"$2" 2>"$2.err" &
	LOAD_PID=$!
}

# failed OUT: fetches not answered 200 (other codes, errors, bad bytes).
failed() {
	awk '/ fetches, / { n = $1 } $1 == "code" && $2 == 200 { ok = $4 }
	     END { print n - ok }' "$1"
}

read -r PORT_A PORT_B NGINX_PORT <<<"$(freeport 3 | tr '\n' ' ')"
backend A
backend B
nginx_conf "$T/ng" "$NGINX_PORT" "127.0.0.1:$PORT_A,127.0.0.1:$PORT_B" || exit 1
start_nginx "$T/ng" || exit 1
echo "http://127.0.0.1:$NGINX_PORT/hello" >"$T/urls"

# --- A rolling restart under load: zero failed requests.
load 7 "$T/rolling"
sleep 1
t0=$(now_ns)
kill -TERM "$PID_A"
wait "$PID_A"
rc=$?
ms=$(ms_since "$t0")
check "SIGTERM under load: A exits 0 within its 5 s drain deadline ($rc, $ms ms)" \
	test "$rc" -eq 0 -a "$ms" -lt 5500
backend A
# nginx tries A again fail_timeout (2 s) after its last refusal: B waits
# until then, or both are "down" at once.
sleep 3
kill -TERM "$PID_B"
wait "$PID_B"
check "SIGTERM under load: B exits 0" test $? -eq 0
backend B
wait "$LOAD_PID"
echo "# rolling restart: $(head -n 1 "$T/rolling"); $(grep -c . "$T/rolling.err") error lines"
n=$(failed "$T/rolling")
check "rolling restart of both under load: 0 failed requests ($n)" test "$n" -eq 0
check "rolling restart: http_load reported no error" test ! -s "$T/rolling.err"
echo "# nginx statuses: $(awk '{ print $9 }' "$T/ng/access.log" | sort | uniq -c | tr -s ' \n' ' ')"
grep -E 'error|warn' "$T/ng/error.log" | tail -n 3 | sed 's/^/# nginx: /'
# 499: http_load stopping at its time with fetches still in flight.
bad=$(awk '$9 != 200 && $9 != 499' "$T/ng/access.log" | wc -l)
check "rolling restart: nginx logged no answer but 200 ($bad)" test "$bad" -eq 0

# --- kill -9 of one under load: the figure (nginx retries what it can).
load 4 "$T/kill9"
sleep 1
{ kill -9 "$PID_A"; wait "$PID_A"; } 2>/dev/null
wait "$LOAD_PID"
n=$(failed "$T/kill9")
echo "# kill -9 of one of two under load: $n failed of $(awk '/ fetches, / { print $1 }' "$T/kill9") ($(head -n 1 "$T/kill9"))"
# 4 s at RATE: 1600 started, most answered.
check "kill -9 of one: B went on serving (most fetches answered)" \
	test "$(awk '$1 == "code" && $2 == 200 { print $4 }' "$T/kill9")" -gt $((RATE * 4 / 2))
finish
