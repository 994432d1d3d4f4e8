#!/bin/bash
# The Debian packages: dpkg-buildpackage -us -uc -b builds evfcgid,
# libevfcgi1, libevfcgi-dev and evfcgid-tools from a copy of the tree (the
# worktree stays clean), each holds what it should, the systemd units are
# wired by dh_installsystemd, the packaged daemon runs, and lintian reports
# no error (its warnings are shown as comments).
source "$(dirname "$0")/lib.sh"

for c in dpkg-buildpackage dh lintian dpkg-deb; do
	command -v "$c" >/dev/null ||
		{ not_ok "$c is installed (dpkg-dev, debhelper, lintian)"; finish; }
done

# The copy: the files git knows and the new ones it does not ignore, so
# no build output of the worktree comes along.
mkdir -p "$T/b/src"
if git -C "$TOP" rev-parse --git-dir >/dev/null 2>&1; then
	before=$(git -C "$TOP" status --porcelain)
	(cd "$TOP" && git ls-files -z --cached --others --exclude-standard |
		tar --null -T - -cf -) | tar -C "$T/b/src" -xf -
else
	before=""
	cp -a "$TOP/." "$T/b/src"
	make -C "$T/b/src" -s distclean >/dev/null 2>&1
fi

# The build's limit is one a slow machine meets with the rest of make
# check beside it (it took 21 s alone here, 171 s beside 7 other tests on
# 2 cores elsewhere): 20 minutes, or DEB_TEST_LIMIT (as timeout(1) takes
# it: 600, 30m).  It only stops a build that hangs.
limit=${DEB_TEST_LIMIT:-20m}
start=$(now_ns)
(cd "$T/b/src" && DEB_BUILD_OPTIONS="nocheck parallel=2" \
	timeout "$limit" dpkg-buildpackage -us -uc -b) >"$T/build.log" 2>&1
rc=$?
secs=$(( $(ms_since "$start") / 1000 ))
echo "# dpkg-buildpackage took $secs s (limit $limit)"
if [ "$rc" -eq 0 ]; then
	ok "dpkg-buildpackage -us -uc -b builds ($secs s)"
else
	[ "$rc" -eq 124 ] && echo "# killed by the limit, $limit (DEB_TEST_LIMIT)"
	not_ok "dpkg-buildpackage -us -uc -b (exit $rc after $secs s): $(tail -n 15 "$T/build.log")"
	finish
fi

v=$(dpkg-parsechangelog -l "$T/b/src/debian/changelog" -S Version)
arch=$(dpkg --print-architecture)
ma=$(dpkg-architecture -qDEB_HOST_MULTIARCH)
for p in evfcgid libevfcgi1 libevfcgi-dev evfcgid-tools; do
	deb=$T/b/${p}_${v}_$arch.deb
	if [ -f "$deb" ]; then
		ok "$p ${v} built"
	else
		not_ok "$p ${v} built"
	fi
done

# has PACKAGE PATH...: the package holds each PATH (dpkg-deb -c).
has() {
	local p=$1 f missing=""
	shift
	dpkg-deb -c "$T/b/${p}_${v}_$arch.deb" 2>/dev/null |
		awk '{ print $6 }' | sed 's|^\./|/|' >"$T/c.$p"
	for f in "$@"; do
		grep -qx -- "$f" "$T/c.$p" || missing+=" $f"
	done
	check "$p holds $*${missing:+ (missing:$missing)}" test -z "$missing"
}
# lacks PACKAGE REGEX: no path of the package matches.
lacks() {
	check "$1 holds nothing matching $2" eval "! grep -qE '$2' '$T/c.$1'"
}

has evfcgid /usr/sbin/evfcgid /usr/share/man/man8/evfcgid.8.gz \
	/lib/systemd/system/evfcgid.service /lib/systemd/system/evfcgid.socket \
	/etc/default/evfcgid
lacks evfcgid '^/usr/(bin|include)/|libevfcgi'
has libevfcgi1 "/usr/lib/$ma/libevfcgi.so.1.0.0" "/usr/lib/$ma/libevfcgi.so.1"
lacks libevfcgi1 '\.a$|\.h$|/libevfcgi\.so$|\.pc$'
has libevfcgi-dev /usr/include/evfcgi.h "/usr/lib/$ma/libevfcgi.a" \
	"/usr/lib/$ma/libevfcgi.so" "/usr/lib/$ma/pkgconfig/evfcgi.pc" \
	/usr/share/man/man3/evfcgi.3.gz /usr/share/man/man3/evfcgi_run.3.gz
