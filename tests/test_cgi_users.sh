#!/bin/bash
# Who evfcgid and its CGI programs run as (issue 37, items 2 and 3):
# - uid 0 however spelled (--user root, --user 0, a name that maps to uid
#   0; --cgi-user too) is refused without --allow-root, and warned about
#   with it;
# - the daemon is not dumpable whatever user it starts as: its own user
#   (its programs') cannot read its /proc/PID/environ;
# - --cgi-user runs programs as another user than the daemon's: they can
#   neither signal nor read it (without it, they can signal it);
# - with --workers, a worker killed (as a program of its user could) does
#   not free its programs: they are ended, not left under init;
# - --cgi-nproc caps the processes of a program's user: a fork bomb under
#   --cgi-nproc 10 gets 9 children, not 60 (item 6).
# Most of it needs root (to be nobody, to change users); without root
# those parts are skipped, saying why.
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/http.sh"
# Another evfcgid: CGI_EVFCGID=/path/to/evfcgid.
EVFCGID=${CGI_EVFCGID:-$EVFCGID}

command -v cgi-fcgi >/dev/null || { not_ok "cgi-fcgi is installed"; finish; }

# as_nobody CMD...: execs CMD as nobody (in a subshell: spawn's).
as_nobody() {
	exec perl -MPOSIX -e 'POSIX::setgid(65534) && POSIX::setuid(65534) or
		die "setuid: $!"; exec @ARGV or die "exec: $!"' "$@"
}

ROOT=$(id -u)
[ "$ROOT" -eq 0 ] && chmod 755 "$T"
mkdir -p "$T/cgi-bin" "$T/pids"
chmod 1777 "$T/pids"
# who.sh: its uid, and whether it may signal and read the process DPID.
cat >"$T/cgi-bin/who.sh" <<'EOF'
#!/bin/sh
sig=no env=no
kill -0 "$DPID" 2>/dev/null && sig=yes
cat "/proc/$DPID/environ" >/dev/null 2>&1 && env=yes
printf 'Content-Type: text/plain\r\n\r\nuid=%s signal=%s environ=%s\n' "$(id -u)" "$sig" "$env"
EOF
# hold.sh: writes its pid where PIDFILE says, then sleeps.
cat >"$T/cgi-bin/hold.sh" <<'EOF'
#!/bin/sh
echo $$ >"$PIDFILE"
exec sleep 1000
EOF
# bomb.pl: forks 60 children that sleep, says how many it got.
cat >"$T/cgi-bin/bomb.pl" <<'EOF'
#!/usr/bin/perl
my ($ok, $no) = (0, 0);
for (1 .. 60) {
	my $p = fork;
	if (!defined $p) { $no++; next }
	if ($p == 0) { sleep 30; exit 0 }
	$ok++;
}
print "Content-Type: text/plain\r\n\r\nforked=$ok refused=$no\n";
EOF
chmod 755 "$T/cgi-bin/who.sh" "$T/cgi-bin/hold.sh" "$T/cgi-bin/bomb.pl"

# who ADDR DPID: who.sh's answer at ADDR about DPID.
who() {
	DPID=$2 SCRIPT_FILENAME=$T/cgi-bin/who.sh fcgi_req "$1" /who.sh | body_of
}

# --- Item 2: uid 0 however spelled. -------------------------------------
exits_with "--user root without --allow-root: refused" 2 \
	'refusing to run as root: --user root is uid 0' \
	env -u EVFCGID_ALLOW_ROOT "$EVFCGID" --listen 127.0.0.1:0 --user root
exits_with "--user 0 without --allow-root: refused" 2 \
	'refusing to run as root: --user 0 is uid 0' \
	env -u EVFCGID_ALLOW_ROOT "$EVFCGID" --listen 127.0.0.1:0 --user 0
exits_with "--cgi-user root without --allow-root: refused" 2 \
	'refusing to run as root: --cgi-user root is uid 0' \
	env -u EVFCGID_ALLOW_ROOT "$EVFCGID" --cgi --cgi-root "$T/cgi-bin" --listen 127.0.0.1:0 --cgi-user root
if [ "$ROOT" -ne 0 ]; then
	ok "# SKIP a name mapping to uid 0: needs root (a passwd bind-mounted)"
