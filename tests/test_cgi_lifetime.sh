#!/bin/bash
# evfcgid --cgi: every program ends within its limits (issue 18, findings
# 4 and 7), behind nginx with the CGI locations of tests/cgi.sh.  Programs
# that answer, close their stdout and sleep on are ended after the grace
# (or at the time limit, if sooner) and do not hold --cgi-max slots (fcgiwrap -c 1 served such a script
# three times in a row); a chain of local redirects leaves no process
# behind; what a program leaves in its process group (sleep 1000 &) ends
# with it, and so does what it leaves outside (setsid, setpgid(0, 0), a
# double fork); --cgi-lifetime ends a program whose slow client keeps
# it waiting; a program flooding stderr after its answer costs the daemon
# little CPU; output held while request bodies never end stays within
# --max-queued.  Another evfcgid: CGI_EVFCGID=/path/to/evfcgid.
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/frontends.sh"
source "$(dirname "$0")/cgi.sh"

command -v curl >/dev/null || { not_ok "curl is installed"; finish; }
command -v python3 >/dev/null || { not_ok "python3 is installed"; finish; }
[ -x "$NGINX" ] || { not_ok "nginx is installed ($NGINX)"; finish; }
cgi_backend_usable evfcgid || { not_ok "evfcgid --cgi: $CGI_SKIP"; finish; }

WWW=$T/www
cgi_www "$WWW" || { not_ok "the CGI scripts are copied to $WWW"; finish; }

# start_cgi ARGS...: evfcgid --cgi --cgi-root $WWW/cgi-bin ARGS on a fresh
# address, and nginx in front of it; sets CGI_ADDR, CGI_PID, CGI_LOG,
# CGI_URL.
start_cgi() {
	cgi_addr tcp
	CGI_LOG=$T/evfcgid-cgi.$CGI_NO.log
	cgi_spawn_group "$CGI_LOG" "$CGI_EVFCGID" --cgi --cgi-root "$WWW/cgi-bin" \
		--listen "$CGI_ADDR" "$@" && wait_port "$CGI_ADDR" &&
		start_cgi_nginx "$CGI_ADDR" "$WWW"
}

stop_cgi() {
	stop_cgi_nginx
	stop_cgi_backend
}

