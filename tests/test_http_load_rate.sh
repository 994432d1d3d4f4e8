#!/bin/bash
# check: alone (it holds http_load's rates within 10% of nginx's, ab's and wrk's)
# tests/test_http_load_rate.sh: the rates tools/http_load reports, against
# a real nginx on a loopback port (static files, and /sleep sent on to
# evfcgid): its count and rate against nginx's own log, then the
# acceptance checks: one connection per fetch within 10% of ab, and
# -keepalive within 10% of wrk, where the server sets the rate (at full
# speed http_load must not be slower than ab).  tests/test_http_load.sh
# tries everything else http_load does, beside other tests.
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/http.sh"
source "$(dirname "$0")/frontends.sh"

HTTP_LOAD=$TOP/tools/http_load
for need in "$HTTP_LOAD" "$NGINX" "$TOP/tests/bin/freeport"; do
	if [ ! -x "$need" ]; then
		not_ok "$need is missing (make tools/http_load tests/bin/freeport)"
		finish
	fi
done

# nginx serves $T/www on 127.0.0.1:$PORT; /small logs each request's status
# and end time to $T/nginx/small.log; /sleep goes to evfcgid.
mkdir -p "$T/www"
printf 'Hello World\n' >"$T/www/small"
PORT=$(freeport)
if ! start_evfcgid ||
    ! nginx_static_conf "$T/nginx" "$PORT" "$T/www" many small_log \
	"fastcgi=127.0.0.1:$EVFCGID_PORT" ||
    ! start_nginx "$T/nginx"; then
	not_ok "evfcgid and nginx start"
	cat "$T/nginx/error.log" >&2
	finish
fi
BASE=http://127.0.0.1:$PORT
urls "$T/u.small" "$BASE/small"

# --- accuracy: what http_load reports against what nginx saw ---
# nginx logs each request to /small with its end time, so the server's
# own count and clock say how many fetches happened and at what rate.
# within10 R: true if R (a ratio) is within 10% of 1.
within10() { awk -v r="$1" 'BEGIN { exit !(r >= 0.9 && r <= 1.1) }'; }
# server_says LOG: "COUNT200 RATE" from the log (rate over first to last).
server_says() {
	awk '$1 == 200 { n++ } NR == 1 { t0 = $2 } { t1 = $2 }
	    END { printf("%d %.1f\n", n, (t1 > t0 ? (NR - 1) / (t1 - t0) : 0)) }' "$1"
}
for mode in "" -keepalive; do
	: >"$T/nginx/small.log"
	http_load $mode -parallel 10 -fetches 20000 "$T/u.small"
	read -r n srate < <(server_says "$T/nginx/small.log")
	r=$(ratio "$(rate)" "$srate")
	echo "# ${mode:-connection per fetch}: http_load says $(rate) fetches/sec, nginx saw $n at $srate/s (ratio $r)"
	check "${mode:-connection per fetch}: nginx served exactly the 20000 fetches http_load counts" \
		test "$(fetches) $(code 200) $n" = "20000 20000 20000"
	check "${mode:-connection per fetch}: http_load's fetches/sec within 10% of the rate nginx saw" \
		within10 "$r"
done

# --- acceptance: same URL, same parallelism, against ab and wrk ---
# This machine is shared and switches between speed regimes for seconds at
# a time, which moves every tool alike.  So each round runs the tools back
# to back (order rotating) and yields a ratio; after one discarded warm-up
# round the median of the per-round ratios is held to 10% either way.
#
# Two load tools can only agree where neither is the bottleneck.  With one
# connection per fetch, ab makes half again as many system calls per fetch
# as http_load (strace -c: 2 connect, 4 epoll_ctl, 2 fcntl, 2 read against
# 1, 2, 0, 1), so on two cores ab saturates its own core below nginx's rate
# for a static file and its figure is its own ceiling.  The comparison is
# therefore made on /sleep?10 (nginx, then evfcgid answering after 10 ms),
# where each fetch waits on the server and the rate is set by how well a
# tool keeps its 10 connections busy and how it counts; the static file is
# still measured, and there http_load must not be the slower tool.  The
# wait is 10 ms, not 1: at /sleep?1 (about 2400 fetches/s) a CI machine
# whose cores were busy elsewhere pushed ab against its own ceiling for
# four rounds in seven (1376-1906/s against http_load's 2214-2341), and two
# busy loops beside the test here spread the per-round ratios to 1.157;
# at /sleep?10 (about 800/s) the same busy loops kept them within 0.95-1.08.
N=10
# 5 rounds against ab and 6 against wrk (a whole turn of its three
# orders twice): in the runs here the per-round ratios kept within
# 0.95-1.08 at /sleep?10, so the median of 5 or 6 holds as well as of 7
# or 9 did, in 25 s less of make check.
ROUNDS=5
SLEEP_URL="$BASE/sleep?10"
urls "$T/u.sleep" "$SLEEP_URL"
hl_rate() { "$HTTP_LOAD" -parallel $N -seconds 1 "$@" | awk '/fetches\/sec/ { print $1 }'; }
ab_rate() { ab -q -c $N -t 1 -n 100000000 "$1" 2>/dev/null | awk '/^Requests per second/ { print $4 }'; }
wrk_rate() { wrk -t"$1" -c$N -d1s "$2" | awk '/^Requests\/sec/ { print $2 }'; }
med() { tr ' ' '\n' | grep . | median; }
atleast09() { awk -v r="$1" 'BEGIN { exit !(r >= 0.9) }'; }