has evfcgid-tools /usr/bin/http_get /usr/bin/http_load /usr/bin/fcgi_load \
	/usr/bin/http_many /usr/share/man/man1/http_get.1.gz \
	/usr/share/man/man1/http_load.1.gz /usr/share/man/man1/fcgi_load.1.gz \
	/usr/share/man/man1/http_many.1.gz

# Control fields and maintainer scripts.
dep=$(dpkg-deb -f "$T/b/libevfcgi-dev_${v}_$arch.deb" Depends)
check "libevfcgi-dev depends on libevfcgi1 (= $v) and libevent-dev ($dep)" \
	eval '[[ $dep == *"libevfcgi1 (= $v)"* && $dep == *libevent-dev* ]]'
mkdir -p "$T/ctl"
dpkg-deb -e "$T/b/libevfcgi1_${v}_$arch.deb" "$T/ctl/lib"
check "libevfcgi1 has shlibs for libevfcgi.so.1 (dh_makeshlibs)" \
	grep -q '^libevfcgi 1 libevfcgi1' "$T/ctl/lib/shlibs"
dpkg-deb -e "$T/b/evfcgid_${v}_$arch.deb" "$T/ctl/evfcgid"
check "evfcgid postinst enables and starts evfcgid.socket (dh_installsystemd)" eval '
	grep -q "deb-systemd-helper enable .evfcgid.socket" "$T/ctl/evfcgid/postinst" &&
	grep -q "deb-systemd-invoke .* .evfcgid.socket" "$T/ctl/evfcgid/postinst"'
check "evfcgid postinst does not start evfcgid.service (the socket does)" \
	eval '! grep -q "deb-systemd-invoke .*evfcgid.service" "$T/ctl/evfcgid/postinst"'
check "evfcgid: /etc/default/evfcgid is a conffile" \
	grep -qx /etc/default/evfcgid "$T/ctl/evfcgid/conffiles"

# The packaged programs run, hardened as dpkg-buildflags asks.
mkdir -p "$T/x"
for p in evfcgid libevfcgi1 evfcgid-tools; do
	dpkg-deb -x "$T/b/${p}_${v}_$arch.deb" "$T/x"
done
check "packaged evfcgid --version says $v" eval \
	'"$T/x/usr/sbin/evfcgid" --version | grep -q "^evfcgid $v "'
check "packaged fcgi_load --help" eval \
	'"$T/x/usr/bin/fcgi_load" --help | grep -q "^usage:"'
check "packaged http_many --help" eval \
	'"$T/x/usr/bin/http_many" --help | grep -q "^usage: http_many"'
check "packaged evfcgid is PIE with BIND_NOW (hardening=+all)" eval '
	readelf -h "$T/x/usr/sbin/evfcgid" | grep -q "DYN" &&
	readelf -d "$T/x/usr/sbin/evfcgid" | grep -q "BIND_NOW\|FLAGS_1.*NOW"'
check "packaged libevfcgi.so.1.0.0: soname libevfcgi.so.1" eval \
	'readelf -d "$T/x/usr/lib/$ma/libevfcgi.so.1.0.0" | grep -q "SONAME.*\[libevfcgi.so.1\]"'

# lintian on the whole upload: no E: line.
lintian --pedantic -I "$T/b/evfcgid_${v}_$arch.changes" >"$T/lintian" 2>&1
grep -E '^[WIPX]:' "$T/lintian" | sed 's/^/# /'
errs=$(grep -c '^E:' "$T/lintian")
if [ "$errs" -eq 0 ]; then
	ok "lintian: no errors ($(grep -c '^W:' "$T/lintian") warnings)"
else
	not_ok "lintian: $errs errors: $(grep '^E:' "$T/lintian" | head -n 10)"
fi

if [ -n "$before" ] || git -C "$TOP" rev-parse --git-dir >/dev/null 2>&1; then
	after=$(git -C "$TOP" status --porcelain)
	check "the worktree is as it was (the build ran in a copy)" \
		test "$before" = "$after"
fi
finish
