#!/bin/bash
# The daemon under valgrind's memcheck through a smoke of everything it
# serves: every route, load on kept and closed connections, a slow reader
# cut short, garbage, an abort, then SIGTERM.  Zero errors and nothing
# lost (definitely or indirectly) when it exits.
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/http.sh"
FCGI_LOAD=$TOP/tools/fcgi_load

EVFCGID_PORT=$(freeport)
EVFCGID_LOG=$T/valgrind.log
spawn valgrind --quiet --leak-check=full --show-leak-kinds=definite,indirect \
	--errors-for-leak-kinds=definite,indirect --error-exitcode=99 \
	"$EVFCGID" --listen "127.0.0.1:$EVFCGID_PORT" --max-input 1m \
	--header-timeout 1 2>"$EVFCGID_LOG"
EVFCGID_PID=$SPAWNED
wait_port "$EVFCGID_PORT" 30
A=127.0.0.1:$EVFCGID_PORT
for u in /hello /big "/size?100000" "/stream?70000" "/sleep?10" /status /nope; do
	fcgi_req "$A" "$u" >/dev/null 2>&1
done
pattern 100000 >"$T/body"
fcgi_req "$A" /echo "$T/body" | body_of >"$T/echoed"
check "under memcheck: /echo returns 100000 bytes" same_file "$T/body" "$T/echoed"
"$FCGI_LOAD" -c 4 -k -m 4 -n 400 "$A" /big >"$T/load1" 2>&1
"$FCGI_LOAD" -c 4 -n 100 "$A" "/size?70000" >"$T/load2" 2>&1
check "under memcheck: 400 kept and multiplexed /big answered" grep -q '^requests: 400' "$T/load1"
check "under memcheck: 100 closed /size answered" grep -q '^requests: 100' "$T/load2"
# A slow reader given up, a request cut mid-PARAMS, garbage.
"$FCGI_LOAD" -c 1 --rcvbuf 4096 --read-size 512 --pause 50 -t 1 "$A" "/size?10000000" >/dev/null 2>&1
printf '\1\1\0\1\0\10\0\0\0\1\1\0\0\0\0\0\1\4\0\1\0\20' >/dev/tcp/127.0.0.1/$EVFCGID_PORT
printf 'GET / HTTP/1.1\r\n\r\n' >/dev/tcp/127.0.0.1/$EVFCGID_PORT
# Bodies above --max-input: refused, what they held let go.
head -c 900000 /dev/zero >"$T/big"
fcgi_req "$A" /echo "$T/big" >/dev/null 2>&1 &
first=$!
fcgi_req "$A" /echo "$T/big" >/dev/null 2>&1
wait "$first"
sleep 1.5
kill -TERM "$EVFCGID_PID"
wait "$EVFCGID_PID"
rc=$?
grep -E '==[0-9]+==' "$EVFCGID_LOG" | head -n 30 | sed 's/^/# /'
echo "# $(grep -E "^(requests|rps)" "$T/load1" | tr "\n" " ")"
check "memcheck: no error and nothing lost at exit (exit $rc)" test "$rc" -eq 0
finish
