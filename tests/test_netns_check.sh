#!/bin/bash
# scripts/netns-check, the namespace for "another machine's kernel
# defaults" (tests/stock-tcp.sh runs tests in it): inside, tcp_rmem and
# tcp_wmem are the triples asked, and TCP over 127.0.0.1 and ::1 uses the
# congestion control it names (NETNS_CC; here reno, which no host has as
# its default, so that the check sees the script's choice and not the
# host's); the command's status comes back; the namespace is gone after.
# Skipped where it cannot run (not root, no iproute2).
source "$(dirname "$0")/lib.sh"

if [ "$(id -u)" -ne 0 ] || ! command -v ip >/dev/null; then
	ok "# SKIP scripts/netns-check needs root and iproute2"
	finish
fi
command -v python3 >/dev/null || { not_ok "python3 is installed"; finish; }

# A connection over each loopback, then the algorithms ss shows and the
# namespace's buffers.
cat >"$T/probe.py" <<'EOF'
import socket, subprocess
held = []
for fam, addr in ((socket.AF_INET, "127.0.0.1"), (socket.AF_INET6, "::1")):
    s = socket.socket(fam)
    s.bind((addr, 0))
    s.listen()
    c = socket.create_connection(s.getsockname()[:2])
    held += [s, c, s.accept()[0]]
out = subprocess.run(["ss", "-tinH", "state", "established"],
                     capture_output=True, text=True).stdout
algs = [w for w in out.split() if w in ("bbr", "cubic", "reno")]
print("algs", " ".join(sorted(algs)))
for k in ("tcp_rmem", "tcp_wmem"):
    print(k, " ".join(open("/proc/sys/net/ipv4/" + k).read().split()))
EOF
NETNS_CC=reno "$TOP/scripts/netns-check" '4096 65536 1048576' '4096 32768 2097152' \
	-- bash -c 'python3 "$1"; exit 7' sh "$T/probe.py" >"$T/out" 2>&1
rc=$?
sed 's/^/# /' "$T/out"
check "the command's status comes back (7: $rc)" test "$rc" -eq 7
check "tcp_rmem inside is the one asked" grep -qx 'tcp_rmem 4096 65536 1048576' "$T/out"
check "tcp_wmem inside is the one asked" grep -qx 'tcp_wmem 4096 32768 2097152' "$T/out"
check "TCP over 127.0.0.1 and ::1 uses the congestion control asked, not the host's (4 sockets: reno)" \
	grep -qx 'algs reno reno reno reno' "$T/out"
ns=$(sed -n 's/.*namespace \(evfcgid-check-[0-9]*\):.*/\1/p' "$T/out")
check "the namespace ($ns) is gone after" \
	eval '[ -n "$ns" ] && ! ip netns list | grep -qw "$ns"'
finish
