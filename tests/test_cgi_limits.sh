#!/bin/bash
# evfcgid --cgi's limits (issue 12), behind nginx with the CGI locations of
# tests/cgi.sh: slow clients downloading large CGI outputs hold the
# daemon's RSS bounded (the programs wait in their own write()), to at
# most a watermark and one read each, and their programs end when the
# clients go; hung programs delay nobody and the time limit ends them
# (logged); --cgi-max and --cgi-queue (a request
# waits, the next gets 503), totals shared among --workers; SIGTERM lets
# a running program finish its answer; --workers; --user (programs run as
# that user) and the warning without it as root.
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/frontends.sh"
source "$(dirname "$0")/cgi.sh"

command -v curl >/dev/null || { not_ok "curl is installed"; finish; }
[ -x "$NGINX" ] || { not_ok "nginx is installed ($NGINX)"; finish; }
cgi_backend_usable evfcgid || { not_ok "evfcgid --cgi: $CGI_SKIP"; finish; }
HTTP_GET=$TOP/tools/http_get

WWW=$T/www
cgi_www "$WWW" || { not_ok "the CGI scripts are copied to $WWW"; finish; }

# start_cgi ARGS...: evfcgid --cgi --cgi-root $WWW/cgi-bin ARGS on a fresh
# address, and nginx in front of it; sets CGI_ADDR, CGI_PID, CGI_LOG,
# CGI_URL.
start_cgi() {
	cgi_addr tcp
	CGI_LOG=$T/evfcgid-cgi.$CGI_NO.log
	cgi_spawn_group "$CGI_LOG" "$CGI_EVFCGID" --cgi --cgi-root "$WWW/cgi-bin" \
		--listen "$CGI_ADDR" --allow 127.0.0.1 "$@" && wait_port "$CGI_ADDR" &&
		start_cgi_nginx "$CGI_ADDR" "$WWW"
}

stop_cgi() {
	stop_cgi_nginx
	stop_cgi_backend
}

# code URL [CURL_ARGS...]: the status of one request (000: none).
code() {
	local url=$1
	shift
	curl -s -o /dev/null -w '%{http_code}' "$@" "$url"
}

# pids_of NAME: the pids of processes running tests/cgi's NAME under $WWW.
pids_of() { cgi_pids "$WWW/cgi-bin/$1"; }

# --- Slow clients: RSS stays bounded, programs block, then end. --------
start_cgi --cgi-timeout 600 || { not_ok "evfcgid --cgi and nginx start"; finish; }
rss0=$(rss_kib "$CGI_PID")
for i in 1 2 3 4; do
	spawn "$HTTP_GET" -b 4096 -r 4096 -p 50 -t 60 -q -o "$T/slow.$i" \
		"$CGI_URL/cgi-bin/big.sh?268435456"
done
sleep 6
rss1=$(rss_kib "$CGI_PID")
got=$(cat "$T"/slow.? | wc -c)
echo "# 4 slow clients of 256 MiB each: daemon RSS $rss0 -> $rss1 KiB, clients have $got bytes"
check "slow clients: the daemon's RSS grew by under 16 MiB ($rss0 -> $rss1 KiB) while 4 clients read 256 MiB outputs slowly" \
	test $((rss1 - rss0)) -lt 16384
check "slow clients: they got far less than the outputs ($got bytes): the programs wait" \
	test "$got" -lt 67108864
running=$(pids_of big.sh)
check "slow clients: their programs are still running, blocked (${running:-none})" test -n "$running"
# A snapshot: the client is still writing its file.
cp "$T/slow.1" "$T/slow.snap"
check "slow clients: what came is the program's output byte for byte ($(stat -c %s "$T/slow.snap") bytes)" \
	test "$(sha256sum <"$T/slow.snap" | cut -d' ' -f1)" = "$(pattern "$(stat -c %s "$T/slow.snap")" | sha256sum | cut -d' ' -f1)"
for p in "${PIDS[@]: -4}"; do
	kill "$p" 2>/dev/null
done
# shellcheck disable=SC2086
check "slow clients gone: their programs are ended within 5 s" \
	eval 'wait_gone 5 '"$running"
check "slow clients gone: the daemon logged why it ended them" \
	grep -q 'big\.sh.*ending it' "$CGI_LOG"
stop_cgi

# --- What a slow client costs: at most a watermark and one read. -------
# evfcgid reads a program's stdout only while the connection's output is
# under its high mark (256 KiB), at most 64 KiB at a time: 320 KiB of
# RSS a slow client at most, allocation included.  (Read 4 KiB at a time
# by evbuffer_read, into chains of 8 KiB, it was 485 KiB; each read in a
# chain of its own, a power of two, 255 to 330, failing here 1 run in 12;
# copied into the queue's packed chains, 227 to 266.)
start_cgi || { not_ok "evfcgid --cgi and nginx start"; finish; }
rss0=$(rss_kib "$CGI_PID")
for i in $(seq 20); do
	spawn "$HTTP_GET" -t 12 -q "$CGI_URL/cgi-bin/big.sh?8388608"
