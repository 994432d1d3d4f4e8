#!/bin/bash
# A CGI program's processes, capped and ended as one (issue 37, items 6
# and 3):
# - --cgi-pids 8: each program runs in a cgroup of its own whose pids.max
#   is 8.  A fork bomb gets 7 children of 60 (the program is the 8th),
#   and a second bomb started while the first still holds its 7 gets 7
#   too (a cap per program, not per user as RLIMIT_NPROC), a plain
#   request is answered meanwhile, what each bomb left (setsid, outside
#   its process group) is ended with it, and no group is left behind;
# - started as its service user in a cgroup delegated to it (systemd
#   Delegate=, done here by hand), a program that kills the reaper (it
#   runs as the programs' user) no longer frees its siblings' leftovers:
#   what they left in their process groups and outside (setsid) is ended
#   (before: under init, past every limit);
# - with --workers 2, a program that SIGKILLs the workers frees nothing:
#   every program of theirs and all they started is ended, and the master
#   serves on (the reapers, not the workers, parent the programs);
# - where no group can be made (as nobody in a cgroup not its own), one
#   line at start says so, also with 2 workers; a program that kills the
#   reaper there has what its siblings left in their process groups
#   ended by the worker (before: under init).
# Needs root (cgroups, users); skipped, saying why, only where no pids
# cgroup can be made at all.
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/http.sh"
source "$(dirname "$0")/cgi.sh"

command -v cgi-fcgi >/dev/null || { not_ok "cgi-fcgi is installed"; finish; }
command -v perl >/dev/null || { not_ok "perl is installed"; finish; }

# pids_base: a directory where this shell can make a pids cgroup (its own
# cgroup in a v1 pids hierarchy, or in the unified one with the pids
# controller), printed; nothing if none.
pids_base() {
	local mnt own d
	mnt=$(awk '$3 == "cgroup2" { print $2; exit }' /proc/mounts)
	own=$(sed -n 's/^0:://p' /proc/self/cgroup)
	d=$mnt${own%/}
	if [ -n "$mnt" ] && grep -qw pids "$d/cgroup.controllers" 2>/dev/null; then
		echo "$d"
		return
	fi
	mnt=$(awk '$3 == "cgroup" && $4 ~ /(^|,)pids(,|$)/ { print $2; exit }' /proc/mounts)
	own=$(sed -n 's/^[0-9]*:\([^:]*,\)\{0,1\}pids\(,[^:]*\)\{0,1\}://p' /proc/self/cgroup)
	d=$mnt${own%/}
	[ -n "$mnt" ] && mkdir "$d/evfcgid-probe.$$" 2>/dev/null &&
		rmdir "$d/evfcgid-probe.$$" && echo "$d"
}

# as_nobody CMD...: execs CMD as nobody (in a subshell: spawn's).
as_nobody() {
	exec perl -MPOSIX -e 'POSIX::setgid(65534) && POSIX::setuid(65534) or
		die "setuid: $!"; exec @ARGV or die "exec: $!"' "$@"
}
# sleepers ARG: how many `sleep ARG` run (ARG makes them this test's).
sleepers() { pgrep -c -f "^sleep $1\$"; }
none_of() { [ "$(sleepers "$1")" = 0 ]; }
# groups_of DIR PID: the daemon PID's groups under DIR.
groups_of() { ls "$1" | grep -c "^evfcgid-cgi\.$2\."; }

if [ "$(id -u)" -ne 0 ]; then
	ok "# SKIP cgroups per program: needs root (to make cgroups, to be nobody)"
	finish
fi
BASE=$(pids_base)
if [ -z "$BASE" ]; then
	ok "# SKIP cgroups per program: no pids cgroup can be made here (no v1 pids hierarchy, no pids controller in the unified one)"
	finish
fi
echo "# pids cgroups under $BASE"

