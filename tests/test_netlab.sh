#!/bin/bash
# check: alone (it judges a shaped link's rate)
# tools/netlab.sh, the namespaces and shaped links of the experiment's
# --links mode: a lab of a server and a client namespace; one client
# address shaped to 256 kbit/s carries about that, another address of the
# same client passes unshaped; a TBF on the whole link; a link set down
# drops packets without a word (a connection times out, is not refused)
# and carries again once up.  The lab's TCP uses the algorithm it names
# (NETLAB_CC; here reno, which no host has as its default, so that the
# checks see the lab's choice and not the host's), on a link, after the
# link was down and up, and on a namespace's loopback.  Then nothing of
# the lab is left: not after netlab_cleanup, not after a script using it
# is killed with SIGTERM, and the leftovers of a crashed run (a namespace
# with a process inside) are removed by the next netlab_init of the same
# tag.
source "$(dirname "$0")/lib.sh"
source "$TOP/tools/netlab.sh" || { not_ok "tools/netlab.sh can be sourced"; finish; }

netlab_usable || { ok "# SKIP $NETLAB_SKIP"; finish; }
NETLAB_CC=reno

# A crashed run's leftover: a namespace of the tag with a process in it.
ip netns add evfnltest-stale
ip netns exec evfnltest-stale sleep 60 &
stale_pid=$!
netlab_init nltest
trap 'netlab_cleanup; cleanup' EXIT
check "netlab_init removes a crashed run's namespace ($(netlab_leftovers | tr '\n' ' '))" \
	test -z "$(netlab_leftovers)"
check "... and ends the process left inside it" wait_gone 3 "$stale_pid"

netlab_ns srv cli && netlab_link srv cli || { not_ok "a lab of two namespaces and a link"; finish; }
ok "a lab of two namespaces and a link"
mapfile -t A < <(netlab_addrs cli srv 2)
check "netlab_addrs gives two client addresses (${A[*]})" test "${#A[@]}" -eq 2
S=$(netlab_ip srv cli)
check "netlab_shape: ${A[0]} on its own 256 kbit/s class" netlab_shape srv cli 256 "${A[0]}"

# One HTTP/1.0 answer of N bytes per connection, after reading the request
# (closing with it unread would reset the answer).
SERVE='$SIG{PIPE} = "IGNORE"; $s = IO::Socket::INET->new(LocalAddr => "0.0.0.0:8080", Listen => 8, ReuseAddr => 1) or die;
	while ($c = $s->accept) { while (<$c>) { last if /^\r?\n$/ }
	print $c "HTTP/1.0 200 OK\r\nContent-Length: 98304\r\n\r\n", "x" x 98304; close $c }'
netlab_spawn srv perl -MIO::Socket::INET -e "$SERVE" 2>"$T/serve.log"
PIDS+=("$NETLAB_PID")
netlab_exec cli bash -c "for i in \$(seq 50); do (exec 3<>/dev/tcp/$S/8080) 2>/dev/null && exit; sleep 0.1; done; exit 1" ||
	not_ok "the server in namespace srv accepts"

# get [CURL-ARGS]: bytes and seconds of one download from the client.
get() { netlab_exec cli curl -s -o /dev/null -w '%{size_download} %{time_total}\n' "$@" "http://$S:8080/"; }
# cc NS CMD...: the congestion control of the TCP connections that NS
# has while CMD runs (ss -ti, once CMD has had 1 s).
cc() {
	local ns=$1
	shift
	"$@" >/dev/null 2>&1 &
	sleep 1
	netlab_exec "$ns" ss -tin state established | grep -oE '\b(bbr|cubic|reno)\b' | sort -u | tr '\n' ' '
	wait
}
c=$(cc srv get --interface "${A[0]}")
check "a connection over the link uses the lab's congestion control, not the host's (reno: $c)" \
	test "$c" = "reno "
read -r n secs <<<"$(get --interface "${A[0]}")"
kbit=$(awk -v n="${n:-0}" -v s="${secs:-1}" 'BEGIN { printf "%d", n * 8 / s / 1000 }')
check "${A[0]}, shaped to 256 kbit/s, got all 98304 bytes ($n)" test "${n:-0}" -eq 98304
check "... at about 256 kbit/s ($kbit kbit/s in $secs s; bounds 180..300)" \
	test "$kbit" -ge 180 -a "$kbit" -le 300
read -r n secs <<<"$(get --interface "${A[1]}")"
kbit=$(awk -v n="${n:-0}" -v s="${secs:-1}" 'BEGIN { printf "%d", n * 8 / s / 1000 }')
check "${A[1]}, not shaped, is far faster ($kbit kbit/s)" test "$kbit" -ge 5000

netlab_tbf srv cli 1024
read -r n secs <<<"$(get)"
kbit=$(awk -v n="${n:-0}" -v s="${secs:-1}" 'BEGIN { printf "%d", n * 8 / s / 1000 }')
check "netlab_tbf: the whole link at 1024 kbit/s carries about that ($kbit kbit/s; bounds 700..1200)" \
	test "$kbit" -ge 700 -a "$kbit" -le 1200
netlab_unshape srv cli

netlab_link_down srv cli
get --max-time 1 >/dev/null
rc=$?
check "a link set down: a connection times out (curl exit 28), is not refused ($rc)" test "$rc" -eq 28
netlab_link_up srv cli
read -r n secs <<<"$(get --max-time 5 --interface "${A[1]}")"
check "set up again, it carries (${n:-0} bytes)" test "${n:-0}" -eq 98304
# (the server reads the request's lines: a connection that sends none
# stays open.)
c=$(cc srv netlab_exec cli timeout 2 bash -c "exec 3<>/dev/tcp/$S/8080; sleep 2")
check "... and its connections still use the lab's congestion control ($c)" test "$c" = "reno "
c=$(cc srv netlab_exec srv timeout 2 bash -c 'exec 3<>/dev/tcp/127.0.0.1/8080; sleep 2')
check "a namespace's loopback uses it too ($c)" test "$c" = "reno "

netlab_cleanup
check "netlab_cleanup leaves nothing ($(netlab_leftovers | tr '\n' ' '))" test -z "$(netlab_leftovers)"
check "... and ended the server inside" wait_gone 3 "$NETLAB_PID"

# A script with the cleanup in its trap, killed with SIGTERM mid-way.
cat >"$T/victim.sh" <<EOF
source "$TOP/tools/netlab.sh"
netlab_init nlterm
trap netlab_cleanup EXIT
netlab_ns a b && netlab_link a b && netlab_tbf a b 64 || exit 3
netlab_spawn b sleep 60
sleep 60 &
trap "kill \$!; exit 1" TERM
echo ready
wait
EOF
bash "$T/victim.sh" >"$T/victim.out" 2>&1 &
victim=$!
wait_for_line "$T/victim.out" '^ready$' 10
check "a script's lab is up before the signal ($(netlab_leftovers nlterm | wc -l) things)" \
	test -n "$(netlab_leftovers nlterm)"
kill -TERM "$victim"
wait "$victim"
check "killed with SIGTERM, it left nothing ($(netlab_leftovers nlterm | tr '\n' ' '))" \
	test -z "$(netlab_leftovers nlterm)"
finish
