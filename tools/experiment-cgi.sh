# tools/experiment-cgi.sh: the CGI cells of tools/slow-client-experiment
# (issue 12), sourced by it after tests/lib.sh, tests/frontends.sh and
# tests/cgi.sh.  The CGI backends are `evfcgid --cgi` (evfcgid-cgi) and
# fcgiwrap with 1 and with 4 processes (fcgiwrap1, fcgiwrap4), each behind
# nginx with the CGI location of tests/cgi.sh (fastcgi_buffering off).
# Fast clients fetch CGI_FAST_PATH, a script printing a header and a line;
# slow clients download a large CGI output (big.sh?SIZE) or, in the cells
# whose size is "hang", request a script that sleeps after its header.
#
#   cgi_backend NAME          true if NAME is one of the CGI backends
#   cgi_exp_www DIR           writes DIR/cgi-bin/{small,big,hang}.sh
#   start_cgi_exp_backend S NAME ADDR
#                             starts stack S's CGI backend in a process
#                             group of its own (its scripts with it)
#   stop_cgi_groups           ends those groups
#   start_cgi_exp_nginx S     nginx for stack S; sets FE_PORTS[S]
#   cgi_measure FILE          requests/s on the trivial script (evfcgid-cgi
#                             against fcgiwrap4) and evfcgid's RSS beside
#                             CGI_RSS_SLOW slow downloads, to FILE

CGI_FAST_PATH=/cgi-bin/small.sh
# evfcgid's --cgi-max: above the slow clients of a cell plus the fast
# load, so that the limit (64 by default) is not what is measured.
CGI_EXP_MAX=512
# The measurements: wrk's connections and each slice's seconds, the
# slices per backend, and the slow downloads beside which RSS is taken.
CGI_WRK_CONNS=8
CGI_WRK_SECONDS=2
CGI_WRK_SLICES=3
CGI_RSS_SLOW=100
CGI_GROUPS=()

cgi_backend() { [[ $1 == evfcgid-cgi || $1 == fcgiwrap[14] ]]; }

# cgi_exp_www DIR: makes DIR/cgi-bin with the three scripts the cells run:
# small.sh (the trivial page), big.sh (QUERY_STRING bytes of the demo
# pattern) and hang.sh (its header, then it sleeps until the time
# QUERY_STRING, in seconds since the epoch: when its client gives up, so
# that fcgiwrap's process is free again when the round ends, however many
# hung requests queued for it, and the twin is not held in the next).
cgi_exp_www() {
	mkdir -p "$1/cgi-bin" || return 1
	cat >"$1/cgi-bin/small.sh" <<'EOF'
#!/bin/sh
printf 'Content-Type: text/plain\r\n\r\nhello from cgi\n'
EOF
	cat >"$1/cgi-bin/big.sh" <<'EOF'
#!/bin/sh
case $QUERY_STRING in ''|*[!0-9]*) printf 'Status: 400\r\n\r\n'; exit 0 ;; esac
printf 'Content-Type: application/octet-stream\r\n\r\n'
yes 'abcdefghijklmnopqrstuvwxyz0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZ.' | head -c "$QUERY_STRING"
EOF
	cat >"$1/cgi-bin/hang.sh" <<'EOF'