chmod 755 "$T"
mkdir -p "$T/cgi-bin" "$T/pids"
chmod 1777 "$T/pids"
S=$((5000 + $$ % 1000))
# Each `sleep` this test starts sleeps S.N seconds: N tells whose it is.
# bomb.pl: forks 60 children, each of which leaves its process group
# (setsid) and sleeps; says how many it got, then runs HOLD s more.
cat >"$T/cgi-bin/bomb.pl" <<'EOF'
#!/usr/bin/perl
use POSIX ();
my ($ok, $no) = (0, 0);
for (1 .. 60) {
	my $p = fork;
	if (!defined $p) { $no++; next }
	if ($p == 0) { POSIX::setsid(); exec "sleep", $ENV{S}; exit 0 }
	$ok++;
}
print "Content-Type: text/plain\r\n\r\nforked=$ok refused=$no\n";
close STDOUT;
sleep($ENV{HOLD} || 0);
EOF
# family.sh: leaves `sleep S1` in its group and `sleep S2` in a session of
# its own (its parent, a perl, waiting for it), then sleeps as S3.
cat >"$T/cgi-bin/family.sh" <<'EOF'
#!/bin/sh
sleep "${S}1" </dev/null >/dev/null 2>&1 &
perl -e 'use POSIX (); POSIX::setsid(); my $p = fork;
	exec "sleep", $ARGV[0] if !$p; waitpid($p, 0)' "${S}2" </dev/null >/dev/null 2>&1 &
echo $$ >"$PIDFILE"
exec sleep "${S}3"
EOF
# killer.sh: SIGKILLs what KILL names (the reaper, its parent; or every
# worker: DPID's children but the reapers), SIGTERM ignored meanwhile.
cat >"$T/cgi-bin/killer.sh" <<'EOF'
#!/bin/sh
trap '' TERM
if [ "$KILL" = reaper ]; then
	kill -KILL "$PPID"
else
	for c in $(pgrep -P "$DPID"); do
		[ "$(cat "/proc/$c/comm")" = evfcgid-reaper ] || kill -KILL "$c"
	done
fi
printf 'Content-Type: text/plain\r\n\r\nkilled\n'
EOF
cp -p "$TOP/tests/cgi/hello.sh" "$T/cgi-bin/"
chmod 755 "$T/cgi-bin/"*

# run ADDR PROGRAM [VAR=VALUE...]: PROGRAM's body at ADDR.
run() {
	local addr=$1 prog=$2
	shift 2
	env "$@" SCRIPT_FILENAME="$T/cgi-bin/$prog" timeout 20 \
		cgi-fcgi -bind -connect "$addr" </dev/null 2>/dev/null | body_of
}
# families ADDR N TAG: starts N family.sh at ADDR (in the background),
# their sleeps S.TAG1, S.TAG2, S.TAG3; their pids in FAM.
families() {
	local i
	FAM=()
	for i in $(seq "$2"); do
		S=$S.$3 PIDFILE=$T/pids/$3.$i SCRIPT_FILENAME=$T/cgi-bin/family.sh \
			timeout 30 cgi-fcgi -bind -connect "$1" </dev/null >/dev/null 2>&1 &
		PIDS+=("$!")
	done
	for i in $(seq "$2"); do
		wait_file "$T/pids/$3.$i" 5 && FAM+=("$(cat "$T/pids/$3.$i")")
	done
	for i in "${FAM[@]}"; do cgi_own_pid "$i"; done
}
# family_left TAG: how many processes the families TAG still have.
family_left() {
	echo $(($(sleepers "$S.${1}1") + $(sleepers "$S.${1}2") + $(sleepers "$S.${1}3")))
}

# --- Item 6: a fork bomb under --cgi-pids 8. -----------------------------
port=$(freeport)
spawn "$CGI_EVFCGID" --cgi --cgi-root "$T/cgi-bin" --listen "127.0.0.1:$port" \
	--allow 127.0.0.1 --user nobody --cgi-pids 8 2>"$T/bomb.log"