# versus_ab URLFILE URL: ROUNDS rounds of http_load and ab; sets H A R RM.
versus_ab() {
	local r h a
	hl_rate "$1" >/dev/null
	ab_rate "$2" >/dev/null
	H= A= R=
	for ((r = 1; r <= ROUNDS; r++)); do
		if ((r % 2)); then
			h=$(hl_rate "$1"); a=$(ab_rate "$2")
		else
			a=$(ab_rate "$2"); h=$(hl_rate "$1")
		fi
		H="$H $h" A="$A $a" R="$R $(ratio "$h" "$a")"
	done
	RM=$(med <<<"$R")
	echo "#   http_load fetches/sec: $H (median $(med <<<"$H"))"
	echo "#   ab requests/sec:       $A (median $(med <<<"$A"))"
	echo "#   per-round ratios:      $R (median $RM)"
}

if command -v ab >/dev/null; then
	echo "# one connection per fetch, server-bound: http_load -parallel $N vs ab -c $N on /sleep?10, $ROUNDS rounds of 1 s"
	versus_ab "$T/u.sleep" "$SLEEP_URL"
	check "http_load (connection per fetch) within 10% of ab -c $N on /sleep?10 (ratio $RM)" within10 "$RM"
	echo "# one connection per fetch, static file at full speed: http_load -parallel $N vs ab -c $N on /small"
	versus_ab "$T/u.small" "$BASE/small"
	check "http_load (connection per fetch) on /small at least 0.9 of ab -c $N (ratio $RM)" atleast09 "$RM"
else
	not_ok "ab (apache2-utils) is installed"
fi

# versus_wrk URLFILE URL: ROUNDS rounds of http_load -keepalive, wrk -t1
# and wrk -t2 (order rotating); sets R1 R2, the median ratios.
versus_wrk() {
	local r k w1 w2 K= W1= W2=
	R1= R2=
	hl_rate -keepalive "$1" >/dev/null
	wrk_rate 1 "$2" >/dev/null
	for ((r = 1; r <= ROUNDS; r++)); do
		case $((r % 3)) in
		0) k=$(hl_rate -keepalive "$1"); w1=$(wrk_rate 1 "$2"); w2=$(wrk_rate 2 "$2") ;;
		1) w1=$(wrk_rate 1 "$2"); w2=$(wrk_rate 2 "$2"); k=$(hl_rate -keepalive "$1") ;;
		2) w2=$(wrk_rate 2 "$2"); k=$(hl_rate -keepalive "$1"); w1=$(wrk_rate 1 "$2") ;;
		esac
		K="$K $k" W1="$W1 $w1" W2="$W2 $w2"
		R1="$R1 $(ratio "$k" "$w1")" R2="$R2 $(ratio "$k" "$w2")"
	done
	echo "#   http_load fetches/sec: $K (median $(med <<<"$K"))"
	echo "#   wrk -t1 requests/sec:  $W1 (median $(med <<<"$W1"))"
	echo "#   wrk -t2 requests/sec:  $W2 (median $(med <<<"$W2"))"
	echo "#   ratios to wrk -t1:     $R1"
	echo "#   ratios to wrk -t2:     $R2"
	R1=$(med <<<"$R1") R2=$(med <<<"$R2")
}

# Keep-alive: as with ab, the tools agree only where the server sets the
# rate.  At full speed on the static file the figures are the clients'
# own ceilings against one nginx worker on two cores: wrk -t1 and wrk -t2
# differed from each other by 20% in one run (33954 vs 28396 requests/s),
# so no tool can be within 10% of both.  There they are printed, not held,
# and only when HTTP_LOAD_STATIC=1 asks for them (17 s of make check that
# judge nothing).
if command -v wrk >/dev/null; then
	ROUNDS=6
	echo "# keep-alive, server-bound: http_load -keepalive -parallel $N vs wrk -c $N on /sleep?10, $ROUNDS rounds of 1 s"
	versus_wrk "$T/u.sleep" "$SLEEP_URL"
	check "http_load -keepalive within 10% of wrk -t1 -c $N on /sleep?10 (ratio $R1)" within10 "$R1"
	check "http_load -keepalive within 10% of wrk -t2 -c $N on /sleep?10 (ratio $R2)" within10 "$R2"
	if [ "${HTTP_LOAD_STATIC:-0}" = 1 ]; then
		ROUNDS=5
		echo "# keep-alive, static file at full speed (printed only): http_load -keepalive vs wrk on /small, $ROUNDS rounds of 1 s"
		versus_wrk "$T/u.small" "$BASE/small"
		echo "#   medians: $R1 to wrk -t1, $R2 to wrk -t2"
	fi
else
	not_ok "wrk is installed"
fi

finish