#!/bin/sh
case $QUERY_STRING in ''|*[!0-9]*) printf 'Status: 400\r\n\r\n'; exit 0 ;; esac
printf 'Content-Type: text/plain\r\n\r\n'
left=$((QUERY_STRING - $(date +%s)))
[ "$left" -gt 0 ] && exec sleep "$left"
EOF
	chmod 755 "$1"/cgi-bin/*.sh
}

# start_cgi_exp_backend S NAME ADDR: stack S's CGI backend NAME on ADDR
# (127.0.0.1:PORT) serving $CGI_WWW, the leader of a new process group
# (recorded for stop_cgi_groups: fcgiwrap's scripts share its group);
# sets BACKEND_PIDS[S]; dies if it does not accept.
start_cgi_exp_backend() {
	local log=$CELL_DIR/backend.$1.log
	case $2 in
	evfcgid-cgi) setsid "$EVFCGID" --cgi --cgi-root "$CGI_WWW" --cgi-max "$CGI_EXP_MAX" \
		--cgi-queue "$CGI_EXP_MAX" --listen "$3" --allow 127.0.0.1 -q 2>>"$log" & ;;
	fcgiwrap1) setsid "$FCGIWRAP" -c 1 -s "tcp:$3" 2>>"$log" & ;;
	fcgiwrap4) setsid "$FCGIWRAP" -c 4 -s "tcp:$3" 2>>"$log" & ;;
	*) die "unknown CGI backend $2" ;;
	esac
	BACKEND_PIDS[$1]=$!
	CELL_PIDS+=("$!")
	CGI_GROUPS+=("$!")
	wait_port "${3##*:}" 10 || die "backend $2 did not start (see $log)"
}

# stop_cgi_groups: SIGTERM to each CGI backend's process group, SIGKILL
# to what is left of them a moment later.
stop_cgi_groups() {
	local g
	[ "${#CGI_GROUPS[@]}" -gt 0 ] || return 0
	for g in "${CGI_GROUPS[@]}"; do kill -TERM -- "-$g" 2>/dev/null; done
	sleep 0.2
	for g in "${CGI_GROUPS[@]}"; do kill -KILL -- "-$g" 2>/dev/null; done
	CGI_GROUPS=()
}

# start_cgi_exp_nginx S: nginx on a free port in front of stack S's CGI
# backend, tests/cgi.sh's configuration with root $CGI_WWW; sets
# FE_PORTS[S] and adds nginx to the cell's processes.
start_cgi_exp_nginx() {
	FE_PORTS[$1]=$(freeport)
	nginx_cgi_conf "$CELL_DIR/fe.$1" "${FE_PORTS[$1]}" "${BACKEND_ADDRS[$1]}" "$CGI_WWW" &&
		start_nginx "$CELL_DIR/fe.$1" || die "nginx for CGI did not start (see $CELL_DIR/fe.$1)"
	CELL_PIDS+=("$NGINX_PID")
}

# cgi_wrk S: wrk's requests/s on stack S's trivial script over
# CGI_WRK_SECONDS with CGI_WRK_CONNS connections, and its failures (non-2xx
# answers and socket errors), as "RPS FAILURES".
cgi_wrk() {
	local out=$CELL_DIR/wrk.$1
	wrk -t 2 -c "$CGI_WRK_CONNS" -d "${CGI_WRK_SECONDS}s" \
		"http://127.0.0.1:${FE_PORTS[$1]}$CGI_FAST_PATH" >"$out" 2>&1
	awk '/^Requests\/sec:/ { r = $2 }
		/Non-2xx or 3xx responses:/ { f += $NF }
		/Socket errors:/ { for (i = 3; i <= NF; i++) if ($i ~ /^[0-9]+,?$/) f += $i }
		END { printf "%s %d\n", (r == "" ? 0 : r), f }' "$out"
}

# cgi_measure FILE: the measurements beside the cells, as "name<TAB>value"
# lines in FILE.  Requests/s: evfcgid-cgi (stack 0) and fcgiwrap4 (stack
# 1) behind nginx, loaded one at a time in alternating order,
# CGI_WRK_SLICES slices each; the medians and their ratio.  RSS: evfcgid's
# alone, then its peak beside CGI_RSS_SLOW slow clients downloading 8 MiB
# each, and how many of their programs were running then.
cgi_measure() {
	local file=$1 i e f ef=0 ff=0 rss0 rss1 kids bytes
	local -a er=() fr=()
	CELL_NO=$((CELL_NO + 1))
	CELL_DIR=$T/cell.$CELL_NO
	mkdir -p "$CELL_DIR"
	BACKEND=evfcgid-cgi
	BACKEND_ADDRS[0]=127.0.0.1:$(freeport)
	start_cgi_exp_backend 0 evfcgid-cgi "${BACKEND_ADDRS[0]}"
	start_cgi_exp_nginx 0
	BACKEND_ADDRS[1]=127.0.0.1:$(freeport)
	start_cgi_exp_backend 1 fcgiwrap4 "${BACKEND_ADDRS[1]}"
	start_cgi_exp_nginx 1
	# Not counted: the first second of fresh processes.
	CGI_WRK_SECONDS=1 cgi_wrk 0 >/dev/null
	CGI_WRK_SECONDS=1 cgi_wrk 1 >/dev/null
	for ((i = 0; i < CGI_WRK_SLICES; i++)); do
		if ((i % 2)); then
			read -r f ff1 <<<"$(cgi_wrk 1)"; read -r e ef1 <<<"$(cgi_wrk 0)"
		else
			read -r e ef1 <<<"$(cgi_wrk 0)"; read -r f ff1 <<<"$(cgi_wrk 1)"
		fi
		er+=("$e") fr+=("$f")
		ef=$((ef + ef1)) ff=$((ff + ff1))
	done
	e=$(printf '%s\n' "${er[@]}" | sort -g | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }')
	f=$(printf '%s\n' "${fr[@]}" | sort -g | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }')
	rss0=$(rss_kib "${BACKEND_PIDS[0]}")
	FRONTEND=nginx
	start_slow 0 "$CGI_RSS_SLOW" 8388608 $((WARMUP + 8))
	sleep $((WARMUP + 2))
	rss1=0
	for ((i = 0; i < 5; i++)); do
		rss1=$(awk -v a="$rss1" -v b="$(rss_kib "${BACKEND_PIDS[0]}")" 'BEGIN { print (b > a ? b : a) }')
		sleep 1
	done
	kids=$(ps -o pid= --ppid "${BACKEND_PIDS[0]}" | wc -l)
	wait_slow
	bytes=$(slow_bytes)
	rm -f "$CELL_DIR"/slow.*
	stop_cell
	{
		printf 'wrk_conns\t%s\n' "$CGI_WRK_CONNS"
		printf 'wrk_slices\t%s x %ss\n' "$CGI_WRK_SLICES" "$CGI_WRK_SECONDS"
		printf 'evfcgid_cgi_rps\t%s\n' "$e"
		printf 'fcgiwrap4_rps\t%s\n' "$f"
		printf 'rps_ratio\t%s\n' "$(awk -v a="$e" -v b="$f" 'BEGIN { if (b > 0) printf "%.3f", a / b; else print "-" }')"
		printf 'evfcgid_cgi_failures\t%s\n' "$ef"
		printf 'fcgiwrap4_failures\t%s\n' "$ff"
		printf 'evfcgid_cgi_rps_slices\t%s\n' "${er[*]}"
		printf 'fcgiwrap4_rps_slices\t%s\n' "${fr[*]}"
		printf 'rss_slow_clients\t%s\n' "$CGI_RSS_SLOW"
		printf 'rss_alone_kib\t%s\n' "$rss0"
		printf 'rss_beside_kib\t%s\n' "$rss1"
		printf 'programs_running\t%s\n' "$kids"
		printf 'slow_bytes\t%s\n' "$bytes"
	} >"$file"
}

# cgi_measure_md FILE: the measurements of FILE as a paragraph of
# results.md.
cgi_measure_md() {
	awk -F'\t' '{ v[$1] = $2 }
		END {
			printf "CGI requests/s on the trivial script (wrk -c %s through nginx, median of %s slices, alternating):", v["wrk_conns"], v["wrk_slices"]
			printf " evfcgid --cgi **%s**, fcgiwrap -c 4 **%s** (ratio %s; failed answers %s and %s).", v["evfcgid_cgi_rps"], v["fcgiwrap4_rps"], v["rps_ratio"], v["evfcgid_cgi_failures"], v["fcgiwrap4_failures"]
			printf "  evfcgid --cgi RSS: %s KiB alone, at most **%s KiB** beside %s slow clients each downloading 8 MiB of CGI output", v["rss_alone_kib"], v["rss_beside_kib"], v["rss_slow_clients"]
			printf " (%s of their programs running, waiting in write(); %s bytes reached the slow clients).\n", v["programs_running"], v["slow_bytes"]
		}' "$1"
}
