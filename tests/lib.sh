# tests/lib.sh: shared helpers for the integration tests (bash).
# Source it first: it makes a scratch dir $T, stops every process started
# with spawn() on exit, and gives ok/not_ok reporting in the form
# tests/run-tests counts ("ok - name" / "not ok - name").  Then, as a test
# needs them: tests/http.sh (requests over FastCGI and HTTP, and the checks
# of their answers) and tests/frontends.sh (nginx and lighttpd).
#
# Here: reporting; processes (spawn, start_evfcgid, start_blocking_fcgid);
# ports and waiting (freeport, wait_port on an address as evfcgid --listen
# takes it, wait_until, wait_for_line, wait_gone ...); time (now_ns,
# ms_since, now_us, nap); the demo body (pattern, same_file); numbers (median, ratio).

TOP=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
# evfcgid refuses to run as root without --user; the tests (and the tools
# that source this file) run it as whoever runs them.
export EVFCGID_ALLOW_ROOT=1
EVFCGID=$TOP/src/evfcgid
BFCGID=${BFCGID:-$TOP/tools/blocking_fcgid}	# override: a sanitizer build
T=$(mktemp -d "${TMPDIR:-/tmp}/evfcgid-test.XXXXXX")
PIDS=()
FAILS=0

# The demo body: /big, /size and /stream all send this 64-byte line over
# and over, cut at the requested length.
PATTERN_LINE='abcdefghijklmnopqrstuvwxyz0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZ.'

cleanup() {
	local p
	for p in "${PIDS[@]}"; do
		kill "$p" 2>/dev/null
	done
	for p in "${PIDS[@]}"; do
		wait "$p" 2>/dev/null
	done
	rm -rf "$T"
}
trap cleanup EXIT
trap 'exit 1' INT TERM

# --- Reporting --------------------------------------------------------

ok() { echo "ok - $*"; }
not_ok() { echo "not ok - $*"; FAILS=$((FAILS + 1)); }

# check NAME CMD...: ok when CMD succeeds.
check() {
	local name=$1
	shift
	if "$@"; then ok "$name"; else not_ok "$name"; fi
}

# finish: exit status for the test script.
finish() { [ "$FAILS" -eq 0 ]; exit $?; }

# capture CMD...: runs CMD; its stdout in OUT, its stderr in ERR, its exit
# status in RC.
capture() {
	OUT=$("$@" 2>"$T/capture.err")
	RC=$?
	ERR=$(cat "$T/capture.err")
}

# --- Processes --------------------------------------------------------

# spawn CMD...: starts CMD in the background; it is stopped on exit.
# Sets SPAWNED to its pid.
spawn() {
	"$@" &
	SPAWNED=$!
	PIDS+=("$SPAWNED")
}

# start_evfcgid ARGS...: starts the daemon on a free loopback port with
# ARGS; sets EVFCGID_PORT, EVFCGID_PID, EVFCGID_LOG; waits until it accepts.
start_evfcgid() {
	EVFCGID_PORT=$(freeport)
	EVFCGID_LOG=$T/evfcgid.$EVFCGID_PORT.log
	spawn "$EVFCGID" --listen "127.0.0.1:$EVFCGID_PORT" "$@" 2>"$EVFCGID_LOG"
	EVFCGID_PID=$SPAWNED
	wait_port "$EVFCGID_PORT"
}

# start_blocking_fcgid ARGS...: tools/blocking_fcgid (the control group)
# on a free loopback port with ARGS, its stderr added to $T/bfcgid.log;
# sets BFCGID_ADDR (127.0.0.1:PORT) and BFCGID_PID; waits until it
# accepts.
start_blocking_fcgid() {
	local port
	port=$(freeport)
	BFCGID_ADDR=127.0.0.1:$port
	spawn "$BFCGID" --listen "$BFCGID_ADDR" "$@" 2>>"$T/bfcgid.log"
	BFCGID_PID=$SPAWNED
	wait_port "$port"
}

# fuzz_make TARGET: make -s TARGET in the tree, one at a time: the
# libFuzzer targets share one clang build of the engine (fuzz/obj/), and
# test_fuzz and test_fuzz_typed run side by side.
fuzz_make() { flock "$TOP/fuzz/.build-lock" make -C "$TOP" -s "$@"; }

# rss_kib PID: resident set size in KiB.
rss_kib() { awk '/^VmRSS:/ { print $2 }' "/proc/$1/status"; }

# --- Ports and waiting ------------------------------------------------

# freeport [N]: N free loopback TCP ports, one per line.
freeport() { "$TOP/tests/bin/freeport" "${1:-1}"; }

# port_accepts ADDR: true if ADDR accepts a connection now.  ADDR is
# written as for evfcgid --listen (HOST:PORT, [V6]:PORT, unix:/path) or is
# a bare port on 127.0.0.1.  bash's /dev/tcp speaks IPv4 and IPv6; a unix
# socket is tried with perl.
port_accepts() {
	local host port
	case $1 in
	unix:*)
		perl -MIO::Socket::UNIX -e \
			'exit !IO::Socket::UNIX->new(Type => SOCK_STREAM(), Peer => $ARGV[0])' \
			"${1#unix:}" 2>/dev/null
		return
		;;
	\[*\]:*) host=${1%]:*} host=${host#\[} port=${1##*:} ;;
	*:*) host=${1%:*} port=${1##*:} ;;
	*) host=127.0.0.1 port=$1 ;;
	esac
	(exec 3<>"/dev/tcp/$host/$port") 2>/dev/null
}

