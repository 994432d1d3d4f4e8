#!/bin/bash
# make builds and installs no package: in a copy of the tree where
# dpkg-query reports libevent-dev (a build package) and lighttpd (a test
# package) missing, plain make stops before configure with the apt-get
# line to run and never calls apt-get; make deps, make check and make demo
# call apt-get install for both.  dpkg-query, apt-get and sudo are
# stand-ins on PATH that log their arguments; nothing is installed.
source "$(dirname "$0")/lib.sh"

command -v git >/dev/null && git -C "$TOP" rev-parse 2>/dev/null ||
	{ echo "# not a git tree: skipped"; finish; }
mkdir -p "$T/tree" "$T/bin"
git -C "$TOP" ls-files -z | (cd "$TOP" && xargs -0 tar -cf - --) |
	tar -xf - -C "$T/tree"
cat >"$T/bin/dpkg-query" <<'EOF'
#!/bin/sh
for a; do p=$a; done
case $p in
libevent-dev|lighttpd) exit 1 ;;
*) printf 'install ok installed' ;;
esac
EOF
printf '#!/bin/sh\necho "apt-get $*" >>"%s"\n[ "$1" = update ] || exit 1\n' \
	"$T/apt.log" >"$T/bin/apt-get"
printf '#!/bin/sh\nexec "$@"\n' >"$T/bin/sudo"
chmod +x "$T/bin/"*

# run NAME TARGET...: make TARGET... in the copy, stdout and stderr in
# $T/NAME.out, apt-get's calls in $T/apt.log (emptied first).
run() {
	local name=$1
	shift
	: >"$T/apt.log"
	# Not the make check this may run under: its flags and job server.
	(cd "$T/tree" && rm -f .deps-done && PATH=$T/bin:$PATH \
		env -u MAKEFLAGS -u MFLAGS -u MAKELEVEL \
		timeout 120 make "$@") >"$T/$name.out" 2>&1
	RC=$?
}

run make
sudo=""
[ "$(id -u)" -eq 0 ] || sudo="sudo "
check "make with libevent-dev missing: stops (exit $RC)" test "$RC" -ne 0
check "make: says the apt-get line to run, the build's package only" \
	grep -qx "    ${sudo}apt-get install libevent-dev" "$T/make.out"
check "make: and names make deps" grep -q "make deps" "$T/make.out"
check "make: never calls apt-get ($(wc -l <"$T/apt.log") calls)" test ! -s "$T/apt.log"
check "make: stops before configure (no config.mk)" test ! -e "$T/tree/config.mk"
for target in deps check demo; do
	run "$target" "$target"
	check "make $target: calls apt-get install for libevent-dev and lighttpd" \
		grep -qE '^apt-get install .*libevent-dev.* lighttpd( |$)' "$T/apt.log"
done
sed 's/^/# /' "$T/make.out" | head -n 6
finish
