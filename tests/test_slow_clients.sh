#!/bin/bash
# (Not "check: alone": it judges no rate, only that each client gets its whole
# answer and the stuck one is cut; its readers need little processor.)
# Slow clients behind the front ends, with the timeouts of the shipped
# configuration scaled down: a client that keeps reading, however slowly,
# gets its whole answer; one that stops reading for good is cut and what
# the daemon held for it is given back.
#
# The scale.  Behind a front end evfcgid sees a slow client's progress only
# in steps of the buffers between them (the front end's, the kernel's send
# and receive buffers, TCP window updates): measured, hundreds of KiB of
# the client's reading pass between two moves of evfcgid's send queue,
# minutes at 512 B/s (tests/bench-slow-steps measures it).  The steps are
# counted in bytes, so a client K times faster than 512 B/s meets them K
# times sooner: reading 512 bytes every 1000/K ms (at most K times
# 512 B/s) against timeouts divided by K is the 512 B/s client against the
# real ones, or harder when it reads slower.  K is 100 behind nginx, whose
# timers may fire up to 300 ms early (NGX_TIMER_LAZY_DELAY), and 500
# behind lighttpd, whose client buffers autotune to 4 MiB: its answer,
# 8 MiB, must be larger than all the buffers on the way: that is the
# kernel's stock TCP buffers' doing (tests/stock-tcp.sh).  With a tcp_wmem
# of 1 MiB by default and 32 MiB at most, lighttpd's pauses between reads
# of evfcgid passed the scaled --write-timeout and a reader was cut.
source "$(dirname "$0")/stock-tcp.sh"
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/http.sh"
source "$(dirname "$0")/frontends.sh"
HTTP_GET=$TOP/tools/http_get
stock_tcp || { ok "# SKIP here $TCP_BUFS, not the kernel's stock ones, which the scale assumes (as root the test makes a namespace with them)"; finish; }

# The shipped timeouts, read where a user reads them.
wt=$("$EVFCGID" --help | tr '\n' ' ' | sed -n -E 's/.*--write-timeout S.* is closed \(([0-9]+)\).*--drain.*/\1/p')
st=$(sed -n -E 's/^[[:space:]]*send_timeout ([0-9]+)s;.*/\1/p' "$NGINX_EXAMPLE")
lt=$(sed -n -E 's/^server\.max-write-idle = ([0-9]+).*/\1/p' "$LIGHTTPD_EXAMPLE")
check "the shipped timeouts found (evfcgid --write-timeout '$wt', nginx send_timeout '$st', lighttpd max-write-idle '$lt')" \
	test -n "$wt" -a -n "$st" -a -n "$lt"
[ "$FAILS" -eq 0 ] || finish