done
sleep 4
peak=0
for i in 1 2 3 4 5; do
	r=$(rss_kib "$CGI_PID")
	((r > peak)) && peak=$r
	sleep 1
done
per=$(( (peak - rss0) / 20 ))
echo "# 20 slow clients at 512 B/s of 8 MiB each: daemon RSS $rss0 -> at most $peak KiB, $per KiB each"
check "20 slow clients: the daemon's RSS grew by at most 320 KiB each ($per KiB)" \
	test "$per" -le 320
for p in "${PIDS[@]: -20}"; do
	kill "$p" 2>/dev/null
done
stop_cgi

# --- Hung programs delay nobody; the time limit ends them. -------------
start_cgi --cgi-timeout 2 || { not_ok "evfcgid --cgi --cgi-timeout 2 starts"; finish; }
for i in 1 2 3; do
	spawn curl -s -o "$T/hang.$i" -D "$T/hang.$i.head" --max-time 10 \
		"$CGI_URL/cgi-bin/hang.sh"
done
sleep 0.3
slowest=0
fails=0
for i in $(seq 20); do
	t0=$(now_ns)
	[ "$(curl -s --max-time 2 "$CGI_URL/cgi-bin/hello.sh")" = "hello from cgi" ] ||
		fails=$((fails + 1))
	ms=$(ms_since "$t0")
	[ "$ms" -gt "$slowest" ] && slowest=$ms
done
check "hung programs: 20 hello.sh beside 3 hung hang.sh all answered ($fails failed), the slowest in $slowest ms (< 500)" \
	eval '[ "$fails" = 0 ] && [ "$slowest" -lt 500 ]'
hpids=""
for i in 1 2 3; do
	wait "${PIDS[$((i - 4))]}" 2>/dev/null
	hpids+=" $(tr -d '\r' <"$T/hang.$i.head" | sed -n 's/^X-Pid: *//Ip')"
done
for p in $hpids; do cgi_own_pid "$p"; done
# shellcheck disable=SC2086
check "hung programs: ended by the time limit (pids$hpids gone)" \
	eval '[ -n "${hpids// /}" ] && wait_gone 3 '"$hpids"
n=$(grep -c 'hang\.sh: time limit of 2 s reached' "$CGI_LOG")
check "hung programs: the time limit is logged for each ($n of 3)" test "$n" -ge 3
stop_cgi

# --- The time limit does not count a slow client's time. ---------------
start_cgi --cgi-timeout 2 || { not_ok "evfcgid --cgi --cgi-timeout 2 starts"; finish; }
# The client gives up after 20 s, not 5: on a busy machine the scan of
# /proc that finds the program took over a second, and a client gone at
# 5 s ends its program (--cgi-kill-grace) before the scan reaches it.
spawn "$HTTP_GET" -b 4096 -r 4096 -p 50 -t 20 -q -o "$T/slowt" \
	"$CGI_URL/cgi-bin/big.sh?268435456"
g=$SPAWNED
spawn curl -s -o /dev/null --max-time 10 "$CGI_URL/cgi-bin/hang.sh"
sleep 4
a=$(stat -c %s "$T/slowt")
running=$(pids_of big.sh)
check "--cgi-timeout 2: a slow client's program still runs after 4 s (${running:-none}), $a bytes in" \
	eval '[ -n "$running" ] && ! grep -q "big\.sh: time limit" "$CGI_LOG"'
check "--cgi-timeout 2: beside it, hang.sh was ended by the limit" \
	grep -q 'hang\.sh: time limit of 2 s reached' "$CGI_LOG"
kill "$g" 2>/dev/null
stop_cgi

# --- --cgi-max and --cgi-queue. -----------------------------------------
start_cgi --cgi-max 2 --cgi-queue 1 --cgi-timeout 20 ||
	{ not_ok "evfcgid --cgi --cgi-max 2 --cgi-queue 1 starts"; finish; }
for i in 1 2; do
	spawn curl -s -o "$T/busy.$i" --max-time 10 "$CGI_URL/cgi-bin/slow.py?8"
done
sleep 0.4
t0=$(now_ns)
spawn sh -c "curl -s -o '$T/queued' -w '%{http_code}' --max-time 10 '$CGI_URL/cgi-bin/hello.sh' >'$T/queued.code'"
q=$SPAWNED
sleep 0.3
c=$(code "$CGI_URL/cgi-bin/hello.sh" --max-time 5)
check "--cgi-max 2 --cgi-queue 1: with two running and one waiting, the next gets 503 ($c)" test "$c" = 503
wait "$q"
ms=$(ms_since "$t0")
check "--cgi-max 2 --cgi-queue 1: the waiting request is answered once a slot is free ($(cat "$T/queued.code"), $ms ms)" \
	eval '[ "$(cat "$T/queued.code")" = 200 ] && [ "$(cat "$T/queued")" = "hello from cgi" ] && [ "$ms" -ge 800 ]'