elif ! unshare --mount true 2>/dev/null; then
	ok "# SKIP a name mapping to uid 0: unshare --mount fails here"
else
	{ cat /etc/passwd; echo 'toor:x:0:0:another root:/root:/bin/sh'; } >"$T/passwd"
	exits_with "--user toor (uid 0 by another name) without --allow-root: refused" 2 \
		'refusing to run as root: --user toor is uid 0' \
		unshare --mount sh -c 'mount --bind "$1" /etc/passwd &&
			shift && exec env -u EVFCGID_ALLOW_ROOT "$@"' sh "$T/passwd" \
		"$EVFCGID" --listen 127.0.0.1:0 --user toor
fi
if [ "$ROOT" -eq 0 ]; then
	port=$(freeport)
	spawn env -u EVFCGID_ALLOW_ROOT "$EVFCGID" --cgi --cgi-root "$T/cgi-bin" \
		--listen "127.0.0.1:$port" --allow 127.0.0.1 --user 0 --allow-root \
		2>"$T/root.log"
	pid=$SPAWNED
	wait_port "127.0.0.1:$port"
	check "--user 0 --allow-root: runs, and warns it runs as root" \
		grep -q 'warning: --user 0 is uid 0 (--allow-root): running as root' "$T/root.log"
	check "--user 0 --allow-root: warns every program runs as uid 0" \
		grep -q 'warning: --cgi as root without --user, or as uid 0: every program runs as uid 0' "$T/root.log"
	kill "$pid"
	wait "$pid" 2>/dev/null
fi

if [ "$ROOT" -ne 0 ]; then
	ok "# SKIP users apart, dumpable, a worker killed: need root"
	finish
fi

# --- Item 3: not dumpable; programs apart with --cgi-user. --------------
# Started as its service user (systemd's User=), no --user: no change of
# ids made it undumpable (a setresuid from root does).
port=$(freeport)
spawn as_nobody "$EVFCGID" --cgi --cgi-root "$T/cgi-bin" --listen "127.0.0.1:$port" \
	--allow 127.0.0.1 2>"$T/same.log"
pid=$SPAWNED
wait_port "127.0.0.1:$port"
got=$( (as_nobody sh -c 'cat "/proc/$1/environ" >/dev/null 2>&1 && echo yes || echo no' sh "$pid") )
check "started as nobody: nobody cannot read the daemon's environ (not dumpable: $got)" \
	test "$got" = no
got=$(who "127.0.0.1:$port" "$pid")
check "started as nobody, no --cgi-user: programs run as nobody, may signal the daemon, not read it ($got)" \
	test "$got" = "uid=65534 signal=yes environ=no"
kill "$pid"
wait "$pid" 2>/dev/null

port=$(freeport)
spawn "$EVFCGID" --cgi --cgi-root "$T/cgi-bin" --listen "127.0.0.1:$port" \
	--allow 127.0.0.1 --user nobody --cgi-user daemon 2>"$T/apart.log"
pid=$SPAWNED
wait_port "127.0.0.1:$port"
got=$(who "127.0.0.1:$port" "$pid")
check "--user nobody --cgi-user daemon: programs run as daemon (uid 1), cannot signal nor read the daemon ($got)" \
	test "$got" = "uid=1 signal=no environ=no"
check "--cgi-user daemon: the daemon itself runs as nobody" \
	test "$(ps -o uid= -p "$pid" | tr -d ' ')" = 65534
kill "$pid"
wait "$pid" 2>/dev/null

# --- Item 6: a fork bomb under --cgi-nproc. -----------------------------
# Programs as lp (uid 7, which nothing else here runs as): RLIMIT_NPROC
# counts that user's processes, the bomb itself one of them.
bomb() {
	SCRIPT_FILENAME=$T/cgi-bin/bomb.pl fcgi_req "$1" /bomb.pl | body_of
}
for cap in 10 0; do
	port=$(freeport)
	spawn "$EVFCGID" --cgi --cgi-root "$T/cgi-bin" --listen "127.0.0.1:$port" \
		--allow 127.0.0.1 --user nobody --cgi-user lp --cgi-nproc "$cap" 2>"$T/bomb.$cap.log"
	pid=$SPAWNED
	wait_port "127.0.0.1:$port"
	got=$(bomb "127.0.0.1:$port")
	if [ "$cap" = 10 ]; then
		check "--cgi-nproc 10: a fork bomb gets 9 children of 60 ($got)" \
			test "$got" = "forked=9 refused=51"
	else
		check "--cgi-nproc 0 (inherited, root's): the same bomb gets its 60 ($got)" \
			test "$got" = "forked=60 refused=0"
	fi
	check "--cgi-nproc $cap: what the bomb left is ended with it" \
		wait_until 5 eval '[ -z "$(pgrep -u 7)" ]'
	kill "$pid"
	wait "$pid" 2>/dev/null
