# tools/netlab.sh: a lab of network namespaces joined by veth pairs, with
# links shaped by the kernel's HTB and TBF, for the experiment and the tests
# (bash, sourced; needs root and iproute2).  Nothing touches the host's own
# namespace: every veth is made inside the lab's namespaces and every qdisc
# sits on such a veth, so deleting the namespaces removes all of it.
#
# Names: a lab has a TAG ([a-z0-9]+, no dash); its namespaces are
# evfTAG-NAME (NAME [a-z0-9]+).  A link between namespaces A and B is the
# K-th of the lab (1..250): A is 10.K.0.1/24, B is 10.K.0.2/24, and A
# routes 10.K.0.0/16 to B, so that B (the client side) may take any number
# of extra addresses from 10.K.1.0 up (netlab_addrs) without A learning
# one neighbour per address.  Neighbours on a link are static: a link that
# is down drops packets silently (the peer sees timeouts), as a cable cut.
# Inside A the interface towards B is named v-B (and v-A inside B).
#
# TCP in the lab is cubic, the kernel's default, whatever the host chose:
# a new namespace inherits the host's algorithm (this machine's is bbr,
# whose bandwidth filter takes an HTB class's first burst for gigabits on
# a 33.6 kbit/s link; with it tools/many-slow-clients' fast clients
# fetched a third as fast), and a test must not depend on it.  The lab's
# routes, its links' and each namespace's loopback, carry `congctl`: a route may
# name any algorithm the kernel has, a namespace's sysctl only those the
# host allows.  NETLAB_CC, set before netlab_init, picks another.
#
#   netlab_usable            true if a lab can be made here (root, ip, tc,
#                            a namespace can be created); else false with
#                            the reason in NETLAB_SKIP
#   netlab_init TAG          starts lab TAG: removes the leftovers of a
#                            crashed run of the same tag first
#   netlab_ns NAME...        creates namespaces evfTAG-NAME, loopback up
#   netlab_nsname NAME       prints evfTAG-NAME
#   netlab_link A B          joins namespaces A and B by a veth pair
#   netlab_ip A B            prints A's address on its link to B
#   netlab_dev A B           prints the name of A's interface towards B
#   netlab_exec NAME CMD...  runs CMD inside namespace NAME
#   netlab_spawn NAME CMD... starts CMD inside namespace NAME in the
#                            background; NETLAB_PID is its pid (CMD's own:
#                            ip netns exec execs it)
#   netlab_addrs B A COUNT   adds COUNT addresses on B's end of link A-B (B
#                            is the link's second namespace) and prints
#                            them, one a line
#   (Shaping sends A's traffic towards B in frames of one segment, no GSO
#   packets of 64 KiB: a shaper lets a whole packet through at once, and
#   64 KiB is 15 s of a modem.)
#   netlab_shape A B KBIT ADDR...
#                            each ADDR gets its own link of KBIT kbit/s from
#                            A towards it: an HTB class on A's interface to
#                            B with a u32 filter (hashed on the address's
#                            last byte) on the destination; traffic to other
#                            addresses passes unshaped
#   netlab_shape_src A B KBIT ADDR...
#                            the same, matching the source address (ADDR
#                            one of A's: its uploads)
#   netlab_tbf A B KBIT      shapes the whole of A's traffic towards B with a
#                            TBF (replaces any qdisc there)
#   netlab_unshape A B       removes A's qdisc towards B (HTB or TBF)
#   netlab_link_down A B     sets A's end of link A-B down: B's packets to A
#                            are dropped without a word, A's cannot leave
#   netlab_link_up A B       sets it up again
#   netlab_cleanup           ends the processes still inside the lab's
#                            namespaces (by pid), then deletes the
#                            namespaces (and with them their veths and
#                            qdiscs); idempotent: install it in the caller's
#                            EXIT trap
#   netlab_leftovers [TAG]   prints what is left of lab TAG (namespaces,
#                            host interfaces named evfTAG*); empty when clean
#   netlab_save FILE, netlab_load FILE
#                            the lab's state to a file and back, for a script
#                            that works in a lab another one made
#
# Example:
#   source tools/netlab.sh
#   netlab_usable || { echo "skipped: $NETLAB_SKIP"; exit 0; }
#   netlab_init demo; trap netlab_cleanup EXIT
#   netlab_ns srv cli; netlab_link srv cli
#   a=$(netlab_addrs cli srv 1); netlab_shape srv cli 256 "$a"
#   netlab_exec cli curl --interface "$a" "http://$(netlab_ip srv cli):8080/"