check "--cgi-max: the 503 is logged" grep -q 'hello\.sh.*--cgi-max' "$CGI_LOG"
stop_cgi

# --- SIGTERM: a running program's answer is finished. -------------------
start_cgi || { not_ok "evfcgid --cgi starts (drain)"; finish; }
spawn curl -s -o "$T/drain" --max-time 10 "$CGI_URL/cgi-bin/slow.py?8"
c=$SPAWNED
sleep 0.5
kill -TERM "$CGI_PID"
wait "$c"
check "SIGTERM: the running slow.py still sends all 8 lines" \
	test "$(cat "$T/drain")" = "$(seq -f 'line %g' 8)"
check "SIGTERM: the daemon exits once it is done" wait_gone 5 "$CGI_PID"
stop_cgi_nginx

# --- --workers 2. -------------------------------------------------------
start_cgi --workers 2 || { not_ok "evfcgid --cgi --workers 2 starts"; finish; }
fails=0
for i in $(seq 10); do
	spawn curl -s -o "$T/w.$i" --max-time 10 "$CGI_URL/cgi-bin/slow.py?3"
done
for i in $(seq 10); do
	wait "${PIDS[$((i - 11))]}"
	[ "$(cat "$T/w.$i")" = "$(seq -f 'line %g' 3)" ] || fails=$((fails + 1))
done
check "--workers 2: 10 slow.py at once all answered whole ($fails not)" test "$fails" = 0
sleep 0.3
zombies=$(ps -o stat= --ppid "$(pgrep -d, -P "$CGI_PID")" 2>/dev/null | grep -c Z)
check "--workers 2: no zombie children left ($zombies)" test "$zombies" = 0
stop_cgi

# --- --cgi-max and --cgi-queue are totals, shared among --workers. -----
# --workers 2 --cgi-max 2 --cgi-queue 0: 8 requests for hold.sh at once
# (each touches its own directory's "started"); at most 2 run, the rest
# get 503 at once.  Before, each worker ran 2 (the man page said
# "programs running at once"): 3 or 4 ran.
start_cgi --workers 2 --cgi-max 2 --cgi-queue 0 ||
	{ not_ok "evfcgid --cgi --workers 2 --cgi-max 2 starts"; finish; }
for i in $(seq 8); do
	mkdir -p "$T/h.$i"
	spawn curl -s -o /dev/null --max-time 20 "$CGI_URL/cgi-bin/hold.sh?$T/h.$i"
	PIDS_H[i]=$SPAWNED
done
sleep 1.5
ran=$(ls "$T"/h.*/started 2>/dev/null | wc -l)
for i in $(seq 8); do : >"$T/h.$i/go"; done
for i in $(seq 8); do wait "${PIDS_H[i]}" 2>/dev/null; done
check "--workers 2 --cgi-max 2: at most 2 programs ran at once, in all ($ran)" \
	eval '[ "$ran" -ge 1 ] && [ "$ran" -le 2 ]'
stop_cgi
out=$(timeout 5 "$CGI_EVFCGID" --cgi --cgi-root "$WWW/cgi-bin" --workers 4 --cgi-max 2 \
	--listen "127.0.0.1:$(freeport)" 2>&1)
rc=$?
check "--workers 4 --cgi-max 2: refused, exit 2, saying why ($rc: $out)" \
	eval '[ "$rc" = 2 ] && grep -q "cgi-max 2 is below --workers 4" <<<"$out"'

# --- Root without --user: a warning. -----------------------------------
if [ "$(id -u)" -eq 0 ]; then
	start_cgi --allow-root || { not_ok "evfcgid --cgi --allow-root starts"; finish; }
	check "as root without --user: a warning says programs run as uid 0 ($(grep -m1 'without --user' "$CGI_LOG"))" \
		grep -q "warning: --cgi as root without --user" "$CGI_LOG"
	stop_cgi
fi

# --- --user: programs run as the user the daemon became. ---------------
if [ "$(id -u)" -eq 0 ] && id nobody >/dev/null 2>&1; then
	chmod 711 "$T"		# nobody must reach $WWW, not list $T
	want="$(id -u nobody) $(id -g nobody) $(id -g nobody)"
	start_cgi --user nobody || { not_ok "evfcgid --cgi --user nobody starts"; finish; }
	got=$(curl -s --max-time 5 "$CGI_URL/cgi-bin/id.sh")
	check "--user nobody: the program runs as nobody, its group alone ($got)" \
		test "$got" = "$want"
	stop_cgi
else
	echo "# not root: --user is not tried (test_ops checks its refusal)"
fi
finish
