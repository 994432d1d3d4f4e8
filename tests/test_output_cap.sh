#!/bin/bash
# Every queued byte counts against --max-queued, whatever wrote it (issue
# 36).  Peers that send a request and never read, at a small cap:
#   - the demo's Filter route, 12 Filter requests of 4 MiB of DATA each
#     (it moved each whole DATA stream to the output in one call: 49 MB
#     queued at a cap of 4 MiB);
#   - tests/bin/export_app's /report, one evfcgi_respond() of 3 MiB, 20
#     of them (each was queued whole: 60 MiB at a cap of 8 MiB), and
#     /written, a header and one evfcgi_write() of 3 MiB, cut when refused;
#   - the same /report behind nginx as nginx.conf.example sets it up (its
#     unix socket, buffering off), 40 HTTP clients that never read: a 41st
#     client then gets 503, not 200.
# Each checks the bound docs/daemon.md states ("The memory bound"):
#     bytes_queued <= 9/8 x --max-queued + 2 x --share-floor x holders
#                     + --high-water
#     RSS <= RSS idle + that + the input held (at most --max-input)
#            + 64 KiB per connection
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/http.sh"
source "$(dirname "$0")/frontends.sh"
APP=$TOP/tests/bin/export_app
NOREAD="python3 $TOP/tests/noread.py"
FLOOR=8192
HIGH=262144
[ -x "$APP" ] || { not_ok "tests/bin/export_app is built (make check builds it)"; finish; }

# out_bound CAP HOLDERS: the bound on bytes_queued.
out_bound() { echo $(( $1 + $1 / 8 + 2 * FLOOR * $2 + HIGH )); }

# noread ADDR COUNT ARGS...: COUNT clients that never read (tests/noread.py),
# started in the background; waits until all have sent their requests.
noread() {
	local out=$T/noread.$((++NR_NO))
	$NOREAD "$@" >"$out" 2>&1 &
	PIDS+=("$!")
	wait_until 30 grep -q '^sent' "$out"
}
NR_NO=0

# bounded LABEL ADDR PID RSS0 CAP CONNS: checks bytes_queued and the RSS
# of PID against the bound, with /status of ADDR.
bounded() {
	local label=$1 addr=$2 pid=$3 rss0=$4 cap=$5 conns=$6
	local queued holders peak input rss bound rbound
	read -r queued holders peak input <<<"$(status_of "$addr" \
		bytes_queued holding_sockets peak_bytes_queued peak_bytes_input)"
	rss=$(rss_kib "$pid")
	bound=$(out_bound "$cap" "${holders:-0}")
	rbound=$(( rss0 + (bound + ${input:-0}) / 1024 + 64 * conns ))
	echo "# $label: queued $queued B (peak $peak), $holders holding, input $input B; bound $bound B; RSS $rss0 -> $rss KiB (bound $rbound)"
	check "$label: bytes_queued within the bound ($queued <= $bound)" \
		test "${queued:-999999999999}" -le "$bound"
	check "$label: peak_bytes_queued within the bound ($peak <= $bound)" \
		test "${peak:-999999999999}" -le "$bound"
	check "$label: RSS within the bound ($rss <= $rbound KiB)" \
		test "$rss" -le "$rbound"
}

# --- The demo's Filter route -------------------------------------------
start_evfcgid --max-queued 4m --max-input 64m
addr=127.0.0.1:$EVFCGID_PORT
rss0=$(rss_kib "$EVFCGID_PID")
noread "$addr" 12 fcgi /filtered 3 4194304
holding_at_least() {
	local h
	read -r h <<<"$(status_of "$1" holding_sockets)"
	[ "${h:-0}" -ge "$2" ]
}
wait_until 20 holding_at_least "$addr" 12
bounded "Filter, 12 x 4 MiB never read" "$addr" "$EVFCGID_PID" "$rss0" \
	$((4 << 20)) 13
check "Filter: /hello beside them answers" fcgi_hello "$addr" 5

# --- One evfcgi_respond() of 3 MiB, 20 peers that never read -------------
port=$(freeport)
spawn "$APP" --listen "127.0.0.1:$port" --max-queued 8388608 2>"$T/app.log"
app=$SPAWNED
wait_port "$port"
addr=127.0.0.1:$port
rss0=$(rss_kib "$app")
# begun ADDR N: true once N requests have begun since the last mark(),
# the /status asking not counted (each is a request too).
mark() { read -r BASE <<<"$(status_of "$1" requests_total)"; POLLS=0; }
begun() {
	local n
	read -r n <<<"$(status_of "$1" requests_total)"
	POLLS=$((POLLS + 1))
	[ "${n:-0}" -ge $((BASE + POLLS + $2)) ]
}
mark "$addr"
noread "$addr" 20 fcgi '/report?3145728'
wait_until 20 begun "$addr" 20
read -r ok503 <<<"$(status_of "$addr" 503)"
echo "# /report: $((20 - ${ok503:-0})) of 20 queued, $ok503 answered 503"
check "/report: some answers refused with 503 ($ok503)" test "${ok503:-0}" -ge 10
check "/report: the first ones queued ($((20 - ${ok503:-0})) of 20)" test "${ok503:-20}" -le 18
# The app's own 3 MiB of rows are in its RSS besides.
bounded "/report, 20 x 3 MiB never read" "$addr" "$app" $((rss0 + 3072)) \
	8388608 21
check "/report: /hello beside them answers" fcgi_hello "$addr" 5
# A header, then the body in one write: refused, the answer is cut.
mark "$addr"
noread "$addr" 10 fcgi '/written?3145728'
wait_until 20 begun "$addr" 10
bounded "/written, 10 more never read" "$addr" "$app" $((rss0 + 3072)) \
	8388608 31
check "/written: the refused writes are logged" \
	grep -q 'bytes of output refused' "$T/app.log"

# --- Behind nginx as nginx.conf.example sets it up ----------------------
if command -v curl >/dev/null && [ -x "$NGINX" ]; then
	sock=$T/app.sock
	spawn "$APP" --listen "unix:$sock" --max-queued 8388608 2>"$T/app2.log"
	app=$SPAWNED
	wait_until 5 test -S "$sock"
	rss0=$(rss_kib "$app")
	if start_fe nginx "nginx" "unix:$sock"; then
		hport=${URL##*:}
		mark "$sock"
		noread "127.0.0.1:$hport" 40 http '/report?3145728'
		wait_until 20 begun "$sock" 40
		code=$(curl -s -o /dev/null -m 10 -w '%{http_code}' "$URL/report?3145728")
		check "behind nginx: a 41st client gets 503 ($code)" test "$code" = 503
		bounded "behind nginx, 40 x 3 MiB never read" "$sock" "$app" \
			$((rss0 + 3072)) 8388608 42
		code=$(curl -s -o /dev/null -m 10 -w '%{http_code}' "$URL/hello")
		check "behind nginx: /hello beside them answers 200 ($code)" test "$code" = 200
		stop_fe
	fi
else
	echo "# skipped behind nginx: no curl or no nginx"
fi
finish