NETLAB_TAG=
NETLAB_LINKS=0
NETLAB_CC=${NETLAB_CC:-cubic}
NETLAB_SKIP=
NETLAB_PID=
declare -gA NETLAB_LINKNO=()	# "A B" -> K, both orders
declare -gA NETLAB_FIRST=()	# K -> the link's first namespace (10.K.0.1)
declare -gA NETLAB_SECOND=()	# K -> its second (10.K.0.2)
declare -gA NETLAB_NADDR=()	# K -> addresses added on its B end
declare -gA NETLAB_NCLASS=()	# "A B" -> HTB classes made on A towards B

# netlab_usable: see the header.
netlab_usable() {
	local probe
	NETLAB_SKIP=
	if [ "$(id -u)" -ne 0 ]; then
		NETLAB_SKIP="not root: network namespaces need CAP_SYS_ADMIN"
	elif ! command -v ip >/dev/null || ! command -v tc >/dev/null; then
		NETLAB_SKIP="no ip or tc (iproute2 is not installed)"
	else
		probe=evfprobe$$-x
		if ip netns add "$probe" 2>/dev/null; then
			ip netns del "$probe"
		else
			NETLAB_SKIP="ip netns add fails here (no network namespaces)"
		fi
	fi
	[ -z "$NETLAB_SKIP" ]
}

# netlab_init TAG: see the header.
netlab_init() {
	[[ $1 =~ ^[a-z0-9]+$ ]] || { echo "netlab_init: bad tag '$1'" >&2; return 2; }
	NETLAB_TAG=$1 NETLAB_LINKS=0
	NETLAB_LINKNO=() NETLAB_FIRST=() NETLAB_SECOND=() NETLAB_NADDR=()
	NETLAB_NCLASS=()
	netlab_cleanup
}

netlab_nsname() { echo "evf$NETLAB_TAG-$1"; }

# netlab_ns NAME...: see the header.
netlab_ns() {
	local n
	for n in "$@"; do
		[[ $n =~ ^[a-z0-9]+$ ]] || { echo "netlab_ns: bad name '$n'" >&2; return 2; }
		ip netns add "evf$NETLAB_TAG-$n" || return 1
		ip -n "evf$NETLAB_TAG-$n" link set lo up || return 1
		netlab_cc_lo "evf$NETLAB_TAG-$n" || return 1
	done
}

# netlab_cc_lo NS: the loopback's routes (127.0.0.1 and the rest of
# 127/8, and ::1, in the local table) with the lab's congestion control
# (scripts/netns-check uses it too).
netlab_cc_lo() {
	local r
	for r in 127.0.0.1 127.0.0.0/8; do
		ip -n "$1" route replace local "$r" dev lo proto kernel \
			scope host src 127.0.0.1 table local congctl "$NETLAB_CC" ||
			{ echo "netlab: no congestion control '$NETLAB_CC' here" >&2; return 1; }
	done
	# ::1's is replaced only by deleting it first (a new one would sit
	# behind it, at another metric); none where IPv6 is off.
	ip -n "$1" -6 route show table local | grep -q '^local ::1 ' || return 0
	ip -n "$1" -6 route del local ::1 dev lo table local &&
		ip -n "$1" -6 route add local ::1 dev lo table local proto kernel \
			metric 0 congctl "$NETLAB_CC" ||
		{ echo "netlab: could not set ::1's congestion control" >&2; return 1; }
}

# netlab_routes K: link K's routes, both ends: the link's own /24 (made by
# the kernel with the address, again when the interface comes up) and the
# first namespace's route to the second's extra addresses, all with the
# lab's congestion control.
netlab_routes() {
	local k=$1 a=${NETLAB_FIRST[$1]} b=${NETLAB_SECOND[$1]}
	ip -n "evf$NETLAB_TAG-$a" route replace "10.$k.0.0/24" dev "v-$b" \
		proto kernel scope link src "10.$k.0.1" congctl "$NETLAB_CC" &&
		ip -n "evf$NETLAB_TAG-$a" route replace "10.$k.0.0/16" \
			via "10.$k.0.2" dev "v-$b" congctl "$NETLAB_CC" &&
		ip -n "evf$NETLAB_TAG-$b" route replace "10.$k.0.0/24" dev "v-$a" \
			proto kernel scope link src "10.$k.0.2" congctl "$NETLAB_CC"
}

netlab_exec() {
	local ns=evf$NETLAB_TAG-$1
	shift
	ip netns exec "$ns" "$@"
}

# netlab_spawn NAME CMD...: see the header.
netlab_spawn() {
	local ns=evf$NETLAB_TAG-$1
	shift
	ip netns exec "$ns" "$@" &
	NETLAB_PID=$!
}

# netlab_mac NS IF: the interface's hardware address.
netlab_mac() { ip -n "$1" -o link show dev "$2" | sed -n 's/.*link\/ether \([0-9a-f:]*\).*/\1/p'; }

