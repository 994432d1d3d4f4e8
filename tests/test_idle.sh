#!/bin/bash
# tests/test_idle.sh: an idle daemon stays idle.  On one kept FastCGI
# connection with a 4 KiB receive buffer, a large answer read only after
# 1 s (the write blocks, then drains) and then an answer produced outside
# the read callback (a timer's /sleep, or a producer's next turn) left the
# write event registered with its old timeout: libevent's persist closure
# re-adds an event made active by event_active() even after event_del(),
# and on a writable socket the loop then spun, a whole core (200 ticks in
# 2 s on a quiet machine, issue 27) until the peer closed.  Afterwards the daemon must use no
# processor time at all: 0 ticks in 2 s, each sequence against its own
# daemon, all measured over the same 2 s.
source "$(dirname "$0")/lib.sh"
IDLE=$TOP/tests/fcgi_idle.py

# ticks PID: the process's user plus system time so far, in clock ticks.
ticks() { awk '{ print $14 + $15 }' "/proc/$1/stat"; }

# The sequences: the program (the daemon or tests/bin/export_app, whose
# producer pages through a CSV export as a cursor would), then the paths
# asked in turn on one kept connection.
CASES=(
	"evfcgid /size?4000000 /sleep?50"
	"evfcgid /stream?4000000 /sleep?20"
	"export_app /export?100000 /export?1000"
)
pids=()
for i in "${!CASES[@]}"; do
	set -- ${CASES[i]}
	port=$(freeport)
	case $1 in
	evfcgid) spawn "$EVFCGID" --listen "127.0.0.1:$port" 2>"$T/server.$i" ;;
	*) spawn "$TOP/tests/bin/$1" --listen "127.0.0.1:$port" 2>"$T/server.$i" ;;
	esac
	pids[i]=$SPAWNED
	wait_port "$port"
	shift
	spawn python3 "$IDLE" "$port" 30 "$@" >"$T/client.$i"
done
for i in "${!CASES[@]}"; do
	wait_for_line "$T/client.$i" '^idle ' 15
done
for i in "${!CASES[@]}"; do
	before[i]=$(ticks "${pids[i]}")
done
sleep 2
for i in "${!CASES[@]}"; do
	used=$(( $(ticks "${pids[i]}") - before[i] ))
	answered=$(cat "$T/client.$i")
	check "${CASES[i]%% *} idle after ${CASES[i]#* }: $used ticks in 2 s (${answered:-no answer})" \
		test "$used" -eq 0 -a -n "$answered"
done

# --- Behind nginx (nginx.conf.example, one worker so that the answers of
# a sequence share its kept upstream connection): every example app, the
# daemon and tests/bin/export_app, after streamed answers that a client
# read at a limited rate (so the server's writes blocked, then drained)
# and an answer produced later.  All of them idle at once: 0 ticks in 2 s
# (sse's hub ticks at its default 1 s, which costs no tick; at 20 ms it
# cost one now and then).
source "$(dirname "$0")/http.sh"
source "$(dirname "$0")/frontends.sh"
mkdir -p "$T/www"
head -c 4000000 /dev/zero >"$T/www/big"
echo small >"$T/www/small"
# APP ARGS... ; then the curl requests, one per line: CURL_ARGS... PATH.
APPS=(
	"evfcgid"
	"export_app"
	"examples/static_files $T/www"
	"examples/sse"
	"examples/json_api"
	"examples/authorizer"
)
REQS=(
	$'--limit-rate 4M /size?4000000\n/sleep?50'
	$'--limit-rate 4M /export?80000\n/export?1000'
	$'--limit-rate 4M /big\n/small'
	$'--max-time 1 /events\n/stats'
	$'-X POST -H Content-Type:application/json -d {"title":"a"} /api/items\n/api/items'
	'--oauth2-bearer open-sesame /x'
)
apids=() cpids=()
for i in "${!APPS[@]}"; do
	read -ra app <<<"${APPS[i]}"
	port=$(freeport)
	case ${app[0]} in
	evfcgid) bin=$EVFCGID ;;
	export_app) bin=$TOP/tests/bin/export_app ;;
	*) bin=$TOP/${app[0]} ;;
	esac
	spawn "$bin" --listen "127.0.0.1:$port" "${app[@]:1}" 2>"$T/app.$i.log"
	apids[i]=$SPAWNED
	wait_port "$port" || continue
	start_fe nginx "${app[0]}" "127.0.0.1:$port" workers=1 || continue
	(
		while read -ra a; do
			curl -sS -o /dev/null -w "%{http_code} " --max-time 20 \
				"${a[@]:0:${#a[@]}-1}" "$URL${a[-1]}" 2>/dev/null
		done < <(printf '%b\n' "${REQS[i]}")
	) >"$T/curl.$i" &
	cpids[i]=$!
done
for i in "${!cpids[@]}"; do
	wait "${cpids[i]}"
done
sleep 0.2
for i in "${!apids[@]}"; do
	before[i]=$(ticks "${apids[i]}")
done
sleep 2
for i in "${!apids[@]}"; do
	used=$(( $(ticks "${apids[i]}") - before[i] ))
	check "behind nginx: ${APPS[i]%% *} idle: $used ticks in 2 s (answers: $(cat "$T/curl.$i"))" \
		test "$used" -eq 0
done
finish