D=$SPAWNED
wait_port "127.0.0.1:$port"
check "--cgi-pids 8: said at start, where the groups go" \
	grep -q "cgi: each program runs in a cgroup of its own under $BASE (cgroup v[12]), pids.max 8" "$T/bomb.log"
run "127.0.0.1:$port" bomb.pl S="$S.1" HOLD=4 >"$T/a.out" &
PIDS+=("$!")
A=$!
check "--cgi-pids 8: a bomb holds 7 children" wait_until 5 eval '[ "$(sleepers "$S.1")" = 7 ]'
b=$(run "127.0.0.1:$port" bomb.pl S="$S.2")
held=$(sleepers "$S.1")
check "--cgi-pids 8: a second bomb, the first holding its 7 ($held), gets 7 of 60 too ($b)" \
	test "$b" = "forked=7 refused=53"
got=$(run "127.0.0.1:$port" hello.sh)
check "--cgi-pids 8: a plain request meanwhile is answered ($got)" \
	eval '[[ $got == *"hello from cgi"* ]]'
check "--cgi-pids 8: the second bomb's children are ended with it" \
	wait_until 3 none_of "$S.2"
wait "$A"
check "--cgi-pids 8: the first bomb got 7 of 60 ($(cat "$T/a.out"))" \
	test "$(cat "$T/a.out")" = "forked=7 refused=53"
check "--cgi-pids 8: the first bomb's children are ended with it" \
	wait_until 3 none_of "$S.1"
kill "$D"
wait "$D" 2>/dev/null
check "--cgi-pids 8: no group is left under $BASE ($(groups_of "$BASE" "$D"))" \
	wait_until 3 eval '[ "$(groups_of "$BASE" "$D")" = 0 ]'

# --- Item 3: a program kills the reaper, in a delegated cgroup. ---------
# As a service user would be under systemd Delegate=: its own cgroup,
# owned by it, the daemon started in it as that user.
DELEG=$BASE/evfcgid-test.$$
mkdir "$DELEG" && chown nobody "$DELEG" "$DELEG/cgroup.procs" &&
	{ [ ! -e "$DELEG/tasks" ] || chown nobody "$DELEG/tasks"; } &&
	{ [ ! -e "$DELEG/cgroup.subtree_control" ] || chown nobody "$DELEG/cgroup.subtree_control"; }