# netlab_link A B: see the header.
netlab_link() {
	local a=evf$NETLAB_TAG-$1 b=evf$NETLAB_TAG-$2 k ma mb
	k=$((NETLAB_LINKS + 1))
	[ "$k" -le 250 ] || { echo "netlab_link: at most 250 links" >&2; return 1; }
	ip link add "v-$2" netns "$a" type veth peer name "v-$1" netns "$b" || return 1
	NETLAB_LINKS=$k
	NETLAB_LINKNO["$1 $2"]=$k NETLAB_LINKNO["$2 $1"]=$k NETLAB_NADDR[$k]=0
	NETLAB_FIRST[$k]=$1 NETLAB_SECOND[$k]=$2
	ip -n "$a" addr add "10.$k.0.1/24" dev "v-$2" &&
		ip -n "$b" addr add "10.$k.0.2/24" dev "v-$1" &&
		ip -n "$a" link set "v-$2" up && ip -n "$b" link set "v-$1" up &&
		netlab_routes "$k" || return 1
	ma=$(netlab_mac "$a" "v-$2") mb=$(netlab_mac "$b" "v-$1")
	ip -n "$a" neigh replace "10.$k.0.2" lladdr "$mb" nud permanent dev "v-$2" &&
		ip -n "$b" neigh replace "10.$k.0.1" lladdr "$ma" nud permanent dev "v-$1"
}

# netlab_k A B: the number of link A-B (fails if there is none).
netlab_k() {
	local k=${NETLAB_LINKNO["$1 $2"]:-}
	[ -n "$k" ] || { echo "netlab: no link $1-$2" >&2; return 1; }
	echo "$k"
}

netlab_dev() { echo "v-$2"; }

# netlab_ip A B: see the header.
netlab_ip() {
	local k
	k=$(netlab_k "$1" "$2") || return 1
	if [ "${NETLAB_FIRST[$k]}" = "$1" ]; then echo "10.$k.0.1"; else echo "10.$k.0.2"; fi
}

# netlab_addrs B A COUNT: see the header.
netlab_addrs() {
	local k i n first list=$NETLAB_TMP.addrs ns=evf$NETLAB_TAG-$1
	k=$(netlab_k "$1" "$2") || return 1
	[ "$(netlab_ip "$1" "$2")" = "10.$k.0.2" ] ||
		{ echo "netlab_addrs: $1 is not the second namespace of link $2-$1" >&2; return 1; }
	first=${NETLAB_NADDR[$k]}
	n=$((first + $3))
	[ "$n" -le 64516 ] || { echo "netlab_addrs: at most 64516 addresses a link" >&2; return 1; }
	for ((i = first; i < n; i++)); do
		echo "addr add 10.$k.$((1 + i / 254)).$((1 + i % 254))/32 dev v-$2"
	done >"$list"
	ip -n "$ns" -batch "$list" || return 1
	NETLAB_NADDR[$k]=$n
	sed 's/^addr add \([0-9.]*\)\/32.*/\1/' "$list"
	rm -f "$list"
}