# One evfcgid and one front end per scale; whole seconds are rounded down.
# Two such stacks per front end: one for the slow readers (nginx,
# lighttpd), one for the stuck readers (stuck.nginx, stuck.lighttpd), so
# that both cases run at once, each with a daemon and a log of its own.
declare -A K=([nginx]=100 [lighttpd]=500) SIZE=([nginx]=2097152 [lighttpd]=8388608)
declare -A BACKEND PORT LOG PID CLIENT
for name in nginx lighttpd stuck.nginx stuck.lighttpd; do
	fe=${name#stuck.}
	k=${K[$fe]}
	start_evfcgid --write-timeout $((wt / k))
	BACKEND[$name]=127.0.0.1:$EVFCGID_PORT
	LOG[$name]=$EVFCGID_LOG
	PID[$name]=$EVFCGID_PID
	PORT[$name]=$(freeport)
	if [ "$fe" = nginx ]; then
		[ "$name" = nginx ] &&
			echo "# nginx, scaled by $k: send_timeout $((st * 1000 / k)) ms, evfcgid --write-timeout $((wt / k)) s"
		nginx_conf "$T/$name" "${PORT[$name]}" "${BACKEND[$name]}" workers=1 errlog=info \
			send_timeout=$((st * 1000 / k))ms && start_nginx "$T/$name"
	else
		[ "$name" = lighttpd ] &&
			echo "# lighttpd, scaled by $k: max-write-idle $((lt / k)) s, evfcgid --write-timeout $((wt / k)) s"
		lighttpd_conf "$T/$name" "${PORT[$name]}" "${BACKEND[$name]}" \
			max_write_idle=$((lt / k)) && start_lighttpd "$T/$name"
	fi || { not_ok "$name started"; finish; }
done

# --- Reading slowly: behind each front end one client with http_get's
# tiny receive buffer and one with the kernel's default, all at once.
for fe in nginx lighttpd; do
	for b in 512 0; do
		spawn "$HTTP_GET" -b "$b" -p $((1000 / K[$fe])) -o "$T/body.$fe.$b" \
			"http://127.0.0.1:${PORT[$fe]}/size?${SIZE[$fe]}" >"$T/get.$fe.$b" 2>&1
		CLIENT[$fe.$b]=$SPAWNED
	done
done
# --- A client that stops reading for good: the front end cuts it after
# its (scaled) timeout, closes the backend connection, and evfcgid gives
# back what it held, a watermark at most.  One stuck reader behind each
# front end of the stuck stacks, both at once and while the slow readers
# above read, so that the timeouts run side by side.  Their answer, 64 MiB,
# is more than the buffers on the way can take (the front end's, its
# socket's, autotuned up to tcp_wmem's 4 MiB, and the client's), and what
# evfcgid holds is read once it stands still: while the front end's
# buffers still fill, the queue it shows is still moving.
queued_is() { [ "$(status_of "$1" bytes_queued)" -eq "$2" ]; }
# queued_still BACKEND: true when its queue is above 0 and the same twice,
# 0.3 s apart; STILL is then that count.
queued_still() {
	local a
	a=$(status_of "$1" bytes_queued)
	sleep 0.3
	STILL=$(status_of "$1" bytes_queued)
	[ "${a:-0}" -gt 0 ] && [ "$a" = "$STILL" ]
}
STUCK_SIZE=67108864
declare -A STUCK HELD SINCE
for name in nginx lighttpd; do
	spawn "$HTTP_GET" -p 3600000 "http://127.0.0.1:${PORT[stuck.$name]}/size?$STUCK_SIZE" >/dev/null 2>&1
	STUCK[$name]=$SPAWNED
done
for name in nginx lighttpd; do
	backend=${BACKEND[stuck.$name]}
	STILL=0
	wait_until 5 queued_still "$backend"
	held=$STILL high=$(status_of "$backend" high_water)
	HELD[$name]=$held
	SINCE[$name]=$(now_ns)
	check "behind $name, a stuck reader: evfcgid holds at most a watermark for it ($held bytes)" \
		test "$held" -gt 0 -a "$held" -le $((high + 65536 + 64))
done
for name in nginx lighttpd; do
	backend=${BACKEND[stuck.$name]}
	# 20 s from its own held check, as when they ran one after the other.
	wait_until "$(awk -v ms="$(ms_since "${SINCE[$name]}")" 'BEGIN { printf "%.3f", (20000 - ms) / 1000 }')" \
		queued_is "$backend" 0
	check "behind $name, the stuck reader cut and its ${HELD[$name]} bytes given back (after $(ms_since "${SINCE[$name]}") ms)" \
		queued_is "$backend" 0
	kill "${STUCK[$name]}" 2>/dev/null
done

for c in nginx.512 nginx.0 lighttpd.512 lighttpd.0; do
	fe=${c%.*}
	wait "${CLIENT[$c]}"
	rc=$?
	echo "# $c: $(tr '\n' ' ' <"$T/get.$c")"
	rate=$(sed -n -E 's/.* body=([0-9]+) .*duration_ms=([0-9.]+).*/\1 \2/p' "$T/get.$c" |
		awk '{ printf "%d", ($2 > 0 ? $1 * 1000 / $2 : 0) }')
	pattern "${SIZE[$fe]}" >"$T/expected"
	check "behind $fe, a client reading at ${rate:-?} B/s, $((K[$fe] * 512)) at most (rcvbuf ${c#*.}), got all ${SIZE[$fe]} bytes (rc $rc)" \
		same_file "$T/expected" "$T/body.$c"
done
for fe in nginx lighttpd; do
	check "behind $fe, evfcgid cut no slow reader for lack of progress" \
		sh -c "! grep -q 'no write progress' '${LOG[$fe]}'"
done
check "nginx timed no client out" sh -c "! grep -q 'timed out' '$T/nginx/error.log'"

check "every evfcgid is up" kill -0 "${PID[@]}"
finish
