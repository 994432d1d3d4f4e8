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
finish
