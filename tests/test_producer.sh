#!/bin/bash
# check: alone (it holds /hello's p99 latency beside misbehaving producers)
# tests/test_producer.sh: no producer holds the loop.  Beside /hello
# clients whose latency fcgi_load measures, each of these runs in turn:
#   - a producer that writes only whole 4000-byte lines and returns 0 when
#     one does not fit (tests/bad_producer /lines, read slowly);
#   - HEAD on the daemon's /stream?1000000000 (its writes send nothing);
#   - a producer that writes without end in one call (/endless).
# The /hello p99 must stay near its baseline (BOUND_MS above it, with
# room for a noisy 2-core machine; a loop held by a producer costs far
# more), every /hello answered.  Then SIGTERM must end the application
# while a misbehaving producer still runs.
. "$(dirname "$0")/lib.sh"

BAD=${BAD_PRODUCER:-$TOP/tests/bin/bad_producer}
LOAD=$TOP/tools/fcgi_load
BOUND_MS=${BOUND_MS:-25}

port=$(freeport)
spawn "$BAD" --listen "127.0.0.1:$port" 2>"$T/bad.log"
BAD_PID=$SPAWNED
wait_port "$port"
start_evfcgid

# hello ADDR: /hello for 2 s on 2 kept connections; sets P99 and N, and
# ERRS (the errors line).
hello() {
	local out
	out=$("$LOAD" -k -c 2 -d 2 --timeout 5 -t 10 "$1" /hello)
	P99=$(sed -n 's/^latency_ms:.*p99=\([0-9.]*\).*/\1/p' <<<"$out")
	N=$(sed -n 's/^requests: //p' <<<"$out")
	ERRS=$(sed -n 's/^errors: //p' <<<"$out")
	P99=${P99:-999999} N=${N:-0}
}

# near NAME BASE: the last hello's p99 within BOUND_MS of BASE, answers
# given and no error.
near() {
	if awk -v p="$P99" -v b="$2" -v m="$BOUND_MS" 'BEGIN { exit !(p <= b + m) }' &&
	    [ "$N" -gt 100 ] && [ "${ERRS%% *}" = 0 ]; then
		ok "$1: /hello p99 ${P99} ms (baseline $2 ms), $N answered"
	else
		not_ok "$1: /hello p99 ${P99} ms (baseline $2 ms, bound +$BOUND_MS), $N answered, errors ${ERRS:-?}"
	fi
}

# beside NAME ADDR BASE LOAD-ARGS...: runs fcgi_load LOAD-ARGS in the
# background while /hello is measured on ADDR.
beside() {
	local name=$1 addr=$2 base=$3 pid
	shift 3
	"$LOAD" -q -d 4 -t 8 --timeout 5 "$@" >/dev/null 2>&1 &
	pid=$!
	sleep 0.5
	hello "$addr"
	near "$name" "$base"
	kill "$pid" 2>/dev/null
	wait "$pid" 2>/dev/null
}

hello "127.0.0.1:$port"
base_app=$P99
check "baseline on the application: $N answered, p99 $P99 ms" \
	eval '[ "$N" -gt 100 ] && [ "${ERRS%% *}" = 0 ]'
hello "127.0.0.1:$EVFCGID_PORT"
base_d=$P99
check "baseline on the daemon: $N answered, p99 $P99 ms" \
	eval '[ "$N" -gt 100 ] && [ "${ERRS%% *}" = 0 ]'

# Read slowly, so that the producer often finds less room than a line.
beside "whole lines only, returning 0 when one does not fit" \
	"127.0.0.1:$port" "$base_app" \
	-c 2 --rcvbuf 4096 --read-size 4096 --pause 1 "127.0.0.1:$port" '/lines?100000'
beside "HEAD /stream?1000000000 on the daemon" \
	"127.0.0.1:$EVFCGID_PORT" "$base_d" \
	-c 2 -p REQUEST_METHOD=HEAD "127.0.0.1:$EVFCGID_PORT" '/stream?1000000000'
beside "a producer writing without end in one call" \
	"127.0.0.1:$port" "$base_app" \
	-c 2 "127.0.0.1:$port" /endless

# HEAD of a gigabyte: answered at once, with its length and no body.
t0=$(now_ns)
capture "$LOAD" -n 1 -t 10 -p REQUEST_METHOD=HEAD -o "$T/head.body" \
	"127.0.0.1:$EVFCGID_PORT" '/stream?1000000000'
ms=$(ms_since "$t0")
check "HEAD /stream?1000000000 answered in $ms ms, no body" \
	eval '[ "$RC" = 0 ] && [ "$ms" -lt 1000 ] && [ ! -s "$T/head.body" ] &&
	    grep -q "^requests: 1$" <<<"$OUT"'

# SIGTERM while a producer waits for room it is not given (a slow reader
# of whole lines) and one writes without end: the application drains
# and exits by its deadline (2 s).
"$LOAD" -q -t 15 --rcvbuf 4096 --read-size 4096 --pause 5 \
	"127.0.0.1:$port" '/lines?1000000' >/dev/null 2>&1 &
slow=$!
"$LOAD" -q -t 15 "127.0.0.1:$port" /endless >/dev/null 2>&1 &
endless=$!
sleep 0.5
t0=$(now_ns)
kill -TERM "$BAD_PID"
if wait_gone 8 "$BAD_PID"; then
	ok "SIGTERM beside misbehaving producers: gone in $(ms_since "$t0") ms"
else
	not_ok "SIGTERM beside misbehaving producers: still running after 8 s"
	kill -KILL "$BAD_PID" 2>/dev/null
fi
kill "$slow" "$endless" 2>/dev/null
wait "$slow" "$endless" 2>/dev/null

# One call of /endless wrote about its room and a high mark at most (the
# defaults: 256 KiB, so room + high mark <= 512 KiB), not 64 MB.
most=$(sed -n 's/^endless: most \([0-9]*\) bytes.*/\1/p' "$T/bad.log")
check "a producer's call is bounded: at most ${most:-?} bytes in one" \
	eval '[ -n "$most" ] && [ "$most" -gt 0 ] && [ "$most" -le $((512 * 1024 + 4000)) ]'

finish
