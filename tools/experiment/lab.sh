#!/bin/bash
# tools/experiment/lab.sh: the shaped-link lab of slow-client-experiment
# --links, on tools/netlab.sh.
#
#   lab.sh up TAG MAXSLOW CMD...
#       builds lab TAG (namespace srv, and slow and fast joined to it by
#       a veth link each; MAXSLOW client addresses in slow), runs CMD
#       inside srv with EVF_LINKS_LAB (the lab's state), EVF_LINKS_ADDRS
#       (the addresses, one a line) and EVF_LINKS_TCP_MEM, and exits with
#       its status; the lab goes on exit, also on a signal
#   lab.sh info STATE      fast side's server address, fast namespace,
#                          slow side's server address, slow namespace
#   lab.sh shape STATE KBIT ADDR...   each ADDR on its own KBIT link
#   lab.sh unshape STATE
TOP=$(cd "$(dirname "$0")/../.." && pwd)
source "$TOP/tests/lib.sh"
source "$TOP/tools/netlab.sh"

die() { echo "slow-client-experiment: --links: $*" >&2; exit 2; }

cmd=$1
shift
case $cmd in
up)
	tag=$1 maxslow=$2
	shift 2
	netlab_usable || die "$NETLAB_SKIP"
	netlab_init "$tag" || die "bad EVF_LINKS_TAG"
	trap 'netlab_cleanup; cleanup' EXIT
	netlab_ns srv slow fast && netlab_link srv slow && netlab_link srv fast ||
		die "cannot build the lab"
	# The fast load opens thousands of connections a second from one
	# address and closes first: without TIME_WAIT reuse (2, the default,
	# is loopback only) its ports ran out within seconds once the machine
	# served 7000 a second, and the calibration's later rounds read 0.84
	# and 1.46 (a test failing by the machine's speed).
	ip netns exec "$(netlab_nsname fast)" sysctl -q -w net.ipv4.tcp_tw_reuse=1 ||
		die "cannot set tcp_tw_reuse for the fast clients"
	netlab_addrs slow srv "$maxslow" >"$T/lab.addrs" || die "cannot add the client addresses"
	netlab_save "$T/lab.state"
	export EVF_LINKS_LAB=$T/lab.state EVF_LINKS_ADDRS=$T/lab.addrs
	EVF_LINKS_TCP_MEM=$(tr '\t' ' ' </proc/sys/net/ipv4/tcp_mem)
	export EVF_LINKS_TCP_MEM
	netlab_spawn srv "$@"
	wait "$NETLAB_PID"
	exit $?
	;;
info)
	netlab_load "$1"
	printf '%s\n' "$(netlab_ip srv fast)" "$(netlab_nsname fast)" "$(netlab_ip srv slow)" "$(netlab_nsname slow)"
	;;
shape)
	netlab_load "$1"
	shift
	netlab_unshape srv slow
	[ $# -gt 1 ] || exit 0
	netlab_shape srv slow "$@"
	;;
unshape)
	netlab_load "$1"
	netlab_unshape srv slow
	;;
*) die "lab.sh: unknown command '$cmd'" ;;
esac
