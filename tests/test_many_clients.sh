#!/bin/bash
# Many slow readers at once, reduced to seconds: 300 FastCGI connections
# each reading an 8 MiB /stream 4 KiB at a time, beside fast /hello
# requests, against --max-queued 16m (the defaults' 128m would hold 300
# readers at --high-water each and show nothing).  Before shares every
# connection could queue --high-water (256 KiB): the cap was full at 64
# readers and every new request got 503.  With them the 300 share 7/8 of
# the cap (about 48 KiB each), the rest is kept for connections that
# drain, and no request is refused.  Memory per slow client is reported:
# evfcgid's queue and RSS growth (user), and the kernel's buffers of both
# ends of each connection (ss -m: receive and send queues).
# tools/many-slow-clients is the full run (thousands, shaped links,
# nginx in front): docs/daemon.md has its table.  Then the spike over a
# unix socket: the holders' kernel send buffers are cut to the floor's
# quarter while shares are below --high-water.
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/http.sh"
FCGI_LOAD=$TOP/tools/fcgi_load
N=300

start_evfcgid --max-queued 16m
addr=127.0.0.1:$EVFCGID_PORT
rss0=$(rss_kib "$EVFCGID_PID")
"$FCGI_LOAD" -q -c $N -n $N --rcvbuf 4096 --read-size 4096 --pause 100 \
	-t 20 "$addr" '/stream?8388608' >/dev/null 2>&1 &
slow=$!
PIDS+=("$slow")
# holding: the connections that hold output their reader did not take.
holding_at_least() {
	local h
	read -r h <<<"$(status_of "$addr" holding_sockets)"
	[ "${h:-0}" -ge "$1" ]
}
wait_until 6 holding_at_least $((N * 9 / 10))
"$FCGI_LOAD" -c 4 -n 200 "$addr" /hello >"$T/fast" 2>&1
fast=$(awk '$1 == "status" && $2 == "200:" { print $3 }' "$T/fast")
read -r holding share queued r503 high <<<"$(status_of "$addr" \
	holding_sockets share_bytes bytes_queued 503 high_water)"
rss1=$(rss_kib "$EVFCGID_PID")
# The kernel's side: r (receive queue) and w (send queue) of every socket of
# these connections, both ends.
kern=$(ss -tmn "( sport = :$EVFCGID_PORT or dport = :$EVFCGID_PORT )" 2>/dev/null |
	grep -o 'skmem:([^)]*)' |
	awk -F'[(,)]' '{ for (i = 2; i <= NF; i++) { if ($i ~ /^r[0-9]/) s += substr($i, 2); if ($i ~ /^w[0-9]/) s += substr($i, 2) } } END { print s + 0 }')
user_q=$(( queued / N / 1024 ))
user_rss=$(( (rss1 - rss0) / N ))
kern_kib=$(( kern / N / 1024 ))
echo "# $N slow readers: holding $holding, share $share B, queued $queued B, 503 $r503, fast /hello 200: ${fast:-0} of 200"
echo "# per slow client: evfcgid queue $user_q KiB, RSS growth $user_rss KiB, kernel (both ends) $kern_kib KiB"
check "most slow readers hold output ($holding of $N)" test "${holding:-0}" -ge $((N * 9 / 10))
check "the share shrank below --high-water ($share < $high)" test "${share:-0}" -lt "${high:-0}"
check "no 503 ($r503)" test "${r503:-1}" -eq 0
check "every fast /hello answered 200 (${fast:-0} of 200)" test "${fast:-0}" -eq 200
# A connection above a share that shrank gives nothing back; it stops
# queueing: at most --high-water each, and the sum near the cap.
check "evfcgid's queue per slow client within the share plus a record ($user_q KiB)" \
	test "$queued" -le $(( N * (share + 65536) ))
check "evfcgid's RSS growth per slow client at most 96 KiB ($user_rss KiB)" \
	test "$user_rss" -le 96
# In a spike a holder's unsent bytes in the kernel are capped at
# --share-floor (TCP_NOTSENT_LOWAT), once what it queued before (up to
# --sndbuf doubled) is read: about 100 KiB each without.
# evf_sendq: what evfcgid's end of these connections holds in its send
# queues (w: queued, sent or not), in all.
evf_sendq() {
	ss -tmn "( sport = :$EVFCGID_PORT )" 2>/dev/null | grep -o 'skmem:([^)]*)' |
		awk -F'[(,)]' '{ for (i = 2; i <= NF; i++) if ($i ~ /^w[0-9]/) s += substr($i, 2) } END { print s + 0 }'
}
wait_until 10 eval 'test "$(evf_sendq)" -le $((N * 24576))'
evf_kern=$(evf_sendq)
echo "# evfcgid's send queues: $((evf_kern / N / 1024)) KiB a slow reader"
check "evfcgid's send queues hold at most 32 KiB a slow reader ($((evf_kern / N / 1024)) KiB)" \
	test "$evf_kern" -le $((N * 32768))
kill "$slow" 2>/dev/null
wait "$slow" 2>/dev/null
# The spike over (the last holder's answers out), its heap goes back to
# the system: glibc kept it, and the RSS stayed at the peak for good.
wait_until 5 eval '! holding_at_least 1'
rss2=$(rss_kib "$EVFCGID_PID")
peak=$(status_of "$addr" peak_bytes_queued)
echo "# the spike over (peak queued $peak B): RSS $rss0 KiB before, $rss1 KiB at the peak, $rss2 KiB after"
# docs/daemon.md, "The memory bound": 9/8 of the cap, two floors a holder
# (at most the N readers), one producer call (--high-water).
bound=$(( (16 << 20) * 9 / 8 + 2 * 8192 * N + 262144 ))
check "the peak queued within the memory bound ($peak <= $bound)" \
	test "${peak:-999999999}" -le "$bound"