# usecs_of SECONDS: sets USECS to a decimal count of seconds (2, 0.5, 1.25)
# in microseconds, without starting a process.
usecs_of() {
	local i=${1%%.*} f=${1#*.}
	[[ $1 == *.* ]] || f=""
	f=${f}000000
	USECS=$(( 10#${i:-0} * 1000000 + 10#${f:0:6} ))
}

# now_us: sets NOW_US to the wall clock in microseconds (bash's
# EPOCHREALTIME: no process started).
now_us() {
	NOW_US=${EPOCHREALTIME/[.,]/}
}

# nap SECONDS: sleeps without starting a process (a timed read on a fifo
# nobody writes; the fifo is made once per test).  Where the fifo cannot
# be opened (the scratch dir already gone at exit), sleep does it.
nap() {
	local fd
	[ -p "$T/.nap" ] || mkfifo "$T/.nap" 2>/dev/null
	if { exec {fd}<>"$T/.nap"; } 2>/dev/null; then
		read -r -t "$1" -u "$fd"
		exec {fd}>&-
	else
		sleep "$1"
	fi
	return 0
}

# wait_until SECONDS CMD...: runs CMD every 50 ms until it succeeds (true)
# or SECONDS (a decimal) have passed since the first try (false).  The
# loop itself starts no process.
wait_until() {
	local end USECS NOW_US
	usecs_of "$1"
	now_us
	end=$((NOW_US + USECS))
	shift
	while ! "$@"; do
		now_us
		[ "$NOW_US" -lt "$end" ] || return 1
		nap 0.05
	done
}

# wait_port ADDR [SECONDS]: waits (10 s by default) until ADDR accepts;
# ADDR as for port_accepts.
wait_port() {
	wait_until "${2:-10}" port_accepts "$1" && return 0
	echo "# $1 did not open" >&2
	return 1
}

# wait_file PATH [SECONDS]: waits until PATH exists (a log, a pid file).
wait_file() {
	wait_until "${2:-10}" test -e "$1" && return 0
	echo "# $1 did not appear" >&2
	return 1
}

# wait_for_line FILE REGEX [SECONDS]: waits (10 s by default) until a line
# of FILE, which another process is writing, matches the extended REGEX.
wait_for_line() {
	wait_until "${3:-10}" grep -Eq -e "$2" "$1" 2>/dev/null && return 0
	echo "# no line matching /$2/ in $1 after ${3:-10} s" >&2
	return 1
}

# none_running PID...: true if no process has any of these pids.
none_running() {
	local p
	for p in "$@"; do
		kill -0 "$p" 2>/dev/null && return 1
	done
	return 0
}

# wait_gone SECONDS PID...: waits until none of the PIDs is running.
wait_gone() {
	local secs=$1
	shift
	wait_until "$secs" none_running "$@"
}

# have_ipv6_loopback: true if the host has ::1.
have_ipv6_loopback() {
	grep -q '^00000000000000000000000000000001' /proc/net/if_inet6 2>/dev/null
}

# sndbuf_of PORT: the largest send buffer (ss's skmem tb) among the
# established connections whose local port is PORT.
sndbuf_of() {
	ss -tnm state established "( sport = :$1 )" 2>/dev/null |
		grep -o 'tb[0-9]*' | tr -d tb | sort -rn | head -n 1
}

# unix_sndbufs PATH: the send buffer (ss's skmem tb) of each connected
# socket whose local end is the unix socket PATH (the server's end), one
# a line.
unix_sndbufs() {
	ss -xmnH 2>/dev/null | awk -v p="$1" 'index($0, " " p " ") && /skmem/ {
		sub(/.*,tb/, ""); sub(/,.*/, ""); print }'
}

# --- Time -------------------------------------------------------------

# now_ns: the wall clock in nanoseconds, for ms_since (microsecond
# resolution, from EPOCHREALTIME: no process started but the subshell of
# a caller's $(now_ns)).
now_ns() { local NOW_US; now_us; echo "${NOW_US}000"; }

# ms_since NS: whole milliseconds since NS, a value of now_ns.
ms_since() { local NOW_US; now_us; echo $(( (NOW_US * 1000 - $1) / 1000000 )); }

# --- The demo body ----------------------------------------------------

# pattern N: the demo body of N bytes on stdout.
pattern() { yes "$PATTERN_LINE" | head -c "$1"; }

# same_file A B: byte-for-byte equal, else a diagnostic naming sizes.
same_file() {
	if cmp -s "$1" "$2"; then return 0; fi
	echo "# $1 ($(stat -c %s "$1" 2>/dev/null) bytes) differs from $2 ($(stat -c %s "$2" 2>/dev/null) bytes)" >&2
	return 1
}

# --- Numbers ----------------------------------------------------------

# median: the median of the numbers on stdin, one per line ("-" for none).
median() {
	sort -g | awk '{ v[NR] = $1 } END { if (NR == 0) print "-"; else if (NR % 2) print v[(NR + 1) / 2];
		else printf "%.3f\n", (v[NR / 2] + v[NR / 2 + 1]) / 2 }'
}

# ratio A B: A / B to three places (0 unless both are positive).
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { printf("%.3f", (a > 0 && b > 0 ? a / b : 0)) }'; }
