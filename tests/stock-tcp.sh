# tests/stock-tcp.sh: sourced first (before lib.sh) by a test whose outcome
# is the kernel's TCP buffers' doing: how far a send buffer autotunes from
# tcp_wmem's default towards its max.  Machines differ there (a default of
# 1 MiB, a max of 32 MiB), and a test must not depend on this machine's.
# As root the test runs itself again in a network namespace of its own
# with the kernel's stock tcp_rmem and tcp_wmem (scripts/netns-check: only
# loopback, deleted on exit).  Without root it runs here, and stock_tcp
# says whether this machine has the stock values, for the checks that
# need them to skip, saying why, where it does not.
STOCK_RMEM="4096 131072 6291456" STOCK_WMEM="4096 16384 4194304"
if [ -z "${EVFCGID_STOCK_TCP:-}" ] && [ "$(id -u)" = 0 ] && command -v ip >/dev/null; then
	EVFCGID_STOCK_TCP=1 exec "$(dirname "${BASH_SOURCE[0]}")/../scripts/netns-check" \
		"$STOCK_RMEM" "$STOCK_WMEM" -- bash "$0" "$@"
fi

# stock_tcp: true where tcp_rmem and tcp_wmem are the stock ones; sets
# TCP_BUFS to what they are.
stock_tcp() {
	TCP_BUFS="tcp_rmem '$(tr -s '\t ' ' ' </proc/sys/net/ipv4/tcp_rmem)', tcp_wmem '$(tr -s '\t ' ' ' </proc/sys/net/ipv4/tcp_wmem)'"
	[ "$TCP_BUFS" = "tcp_rmem '$STOCK_RMEM', tcp_wmem '$STOCK_WMEM'" ]
}