# Ended on exit: what is in it first (the daemon is stopped by then).
end_deleg() {
	local i
	cleanup
	for i in $(seq 50); do
		[ -d "$DELEG" ] || return
		for g in "$DELEG"/*/; do
			[ -d "$g" ] && rmdir "$g" 2>/dev/null
		done
		rmdir "$DELEG" 2>/dev/null && return
		xargs -r kill -KILL <"$DELEG/cgroup.procs" 2>/dev/null
		sleep 0.1
	done
	echo "# $DELEG could not be removed" >&2
}
trap end_deleg EXIT
port=$(freeport)
spawn sh -c 'echo $$ >"$1/cgroup.procs" && shift && exec "$@"' sh "$DELEG" \
	perl -MPOSIX -e 'POSIX::setgid(65534) && POSIX::setuid(65534) or die;
		exec @ARGV or die' "$CGI_EVFCGID" --cgi --cgi-root "$T/cgi-bin" \
	--listen "127.0.0.1:$port" --allow 127.0.0.1 --cgi-kill-grace 1 2>"$T/deleg.log"
D=$SPAWNED
wait_port "127.0.0.1:$port"
check "delegated: the daemon, as nobody, makes its groups in its own cgroup" \
	grep -q "cgi: each program runs in a cgroup of its own under $DELEG " "$T/deleg.log"
families "127.0.0.1:$port" 2 3
check "delegated: 2 programs left 2 processes each, in their group and out (${FAM[*]}: $(family_left 3))" \
	wait_until 5 eval '[ "$(family_left 3)" = 6 ]'
got=$(run "127.0.0.1:$port" killer.sh KILL=reaper)
check "delegated: a program killed the reaper: a new one takes its place" \
	wait_for_line "$T/deleg.log" 'the process that parents the programs ended: [0-9]+ takes its place' 5
check "delegated: reaper killed: its programs and all they left are ended within 5 s" \
	wait_until 5 eval '[ "$(family_left 3)" = 0 ]'
got=$(run "127.0.0.1:$port" hello.sh)
check "delegated: the next request is served ($got)" \
	eval '[[ $got == *"hello from cgi"* ]]'
kill "$D"
wait "$D" 2>/dev/null
check "delegated: no group is left in it" \
	wait_until 3 eval '[ -z "$(ls "$DELEG" | grep "^evfcgid-cgi\.")" ]'

# --- Item 3: a program kills the workers (--workers 2). -----------------
port=$(freeport)
spawn "$CGI_EVFCGID" --cgi --cgi-root "$T/cgi-bin" --listen "127.0.0.1:$port" \
	--allow 127.0.0.1 --user nobody --workers 2 --cgi-kill-grace 1 2>"$T/w.log"
D=$SPAWNED
wait_port "127.0.0.1:$port"
families "127.0.0.1:$port" 4 4
check "workers: 4 programs left 2 processes each ($(family_left 4))" \
	wait_until 5 eval '[ "$(family_left 4)" = 12 ]'
run "127.0.0.1:$port" killer.sh KILL=workers DPID="$D" >/dev/null
check "workers: a program SIGKILLed the workers: the master replaced them" \
	wait_for_line "$T/w.log" 'worker [0-9]+ replaced by' 5
check "workers killed: their programs and all they left are ended within 5 s ($(family_left 4) left)" \
	wait_until 5 eval '[ "$(family_left 4)" = 0 ]'
check "workers killed: the master serves on" \
	wait_until 5 eval '[[ "$(run "127.0.0.1:$port" hello.sh)" == *"hello from cgi"* ]]'
kill "$D"
wait "$D" 2>/dev/null

# --- No cgroup: said once at start; a reaper killed. --------------------
port=$(freeport)
spawn as_nobody "$CGI_EVFCGID" --cgi --cgi-root "$T/cgi-bin" --listen "127.0.0.1:$port" \
	--allow 127.0.0.1 --workers 2 2>"$T/none.log"
D=$SPAWNED
wait_port "127.0.0.1:$port"
n=$(grep -c 'cgi: no cgroup can be made for each program (.*): --cgi-pids is not applied' "$T/none.log")
check "no cgroup (nobody, in root's cgroup): one line at start says so ($n)" test "$n" = 1
kill "$D"
wait "$D" 2>/dev/null
# Without groups, a program that kills the reaper (as nobody, its user)
# takes its siblings with it, and the worker ends what they left in
# their process groups; what left them runs on (said in docs/cgi.md).
port=$(freeport)
spawn as_nobody "$CGI_EVFCGID" --cgi --cgi-root "$T/cgi-bin" --listen "127.0.0.1:$port" \
	--allow 127.0.0.1 2>"$T/none1.log"
D=$SPAWNED
wait_port "127.0.0.1:$port"
families "127.0.0.1:$port" 2 5
check "no cgroup: 2 programs left 2 processes each ($(family_left 5))" \
	wait_until 5 eval '[ "$(family_left 5)" = 6 ]'
run "127.0.0.1:$port" killer.sh KILL=reaper >/dev/null
check "no cgroup: reaper killed: its programs and what they left in their process groups are ended within 5 s" \
	wait_until 5 eval '[ $(($(sleepers "$S.51") + $(sleepers "$S.53"))) = 0 ]'
out=$(pgrep -f "^sleep $S\.52\$" | tr '\n' ' ')
echo "# no cgroup: what left its process group runs on: ${out:-nothing}"
# This test's sleeps that run on, ended by their pids.
out=$(pgrep -f "^sleep $S\.5[123]\$" | tr '\n' ' ')
# shellcheck disable=SC2086
[ -n "$out" ] && kill $out
kill "$D"
wait "$D" 2>/dev/null

finish