done

# --- Item 3: a worker killed does not free its programs. ---------------
port=$(freeport)
spawn "$EVFCGID" --cgi --cgi-root "$T/cgi-bin" --listen "127.0.0.1:$port" \
	--allow 127.0.0.1 --user nobody --workers 2 --cgi-kill-grace 1 2>"$T/w.log"
pid=$SPAWNED
wait_port "127.0.0.1:$port"
progs=()
for i in 1 2 3 4; do
	PIDFILE=$T/pids/hold.$i SCRIPT_FILENAME=$T/cgi-bin/hold.sh \
		timeout 30 cgi-fcgi -bind -connect "127.0.0.1:$port" </dev/null >/dev/null 2>&1 &
	PIDS+=("$!")
done
for i in 1 2 3 4; do
	wait_file "$T/pids/hold.$i" 5 && progs+=("$(cat "$T/pids/hold.$i")")
done
check "workers: 4 programs run (${progs[*]})" test "${#progs[@]}" = 4
for p in "${progs[@]}"; do
	[[ $p =~ ^[0-9]+$ ]] && PIDS+=("$p")
done
# The workers: the master's children that are not reapers.
workers=$(for c in $(pgrep -P "$pid"); do
	[ "$(cat "/proc/$c/comm")" = evfcgid-reaper ] || echo "$c"
done | tr '\n' ' ')
# shellcheck disable=SC2086
kill -KILL $workers
echo "# killed the workers ($workers); their programs: ${progs[*]}"
check "workers killed: their programs are ended within 5 s (${progs[*]})" \
	wait_gone 5 "${progs[@]}"
check "workers killed: the master replaced them and still serves" \
	wait_until 5 eval '[ "$(who "127.0.0.1:$port" 1)" = "uid=65534 signal=no environ=no" ]'
# The same when a replacement's lifeline reaches the reaper together with
# the end of its predecessor's: the reapers stopped meanwhile (SIGSTOP),
# then woken once both workers have been replaced.  Before: the new
# lifeline replaced the old unseen, and the programs ran on.
rm -f "$T"/pids/hold.*
progs=()
for i in 1 2 3 4; do
	PIDFILE=$T/pids/hold.$i SCRIPT_FILENAME=$T/cgi-bin/hold.sh \
		timeout 30 cgi-fcgi -bind -connect "127.0.0.1:$port" </dev/null >/dev/null 2>&1 &
	PIDS+=("$!")
done
for i in 1 2 3 4; do
	wait_file "$T/pids/hold.$i" 5 && progs+=("$(cat "$T/pids/hold.$i")")
done
for p in "${progs[@]}"; do
	[[ $p =~ ^[0-9]+$ ]] && PIDS+=("$p")
done
reapers="" workers=""
for c in $(pgrep -P "$pid"); do
	if [ "$(cat "/proc/$c/comm")" = evfcgid-reaper ]; then
		reapers="$reapers $c"
	else
		workers="$workers $c"
	fi
done
# shellcheck disable=SC2086
kill -STOP $reapers
# shellcheck disable=SC2086
kill -KILL $workers
replaced() {
	local c n=0
	for c in $(pgrep -P "$pid"); do
		[[ " $reapers $workers " == *" $c "* ]] || n=$((n + 1))
	done
	[ "$n" -ge 2 ]
}
check "workers killed, reapers stopped: the master replaced both workers" \
	wait_until 10 replaced
# The replacements attach to the reapers before their loop runs.
sleep 0.5
# shellcheck disable=SC2086
kill -CONT $reapers
check "workers killed, reapers woken after the replacements: the programs are ended within 5 s (${progs[*]})" \
	wait_gone 5 "${progs[@]}"
kill "$pid"
wait "$pid" 2>/dev/null

finish