check "the spike over, evfcgid's RSS back within 4 MiB of before ($rss0 -> $rss1 -> $rss2 KiB)" \
	test "$rss2" -le $((rss0 + 4096))

# The same spike over a unix socket (the examples' upstream): each holder's
# send buffer is cut to half --share-floor (4k, 8 KiB once the kernel
# doubles it) while the shares are below --high-water, and given
# back (a quarter of --sndbuf: 32 KiB) when it holds no more.  ss names
# evfcgid's end of each connection by the socket's path.
sock=$T/many.sock
spawn "$EVFCGID" --listen "unix:$sock" --max-queued 16m 2>"$T/unix.log"
# Until it answers, not until its socket file is there: a fresh clone's
# loaded make check once found nothing answering at the next step.
wait_until 10 fcgi_hello "$sock" || sed 's/^/# evfcgid: /' "$T/unix.log"
"$FCGI_LOAD" -q -c $N -n $N --read-size 4096 --pause 100 \
	-t 20 "unix:$sock" '/stream?8388608' >/dev/null 2>&1 &
slow=$!
PIDS+=("$slow")
addr=$sock
wait_until 6 holding_at_least $((N * 9 / 10))
# tb_count SIZE: evfcgid's connections whose send buffer is SIZE bytes.
tb_count() { unix_sndbufs "$sock" | grep -cx "$1"; }
# thin_count: those whose send buffer is cut to 8 KiB or less.
thin_count() { unix_sndbufs "$sock" | awk '$1 <= 8192 { n++ } END { print n + 0 }'; }
wait_until 6 eval 'test "$(thin_count)" -ge $((N * 9 / 10))'
thin=$(thin_count) whole=$(tb_count 32768)
sizes=$(unix_sndbufs "$sock" | sort -n | uniq -c | sort -rn | head -n 3 | awk '{ printf "%s%s x %s B", s, $1, $2; s = ", " }')
read -r holding share high <<<"$(status_of "$addr" holding_sockets share_bytes high_water)"
echo "# unix socket: $holding holding, share $share B: $thin send buffers of 8 KiB or less, $whole of 32 KiB ($sizes)"
check "unix socket: the share is below --high-water ($share < $high)" test "${share:-0}" -lt "${high:-0}"
check "unix socket: the holders' send buffers are cut to 8 KiB or less ($thin of $N)" test "$thin" -ge $((N * 9 / 10))
# A fast reader among them (64 KiB every 10 ms: its share drained to the
# low mark in a few milliseconds, not CONN_THIN_MS) holds too, since a
# stream does not fit its buffer, but keeps the buffer: thinned, it read
# 8 KiB a wake-up, and fast clients beside 3000 slow ones kept 0.67 of
# their twin (tools/many-slow-clients --link loopback).
"$FCGI_LOAD" -q -c 1 -n 1 --read-size 65536 --pause 10 -t 10 "unix:$sock" \
	'/stream?268435456' >/dev/null 2>&1 &
fast=$!
PIDS+=("$fast")
wait_until 5 eval 'test "$(tb_count 32768)" -ge 1'
check "unix socket: a fast reader in the spike keeps a quarter of --sndbuf ($(tb_count 32768) of 32 KiB)" \
	test "$(tb_count 32768)" -eq 1
kill "$fast" "$slow" 2>/dev/null
wait "$fast" 2>/dev/null
wait "$slow" 2>/dev/null
# A holder whose answer is out gets its buffer back: one reader alone.
"$FCGI_LOAD" -q -c 1 -n 1 --read-size 4096 --pause 100 -t 3 "unix:$sock" '/stream?8388608' >/dev/null 2>&1 &
slow=$!
PIDS+=("$slow")
wait_until 5 eval 'test "$(tb_count 32768)" -ge 1'
check "unix socket: a holder alone keeps a quarter of --sndbuf ($(tb_count 32768) of 32 KiB, $(thin_count) cut)" \
	eval 'test "$(tb_count 32768)" -eq 1 && test "$(thin_count)" -eq 0'
kill "$slow" 2>/dev/null
wait "$slow" 2>/dev/null

# /stream, the demo's generator, makes what its room asks for (4 KiB at
# least): a slow reader's queue stays within its high mark and one least
# write.  Whole 16 KiB chunks passed it by up to a chunk: at 10,000 slow
# readers 3 KiB each of evfcgid's queue, a sixth of a share.  A high mark
# of 20k: whole chunks would reach 32 KiB.
sock=$T/room.sock
spawn "$EVFCGID" --listen "unix:$sock" --high-water 20k --low-water 5k 2>"$T/room.log"
wait_until 10 fcgi_hello "$sock" || sed 's/^/# evfcgid: /' "$T/room.log"
"$FCGI_LOAD" -q -c 1 -n 1 --read-size 4096 --pause 500 -t 3 "unix:$sock" '/stream?8388608' >/dev/null 2>&1 &
slow=$!
PIDS+=("$slow")
wait "$slow" 2>/dev/null
read -r peak written <<<"$(status_of "$sock" peak_bytes_queued bytes_written)"
echo "# /stream to a slow reader behind --high-water 20k: at most $peak bytes queued ($written written)"
[ -n "$peak" ] || sed 's/^/# evfcgid: /' "$T/room.log"
check "/stream to a slow reader: it was served (${written:-0} bytes written)" test "${written:-0}" -gt 20480
check "/stream's queue stays within the high mark and 4 KiB ($peak <= 20480 + 4096 + 64)" \
	test "${peak:-999999}" -le $((20480 + 4096 + 64))
finish