# get NAME: the body of /cgi-bin/NAME (a request of at most 10 s); its
# status in CODE.
get() {
	local out
	out=$(curl -s --max-time 10 -w '\n%{http_code}' "$CGI_URL/cgi-bin/$1")
	CODE=${out##*$'\n'}
	BODY=${out%$'\n'*}
	BODY=${BODY%$'\n'}
}

# ticks PID: the CPU clock ticks PID has used (user + system).
ticks() { awk '{ print $14 + $15 }' "/proc/$1/stat"; }

# group_empty PGID...: true when no process is left in any of the groups.
group_empty() {
	local g
	for g in "$@"; do
		pgrep -g "$g" >/dev/null && return 1
	done
	return 0
}

# --- Lingering programs do not hold --cgi-max slots. ------------------
# Eight requests in a row to a script that answers, closes its stdout and
# sleeps on, with 4 slots: the 5th to the 8th need the slots of the first
# ones, which are free only once those have been ended (1 s of grace,
# SIGTERM) and reaped.  Before: they held their slots past the time limit
# and the 5th got 504.
start_cgi --cgi-max 4 --cgi-queue 8 --cgi-timeout 6 --cgi-kill-grace 1 ||
	{ not_ok "evfcgid --cgi --cgi-max 4 and nginx start"; finish; }
pids=() codes=""
t0=$(now_ns)
for i in $(seq 8); do
	get linger.sh
	codes="$codes $CODE"
	pid=${BODY#linger }
	cgi_own_pid "$pid" && pids+=("$pid")
done
ms=$(ms_since "$t0")
echo "# 8 lingering programs in a row through --cgi-max 4: statuses$codes in $ms ms"
check "--cgi-max 4: 8 programs that answer and sleep on are served in a row (statuses$codes)" \
	test "$codes" = " 200 200 200 200 200 200 200 200"
check "--cgi-max 4: all 8 answered before the time limit of 6 s ($ms ms)" \
	test "$ms" -lt 6000
check "lingering programs: each is ended after its request (${pids[*]})" \
	wait_gone 5 "${pids[@]}"
check "lingering programs: the daemon logged why it ended them" \
	grep -q 'linger\.sh.*still running after its request was done' "$CGI_LOG"

stop_cgi

# --- The time limit covers a program's whole life. --------------------
# With --cgi-timeout 2 and 20 s of grace, a program that answered and
# sleeps on is ended at its request's time limit, not after the grace.
start_cgi --cgi-timeout 2 --cgi-kill-grace 20 ||
	{ not_ok "evfcgid --cgi --cgi-timeout 2 and nginx start"; finish; }
get linger.sh
pid=${BODY#linger }
cgi_own_pid "$pid"
check "--cgi-timeout 2: a program that answered is running on ($CODE: $BODY)" \
	eval '[ "$CODE" = 200 ] && kill -0 "$pid"'
check "--cgi-timeout 2, 20 s of grace: it is ended at the time limit, within 4 s" \
	wait_gone 4 "$pid"
stop_cgi

# --- A chain of local redirects leaves no process behind. -------------
# hop.sh?n=4: four hops redirect and sleep on, the fifth answers (slots
# enough for all five: the answer does not wait for the grace).
# The grace is 6 s: long enough for the scan of /proc that finds the hops
# on a busy machine (it took over 2 s beside other tests).
start_cgi --cgi-timeout 20 --cgi-kill-grace 6 ||
	{ not_ok "evfcgid --cgi --cgi-kill-grace 6 and nginx start"; finish; }
get 'hop.sh?n=4'
check "a chain of 4 local redirects is answered by the last hop ($CODE: $BODY)" \
	eval '[ "$CODE" = 200 ] && [[ $BODY == "hop "* ]]'
# Each hop is a process group of its own (its sh and its sleep).
hops=$(for p in $(cgi_pids "$WWW/cgi-bin/hop.sh"); do ps -o pgid= -p "$p"; done |
	sort -un | tr -d ' ' | tr '\n' ' ')
echo "# right after the answer, the hops still running: ${hops:-none}"
check "a chain of 4 local redirects: right after the answer, its 4 hops still run (${hops:-none})" \
	test "$(wc -w <<<"$hops")" = 4
# shellcheck disable=SC2086
check "a chain of 4 local redirects: no hop is left running after the grace (${hops:-none})" \
	wait_until 10 group_empty $hops
left=$(cgi_pids "$WWW/cgi-bin/hop.sh" | wc -w)
check "a chain of 4 local redirects: no process of it by its name ($left)" test "$left" = 0

# --- What a program leaves in its process group ends with it. ---------
get bg.sh
read -r pid child <<<"$BODY"
cgi_own_pid "$pid"
cgi_own_pid "$child"
check "a program that leaves 'sleep 1000 &' behind answers ($CODE: $BODY)" \
	eval '[ "$CODE" = 200 ] && [ -n "$child" ]'
check "its background child ($child) is ended with it" wait_gone 2 "$child"

# --- What a program leaves outside its group ends with it too. ---------
# The gateway is the subreaper of what its programs start: a process that
# calls setsid or setpgid(0, 0), or whose parent ended (a double fork),
# becomes its child when its own parent ends, and is ended.  Before, each
# ran on (setsid was documented as the way out).
for how in setsid setpgid double daemon; do
	get "escape.sh?$how"
	cgi_own_pid "$BODY"
	check "escape.sh?$how: answers with the pid it left ($CODE: $BODY)" \
		eval '[ "$CODE" = 200 ] && [[ $BODY =~ ^[0-9]+$ ]]'
	check "escape.sh?$how: what it left ($BODY) is ended within 3 s" wait_gone 3 "$BODY"
done
check "escapes: logged as ended ($(grep -m1 'outside their process groups' "$CGI_LOG" | cut -c1-140))" \
	grep -q "outside their process groups" "$CGI_LOG"
zombies=$(ps -o stat= --ppid "$CGI_PID" 2>/dev/null | grep -c Z)
check "escapes: no zombie left ($zombies)" test "$zombies" = 0
stop_cgi

# --- --cgi-lifetime: wall clock, client's time included. --------------
# A slow client (4 KiB buffers, a read every 50 ms) of a 256 MiB output:
# its output waits on the client, so --cgi-timeout (600) is paused; with
# --cgi-lifetime 2 the program is ended at 2 s all the same, and the
# answer cut.  Before: no such option (evfcgid refused to start), and
# the program held its slot as long as the client kept reading.
start_cgi --cgi-timeout 600 --cgi-lifetime 2 ||
	{ not_ok "evfcgid --cgi --cgi-lifetime 2 and nginx start"; finish; }
spawn "$TOP/tools/http_get" -b 4096 -r 4096 -p 50 -t 30 -q -o "$T/slowlife" \
	"$CGI_URL/cgi-bin/big.sh?268435456"
slowget=$SPAWNED
check "--cgi-lifetime 2: the program is ended at its lifetime, logged ($(grep -m1 'lifetime limit' "$CGI_LOG" | cut -c1-140))" \
	wait_until 8 grep -q "lifetime limit of 2 s reached" "$CGI_LOG"
check "--cgi-lifetime 2: no big.sh left 3 s later though its client still reads" \
	wait_until 3 eval '[ "$(cgi_pids "$WWW/cgi-bin/big.sh" | wc -w)" = 0 ]'
kill "$slowget" 2>/dev/null
wait "$slowget" 2>/dev/null
got=$(wc -c <"$T/slowlife" 2>/dev/null || echo 0)
check "--cgi-lifetime 2: the slow client had part of the answer, cut ($got of 268435456 bytes)" \
	eval '[ "$got" -gt 0 ] && [ "$got" -lt 268435456 ]'
stop_cgi

# --- --cgi-write-timeout: a client that takes nothing frees the slot. --
# A client that reads once and then nothing (a read every 100 s) of a 256
# MiB output, with one slot: its program's output waits for it, and with
# --cgi-write-timeout 2 the program is ended 2 s after the connection
# last took some, the answer cut, and the slot goes to the next request
# long before --cgi-lifetime (600).  Before: no such option, and the
# slot was held for --cgi-lifetime.
start_cgi --cgi-max 1 --cgi-queue 4 --cgi-timeout 600 --cgi-lifetime 600 \
	--cgi-write-timeout 2 ||
	{ not_ok "evfcgid --cgi --cgi-write-timeout 2 and nginx start"; finish; }
spawn "$TOP/tools/http_get" -b 4096 -r 4096 -p 100000 -t 60 -q \
	"$CGI_URL/cgi-bin/big.sh?268435456"
stuck=$SPAWNED
check "--cgi-write-timeout 2: a big.sh runs for the stuck client" \
	wait_until 5 eval '[ "$(cgi_pids "$WWW/cgi-bin/big.sh" | wc -w)" -gt 0 ]'
check "--cgi-write-timeout 2: it is ended, logged ($(grep -m1 'took no output' "$CGI_LOG" | cut -c1-140))" \
	wait_until 10 grep -q "its client took no output for 2 s (--cgi-write-timeout)" "$CGI_LOG"
check "--cgi-write-timeout 2: no big.sh left" \
	wait_until 5 eval '[ "$(cgi_pids "$WWW/cgi-bin/big.sh" | wc -w)" = 0 ]'
get hello.sh
check "--cgi-write-timeout 2, --cgi-max 1: the next request has the slot ($CODE: $BODY)" \
	eval '[ "$CODE" = 200 ] && [ "$BODY" = "hello from cgi" ]'
kill "$stuck" 2>/dev/null
wait "$stuck" 2>/dev/null
stop_cgi

# --- A stderr flood after the answer: the daemon stays idle. ----------
# With 8 s of grace the flood runs on for a while after the answer; the
# daemon reads stderr past 1 MiB at a pace, discarding it.  Before: 99%
# of a core for as long as the program ran (for ever: nothing ended it).
start_cgi --cgi-timeout 30 --cgi-kill-grace 8 ||
	{ not_ok "evfcgid --cgi --cgi-kill-grace 8 and nginx start"; finish; }
get flood.sh
pid=${BODY#flood }
cgi_own_pid "$pid"
check "a program that floods stderr after its answer answers ($CODE: $BODY)" \
	eval '[ "$CODE" = 200 ] && kill -0 "$pid"'
sleep 0.5
hz=$(getconf CLK_TCK)
c0=$(ticks "$CGI_PID")
sleep 3
c1=$(ticks "$CGI_PID")
cpu=$(( (c1 - c0) * 100 / (3 * hz) ))
alive=no
kill -0 "$pid" 2>/dev/null && alive=yes
echo "# daemon CPU over 3 s while a program floods stderr: $cpu% of a core (the program still running: $alive)"
check "a stderr flood: the daemon used under 30% of a core over 3 s ($cpu%)" \
	test "$cpu" -lt 30
check "a stderr flood: the program was flooding all along" test "$alive" = yes
check "a stderr flood: the discarding is logged once" \
	eval '[ "$(grep -c "over [0-9]* bytes of stderr: the rest is read and discarded" "$CGI_LOG")" = 1 ]'
check "a stderr flood: the program is ended after the grace" wait_gone 10 "$pid"
check "a stderr flood: the bytes discarded are counted in the log" \
	wait_for_line "$CGI_LOG" "flood\.sh.*[0-9]+ bytes of stderr discarded" 3
stop_cgi

# --- Output held while request bodies never end stays bounded. --------
# 16 POSTs over raw FastCGI whose bodies never end, to a program writing
# 8 MiB: its output is held (the body has not ended), up to --cgi-hold
# (8 MiB) each and --max-queued (1 MiB) for all.  Before: 8 MiB each,
# 128 MiB in all.  Then the bodies end and each gets its 8 MiB whole.
cat >"$T/hold.py" <<'EOF'
import selectors, socket, struct, sys, time

host, port = sys.argv[1].rsplit(':', 1)
script, n, hold, size = sys.argv[2], int(sys.argv[3]), float(sys.argv[4]), sys.argv[5]

def rec(t, content):
	return struct.pack('>BBHHBB', 1, t, 1, len(content), 0, 0) + content

def nv(name, value):
	out = b''
	for s in (name, value):
		out += bytes([len(s)]) if len(s) < 128 else struct.pack('>I', len(s) | 0x80000000)
	return out + name + value

params = b''.join(nv(k.encode(), v.encode()) for k, v in (
	('SCRIPT_FILENAME', script), ('SCRIPT_NAME', '/cgi-bin/big.sh'),
	('REQUEST_METHOD', 'POST'), ('CONTENT_LENGTH', '1048576'),
	('CONTENT_TYPE', 'application/octet-stream'),
	('QUERY_STRING', size), ('REQUEST_URI', '/cgi-bin/big.sh?' + size)))
socks = []
for i in range(n):
	s = socket.create_connection((host, int(port)))
	s.sendall(rec(1, struct.pack('>HB5x', 1, 0)) + rec(4, params) +
		  rec(4, b'') + rec(5, b'the body begins'))
	socks.append(s)
print('held', flush=True)
time.sleep(hold)
for s in socks:
	s.sendall(rec(5, b''))
# Read side by side: the 1 MiB cap is shared by all 16 outputs.
sel = selectors.DefaultSelector()
for i, s in enumerate(socks):
	sel.register(s, selectors.EVENT_READ, [i, bytearray(), bytearray()])
got = [''] * n
while sel.get_map():
	ready = sel.select(30)
	if not ready:
		break
	for key, _ in ready:
		st, d = key.data, key.fileobj.recv(1 << 16)
		st[1] += d
		done = not d
		while len(st[1]) >= 8:
			b = st[1]
			t, clen, plen = b[1], b[4] << 8 | b[5], b[6]
			if len(b) < 8 + clen + plen:
				break
			if t == 6:
				st[2] += b[8:8 + clen]
			elif t == 3:
				done = True
			del b[:8 + clen + plen]
		if done:
			out = st[2]
			i = out.find(b'\r\n\r\n')
			got[st[0]] = str(len(out) - i - 4 if i >= 0 else -1)
			sel.unregister(key.fileobj)
			key.fileobj.close()
print(' '.join(got))
EOF
start_cgi --max-queued 1m --cgi-timeout 60 ||
	{ not_ok "evfcgid --cgi --max-queued 1m and nginx start"; finish; }
rss0=$(rss_kib "$CGI_PID")
python3 "$T/hold.py" "$CGI_ADDR" "$WWW/cgi-bin/big.sh" 16 4 8388608 >"$T/hold.out" &
holder=$!
PIDS+=("$holder")
wait_for_line "$T/hold.out" held 5
sleep 3
rss1=$(rss_kib "$CGI_PID")
echo "# 16 requests whose body has not ended, their programs writing 8 MiB each, --max-queued 1m: daemon RSS $rss0 -> $rss1 KiB"
check "held output: the daemon's RSS grew by under 16 MiB ($rss0 -> $rss1 KiB) with 16 bodies unended" \
	test $((rss1 - rss0)) -lt 16384
wait "$holder"
want=$(printf '8388608 %.0s' $(seq 16))
check "held output: once the bodies end, each of the 16 gets its 8 MiB ($(cat "$T/hold.out" | tail -1))" \
	test "$(tail -1 "$T/hold.out") " = "$want"
stop_cgi
finish
