#!/bin/bash
# What evfcgid does as root, and what its log lets others write (issue 18,
# findings 3, 8 and 9):
# - a unix socket given --socket-owner/--socket-group/--socket-mode in a
#   directory its --user can write: a symbolic link swapped in for the
#   socket, raced over and over, never makes root chown or chmod the
#   link's target (a root-only 0600 file keeps its owner and mode);
# - --log-file that is a symbolic link, a FIFO or a second hard link is
#   refused at start and at SIGHUP, its target untouched;
# - --cgi without --cgi-root refuses to start (no default of /);
# - --cgi on TCP without --allow logs one warning at start;
# - a newline in REQUEST_URI, a CR in a program's stderr are escaped in
#   the log: one log line each, no line forged.
# The socket and log-file races need root (to chown and to act as the
# other user); without it they are skipped with the reason.
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/http.sh"

# as_nobody CMD...: CMD as the unprivileged user nobody, as a CGI program
# or a local user would be.  It execs: call it in a subshell (spawn's is
# one), so that the subshell's pid is the program's.
as_nobody() {
	exec perl -MPOSIX -e 'POSIX::setgid(65534) && POSIX::setuid(65534) or
		die "setuid: $!"; exec @ARGV or die "exec: $!"' "$@"
}

# settled LOG PID: evfcgid (PID, a child of this shell) logged that it
# listens, or has exited.  Asked every 50 ms of 200 starts: it starts no
# process.
settled() {
	local log="" st=""
	read -r -d '' log <"$1" 2>/dev/null
	[[ $log == *'listening on'* ]] && return 0
	read -r st <"/proc/$2/stat" 2>/dev/null || return 0
	[[ ${st##*) } == Z* ]]
}

# owner_mode FILE: "uid:gid mode" of FILE, not following a link.
owner_mode() { stat -c '%u:%g %a' "$1"; }

# cgi_start LOG ARGS...: evfcgid --cgi --cgi-root $T/cgi-bin ARGS, its
# stderr to LOG, until "listening on" (then CGI_PID).
cgi_start() {
	local log=$1
	shift
	spawn "$EVFCGID" --cgi --cgi-root "$T/cgi-bin" "$@" 2>"$log"
	CGI_PID=$SPAWNED
	wait_for_line "$log" 'listening on' 5 >/dev/null
}
cgi_stop() { kill "$CGI_PID"; wait "$CGI_PID" 2>/dev/null; }
warnings() { grep -c 'on a TCP socket without --allow' "$1"; }

ROOT=$(id -u)
mkdir -p "$T/cgi-bin"
# nobody must reach the directories made for it inside the scratch dir.
[ "$ROOT" -eq 0 ] && chmod 755 "$T"

# --- The unix socket's owner and mode, raced (finding 3). ---------------
if [ "$ROOT" -ne 0 ]; then
	ok "# SKIP socket owner race: needs root (to chown and to act as nobody)"
else
	D=$T/sockdir
	mkdir -p "$D"
	chown 65534 "$D"
	VICTIM=$T/root-only
	echo secret >"$VICTIM"
	chmod 600 "$VICTIM"
	before=$(owner_mode "$VICTIM")
	# The attacker: whenever a socket stands at the path, a symbolic link
	# to the victim is renamed over it.
	spawn as_nobody perl -e '
		my ($d, $v) = @ARGV;
		while (1) {
			next unless lstat("$d/s") && -S _;
			unlink("$d/.l");
			symlink($v, "$d/.l") && rename("$d/.l", "$d/s");
		}' "$D" "$VICTIM"
	RACER=$SPAWNED
	started=0 swapped=0 changed=0
	for i in $(seq 200); do
		rm -f "$D/s"
		log=$T/sock.$i.log
		"$EVFCGID" --listen "unix:$D/s" --socket-owner nobody \
			--socket-group nogroup --socket-mode 0666 --allow-root \
			2>"$log" &
		pid=$!
		wait_until 5 settled "$log" "$pid"
		grep -q 'listening on' "$log" && started=$((started + 1))
		[ -L "$D/s" ] && swapped=$((swapped + 1))
		kill "$pid" 2>/dev/null
		wait "$pid" 2>/dev/null
		if [ "$(owner_mode "$VICTIM")" != "$before" ]; then
			changed=$((changed + 1))
			echo "# start $i: the victim became $(owner_mode "$VICTIM")"
			chown 0:0 "$VICTIM"
			chmod 600 "$VICTIM"
		fi
	done
	kill "$RACER"
	wait "$RACER" 2>/dev/null
	echo "# $started of 200 starts listened; the socket was swapped for a link in $swapped"
	check "socket race: the attacker swapped the socket for a link ($swapped of 200 starts)" \
		test "$swapped" -gt 0
	check "socket race: root never chowned or chmodded the link's target ($changed of 200 starts did; $before now $(owner_mode "$VICTIM"))" \
		test "$changed" -eq 0 -a "$(owner_mode "$VICTIM")" = "$before"
	check "socket race: the victim's content is untouched" \
		test "$(cat "$VICTIM")" = secret

	# Without the race: the socket has the owner, group and mode asked,
	# nothing is left beside it, and it is served.
	rm -f "$D/s"
	spawn "$EVFCGID" --listen "unix:$D/s" --socket-owner nobody \
		--socket-group nogroup --socket-mode 0640 --allow-root 2>"$T/sock.log"
	pid=$SPAWNED
	wait_port "unix:$D/s"
	check "socket: owner nobody, group nogroup, mode 640 ($(owner_mode "$D/s"))" \
		test "$(owner_mode "$D/s")" = "65534:65534 640"
	check "socket: nothing else left in its directory ($(ls -A "$D" | tr '\n' ' '))" \
		test "$(ls -A "$D")" = s
	check "socket: /hello answered on it" fcgi_hello "$D/s" 5
	kill "$pid"
	wait "$pid" 2>/dev/null
fi

# --- --log-file: links and special files refused (finding 3). ----------
L=$T/logdir
mkdir -p "$L"
[ "$ROOT" -eq 0 ] && chown 65534 "$L"
VLOG=$T/root-log-victim
echo untouched >"$VLOG"
chmod 600 "$VLOG"
vbefore="$(owner_mode "$VLOG") $(md5sum <"$VLOG")"
vnow() { echo "$(owner_mode "$VLOG") $(md5sum <"$VLOG")"; }
port=$(freeport)
if [ "$ROOT" -eq 0 ]; then
	(as_nobody ln -s "$VLOG" "$L/link.log")
else
	ln -s "$VLOG" "$L/link.log"
fi
capture timeout 5 "$EVFCGID" --listen "127.0.0.1:$port" --log-file "$L/link.log"
check "--log-file a symbolic link: refused, exit 1 ($RC)" test "$RC" -eq 1
check "--log-file a symbolic link: the message says so ($ERR)" \
	grep -q 'link.log: a symbolic link (refused)' <<<"$ERR"
check "--log-file a symbolic link: its target untouched" test "$(vnow)" = "$vbefore"
mkfifo "$L/fifo.log"
capture timeout 5 "$EVFCGID" --listen "127.0.0.1:$port" --log-file "$L/fifo.log"
check "--log-file a FIFO: refused, exit 1 ($RC: $ERR)" \
	eval 'test "$RC" -eq 1 && grep -q "not a regular file" <<<"$ERR"'
ln "$VLOG" "$L/hard.log"
capture timeout 5 "$EVFCGID" --listen "127.0.0.1:$port" --log-file "$L/hard.log"
check "--log-file a second hard link: refused, exit 1 ($RC: $ERR)" \
	eval 'test "$RC" -eq 1 && grep -q "more than one link" <<<"$ERR"'
check "--log-file hard link: the file untouched" test "$(vnow)" = "$vbefore"
rm -f "$L/hard.log"

# SIGHUP after the log was swapped for a link: the link is not followed,
# the old file keeps the log and says why.
spawn "$EVFCGID" --listen "127.0.0.1:$port" --log-file "$L/real.log"
pid=$SPAWNED
wait_port "$port"
rm -f "$L/real.log.1"
mv "$L/real.log" "$L/real.log.1"
ln -s "$VLOG" "$L/real.log"
kill -HUP "$pid"
check "SIGHUP, the log swapped for a link: refused and logged in the old file" \
	wait_for_line "$L/real.log.1" 'cannot reopen the log: a symbolic link \(refused\)' 5
check "SIGHUP, the log swapped for a link: its target untouched" test "$(vnow)" = "$vbefore"
kill "$pid"
wait "$pid" 2>/dev/null

# --- --cgi needs --cgi-root (finding 8). --------------------------------
port=$(freeport)
capture timeout 5 "$EVFCGID" --cgi --listen "127.0.0.1:$port"
check "--cgi without --cgi-root: refused, exit 2 ($RC)" test "$RC" -eq 2
check "--cgi without --cgi-root: the message says so" \
	grep -q -e '--cgi needs --cgi-root DIR' <<<"$ERR"
printf 'cgi\nlisten 127.0.0.1:%s\n' "$port" >"$T/cgi.conf"
capture timeout 5 "$EVFCGID" --config "$T/cgi.conf"
check "cgi in a config file without cgi-root: refused, exit 2 ($RC), says so" \
	eval 'test "$RC" -eq 2 && grep -q -e "--cgi needs --cgi-root" <<<"$ERR"'

# --- --cgi on TCP without --allow warns, once (finding 8). ---------------
port=$(freeport)
cgi_start "$T/w1.log" --listen "127.0.0.1:$port" --workers 2
sleep 0.3
check "--cgi on TCP, no --allow, 2 workers: one warning ($(warnings "$T/w1.log"))" \
	test "$(warnings "$T/w1.log")" -eq 1
cgi_stop
cgi_start "$T/w2.log" --listen "127.0.0.1:$port" --allow 127.0.0.1
check "--cgi on TCP with --allow: no warning ($(warnings "$T/w2.log"))" \
	test "$(warnings "$T/w2.log")" -eq 0
cgi_stop
cgi_start "$T/w3.log" --listen "unix:$T/cgi.sock"
check "--cgi on a unix socket: no warning ($(warnings "$T/w3.log"))" \
	test "$(warnings "$T/w3.log")" -eq 0
cgi_stop
# The socket on fd 0 (spawn-fcgi's way): TCP warns, unix does not.
# on_fd0 ADDR CMD...: CMD with a socket listening on ADDR (HOST:PORT or a
# path) as its standard input; it execs, as spawn wants (a subshell).
on_fd0() {
	exec python3 -c '
import os, socket, sys
a = sys.argv[1]
if a.startswith("/"):
	s = socket.socket(socket.AF_UNIX)
	s.bind(a)
else:
	h, p = a.rsplit(":", 1)
	s = socket.socket()
	s.bind((h, int(p)))
s.listen(8)
os.dup2(s.fileno(), 0)
os.execv(sys.argv[2], sys.argv[2:])' "$@"
}
spawn on_fd0 "127.0.0.1:$port" "$EVFCGID" --cgi --cgi-root "$T/cgi-bin" 2>"$T/w4.log"
CGI_PID=$SPAWNED
wait_for_line "$T/w4.log" 'listening on' 5 >/dev/null
check "--cgi on a TCP socket on fd 0, no --allow: one warning ($(warnings "$T/w4.log"))" \
	test "$(warnings "$T/w4.log")" -eq 1
cgi_stop
spawn on_fd0 "$T/fd0.sock" "$EVFCGID" --cgi --cgi-root "$T/cgi-bin" 2>"$T/w5.log"
CGI_PID=$SPAWNED
wait_for_line "$T/w5.log" 'listening on' 5 >/dev/null
check "--cgi on a unix socket on fd 0: no warning ($(warnings "$T/w5.log"))" \
	test "$(warnings "$T/w5.log")" -eq 0
cgi_stop

# --- Forged log lines (finding 9). ---------------------------------------
cat >"$T/cgi-bin/cr.sh" <<'EOF'
#!/bin/sh
printf 'before\rFORGED-CR 2026-01-01T00:00:00Z evfcgid[1] error: x\n' >&2
printf 'Content-Type: text/plain\r\n\r\nok\n'
EOF
chmod 755 "$T/cgi-bin/cr.sh"
LOG=$T/forge.log
port=$(freeport)
cgi_start "$LOG" --listen "127.0.0.1:$port" --allow 127.0.0.1
fake='2026-01-01T00:00:00Z evfcgid[1] error: FORGED'
REQUEST_URI="/a%0a$fake" REQUEST_METHOD=GET \
	timeout 5 cgi-fcgi -bind -connect "127.0.0.1:$port" </dev/null >/dev/null 2>&1
REQUEST_URI="/b"$'\n'"${fake}-RAW" REQUEST_METHOD=GET \
	timeout 5 cgi-fcgi -bind -connect "127.0.0.1:$port" </dev/null >/dev/null 2>&1
REQUEST_URI="/c%07bell%1b[31mred" REQUEST_METHOD=GET \
	timeout 5 cgi-fcgi -bind -connect "127.0.0.1:$port" </dev/null >/dev/null 2>&1
SCRIPT_FILENAME=$T/cgi-bin/cr.sh REQUEST_METHOD=GET SCRIPT_NAME=/cr.sh \
	timeout 5 cgi-fcgi -bind -connect "127.0.0.1:$port" </dev/null >"$T/cr.out" 2>&1
wait_for_line "$LOG" 'FORGED-CR' 5 >/dev/null
cgi_stop
check "log: no line begins with the forged text" \
	eval '! grep -q "^2026-01-01T00:00:00Z evfcgid\[1\]" "$LOG"'
check "log: %0a in REQUEST_URI written as \\n in one warning line" \
	grep -q "request for /a\\\\n2026-01-01T00:00:00Z evfcgid\\[1\\] error: FORGED names no program" "$LOG"
check "log: a raw newline in REQUEST_URI written as \\n in one line" \
	grep -q "request for /b\\\\n2026-01-01.*FORGED-RAW names no program" "$LOG"
check "log: a CR in a program's stderr written as \\r in its line" \
	grep -q 'cr.sh\[[0-9]*\]: before\\rFORGED-CR' "$LOG"
check "log: other control bytes (BEL, ESC) as \\xHH" \
	grep -q 'request for /c\\x07bell\\x1b\[31mred names' "$LOG"
check "log: no CR, no control byte but the newlines anywhere" \
	eval '! LC_ALL=C grep -q "[[:cntrl:]]" "$LOG"'
check "the CGI program still answered" grep -q '^ok' "$T/cr.out"

finish