# netlab_shape_dir DIR A B KBIT ADDR...: netlab_shape (DIR dst) and
# netlab_shape_src (DIR src).  The HTB root and the two hash tables (2: on
# the destination's last byte, 3: on the source's) are made on first use.
netlab_shape_dir() {
	local dir=$1 a=$2 b=$3 kbit=$4 ns=evf$NETLAB_TAG-$2 dev=v-$3 c addr ht=2
	local list=$NETLAB_TMP.tc
	shift 4
	[[ $kbit =~ ^[0-9]+(\.[0-9]+)?$ ]] || { echo "netlab_shape: bad rate '$kbit'" >&2; return 2; }
	netlab_k "$a" "$b" >/dev/null || return 1
	c=${NETLAB_NCLASS["$a $b"]:-0}
	[ "$dir" = src ] && ht=3
	{
		if [ "$c" -eq 0 ]; then
			echo "link set dev $dev gso_max_segs 1" >"$list.ip"
			# default 0: unclassified traffic leaves at once, unshaped.
			echo "qdisc replace dev $dev root handle 1: htb default 0"
			echo "filter add dev $dev parent 1: prio 1 handle 2: protocol ip u32 divisor 256"
			echo "filter add dev $dev parent 1: prio 1 handle 3: protocol ip u32 divisor 256"
			echo "filter add dev $dev parent 1: prio 1 protocol ip u32 ht 800:: match ip dst 0.0.0.0/0 hashkey mask 0x000000ff at 16 link 2:"
			echo "filter add dev $dev parent 1: prio 1 protocol ip u32 ht 800:: match ip src 0.0.0.0/0 hashkey mask 0x000000ff at 12 link 3:"
		fi
		for addr in "$@"; do
			c=$((c + 1))
			[ "$c" -le 65000 ] || { echo "netlab_shape: too many classes" >&2; return 1; }
			printf 'class add dev %s parent 1: classid 1:%x htb rate %skbit ceil %skbit quantum 1514\n' \
				"$dev" $((c + 15)) "$kbit" "$kbit"
			printf 'filter add dev %s parent 1: prio 1 protocol ip u32 ht %d:%x: match ip %s %s/32 flowid 1:%x\n' \
				"$dev" "$ht" $((${addr##*.})) "$dir" "$addr" $((c + 15))
		done
	} >"$list" || return 1
	if [ -e "$list.ip" ]; then
		ip -n "$ns" -batch "$list.ip" || return 1
		rm -f "$list.ip"
	fi
	tc -n "$ns" -batch "$list" || return 1
	NETLAB_NCLASS["$a $b"]=$c
	rm -f "$list"
}

netlab_shape() { netlab_shape_dir dst "$@"; }
netlab_shape_src() { netlab_shape_dir src "$@"; }

# netlab_tbf A B KBIT: see the header.  Its bucket holds 20 ms of the rate
# (at least two full frames), its queue 500 ms.
netlab_tbf() {
	local burst=$(($3 * 125 / 50))
	[ "$burst" -ge 3028 ] || burst=3028
	netlab_k "$1" "$2" >/dev/null || return 1
	NETLAB_NCLASS["$1 $2"]=0
	ip -n "evf$NETLAB_TAG-$1" link set dev "v-$2" gso_max_segs 1 || return 1
	tc -n "evf$NETLAB_TAG-$1" qdisc replace dev "v-$2" root tbf rate "$3kbit" \
		burst "$burst" latency 500ms
}

netlab_unshape() {
	NETLAB_NCLASS["$1 $2"]=0
	tc -n "evf$NETLAB_TAG-$1" qdisc del dev "v-$2" root 2>/dev/null
	return 0
}

netlab_link_down() { ip -n "evf$NETLAB_TAG-$1" link set "v-$2" down; }
netlab_link_up() {
	local ns=evf$NETLAB_TAG-$1 k
	k=$(netlab_k "$1" "$2") || return 1
	ip -n "$ns" link set "v-$2" up || return 1
	# Down, the interface lost its routes (up, the kernel gives its /24
	# back, without the congestion control).
	netlab_routes "$k"
}

# netlab_cleanup: see the header.
netlab_cleanup() {
	local ns pids l
	[ -n "$NETLAB_TAG" ] || return 0
	for ns in $(ip netns list 2>/dev/null | awk -v p="evf$NETLAB_TAG-" 'index($1, p) == 1 { print $1 }'); do
		pids=$(ip netns pids "$ns" 2>/dev/null)
		if [ -n "$pids" ]; then
			kill $pids 2>/dev/null
			for _ in 1 2 3 4 5 6 7 8 9 10; do
				pids=$(ip netns pids "$ns" 2>/dev/null)
				[ -z "$pids" ] && break
				sleep 0.1
			done
			[ -n "$pids" ] && kill -9 $pids 2>/dev/null
		fi
		ip netns del "$ns" 2>/dev/null
	done
	for l in $(ip -o link show 2>/dev/null | awk -F': ' -v p="evf$NETLAB_TAG" 'index($2, p) == 1 { sub(/@.*/, "", $2); print $2 }'); do
		ip link del "$l" 2>/dev/null
	done
	rm -f "$NETLAB_TMP".*
	return 0
}

# netlab_leftovers [TAG]: see the header.
netlab_leftovers() {
	local tag=${1:-$NETLAB_TAG}
	ip netns list 2>/dev/null | awk -v p="evf$tag-" 'index($1, p) == 1 { print "namespace " $1 }'
	ip -o link show 2>/dev/null | awk -F': ' -v p="evf$tag" 'index($2, p) == 1 { print "link " $2 }'
}

# netlab_save FILE: writes the lab's state (its tag, links, addresses and
# classes) to FILE, for netlab_load in another script, e.g. one run inside
# the lab by netlab_exec.
netlab_save() {
	declare -p NETLAB_TAG NETLAB_LINKS NETLAB_CC NETLAB_LINKNO NETLAB_FIRST NETLAB_SECOND \
	    NETLAB_NADDR NETLAB_NCLASS |
		sed -E 's/^declare -(-|[a-zA-Z]+) /declare -g\1 /; s/^declare -g- /declare -g /' >"$1"
}

# netlab_load FILE: takes on the lab that netlab_save wrote to FILE (its
# cleanup stays with the script that made it).
netlab_load() { source "$1"; }

NETLAB_TMP=${TMPDIR:-/tmp}/netlab.$$	# a prefix: batch files of ip and tc
