#!/bin/bash
# make install and make uninstall: a staged install (DESTDIR, PREFIX=/usr)
# has every file in its place; a handler program built against the staged
# tree with pkg-config, shared and static, answers a FastCGI request from
# libfcgi's cgi-fcgi; the shared library has its soname and exports only
# evfcgi_*; the public header stands alone; the installed daemon serves;
# the systemd units pass systemd-analyze; uninstall leaves nothing;
# the default PREFIX is /usr/local; and docs/library.md's install block
# under $HOME runs as written.
source "$(dirname "$0")/lib.sh"

command -v cgi-fcgi >/dev/null || { not_ok "cgi-fcgi is installed (libfcgi-bin)"; finish; }
command -v pkg-config >/dev/null || { not_ok "pkg-config is installed"; finish; }

S=$T/stage
if make -C "$TOP" -s install DESTDIR="$S" PREFIX=/usr >"$T/install.log" 2>&1; then
	ok "make install DESTDIR=... PREFIX=/usr"
else
	not_ok "make install DESTDIR=... PREFIX=/usr: $(tail -n 5 "$T/install.log")"
	finish
fi

# --- Every file in its place.
missing=""
for f in usr/sbin/evfcgid usr/bin/http_get usr/bin/http_load \
    usr/bin/fcgi_load usr/bin/http_many usr/lib/libevfcgi.a usr/lib/libevfcgi.so.1.0.0 \
    usr/include/evfcgi.h usr/lib/pkgconfig/evfcgi.pc \
    usr/share/man/man8/evfcgid.8 usr/share/man/man3/evfcgi.3 \
    usr/share/man/man3/evfcgi_run.3 usr/share/man/man1/http_get.1 \
    usr/share/man/man1/http_load.1 usr/share/man/man1/fcgi_load.1 \
    usr/share/man/man1/http_many.1 \
    usr/lib/systemd/system/evfcgid.service \
    usr/lib/systemd/system/evfcgid.socket; do
	[ -e "$S/$f" ] || missing+=" $f"
done
check "staged tree has the daemon, tools, libraries, header, .pc, man pages, units${missing:+ (missing:$missing)}" \
	test -z "$missing"
check "libevfcgi.so.1 -> libevfcgi.so.1.0.0" \
	test "$(readlink "$S/usr/lib/libevfcgi.so.1")" = libevfcgi.so.1.0.0
check "libevfcgi.so -> libevfcgi.so.1" \
	test "$(readlink "$S/usr/lib/libevfcgi.so")" = libevfcgi.so.1
check "executables are mode 755, the rest 644" eval '
	[ "$(stat -c %a "$S/usr/sbin/evfcgid")" = 755 ] &&
	[ "$(stat -c %a "$S/usr/bin/fcgi_load")" = 755 ] &&
	[ "$(stat -c %a "$S/usr/bin/http_many")" = 755 ] &&
	[ "$(stat -c %a "$S/usr/share/man/man1/http_many.1")" = 644 ] &&
	[ "$(stat -c %a "$S/usr/include/evfcgi.h")" = 644 ] &&
	[ "$(stat -c %a "$S/usr/lib/libevfcgi.a")" = 644 ]'
check "the unit runs the installed daemon (ExecStart=/usr/sbin/evfcgid)" \
	grep -q '^ExecStart=/usr/sbin/evfcgid ' "$S/usr/lib/systemd/system/evfcgid.service"

# --- The shared library: soname, exports.
so=$S/usr/lib/libevfcgi.so.1.0.0
soname=$(readelf -d "$so" | sed -n 's/.*(SONAME).*\[\(.*\)\]/\1/p')
check "readelf -d: soname libevfcgi.so.1 ($soname)" test "$soname" = libevfcgi.so.1
check "readelf -d: it needs libevent" eval 'readelf -d "$so" | grep -q "NEEDED.*libevent"'
nm -D --defined-only "$so" | awk '$2 ~ /^[TDBRVW]$/ { print $3 }' |
	sed 's/@.*//' | grep -vx 'EVFCGI_1' | sort -u >"$T/exports"
others=$(grep -v '^evfcgi_' "$T/exports" | tr '\n' ' ')
check "exports only evfcgi_* ($(wc -l <"$T/exports") symbols${others:+; also: $others})" \
	test -z "$others"
grep -oE '\bevfcgi_[a-z_]+\(' "$TOP/src/engine/evfcgi.h" | tr -d '(' | sort -u >"$T/api"
unexported=$(comm -23 "$T/api" "$T/exports" | tr '\n' ' ')
check "exports every function of evfcgi.h${unexported:+ (missing: $unexported)}" \
	test -z "$unexported"

# --- The header stands alone: nothing before it, strict flags.
printf '#include <evfcgi.h>\nint x;\n' >"$T/alone.c"
check "evfcgi.h compiles alone (-std=c99 -pedantic -Wall -Wextra -Werror)" \
	cc -std=c99 -pedantic -Wall -Wextra -Werror -I"$S/usr/include" \
	-c -o "$T/alone.o" "$T/alone.c"

# --- pkg-config against the staged tree.
export PKG_CONFIG_PATH=$S/usr/lib/pkgconfig PKG_CONFIG_SYSROOT_DIR=$S
flags=$(pkg-config --cflags --libs evfcgi 2>&1)
check "pkg-config --cflags --libs evfcgi: the staged dirs and libevent ($flags)" eval '
	[[ " $flags " == *" -I$S/usr/include "* ]] &&
	[[ " $flags " == *" -L$S/usr/lib "* ]] &&
	[[ " $flags " == *" -levfcgi "* ]] && [[ " $flags " == *" -levent "* ]]'
check "pkg-config --modversion evfcgi is the package's version" \
	test "$(pkg-config --modversion evfcgi)" = "$(sed -n 's/^VERSION = //p' "$TOP/config.mk")"

# A handler program as a user would write it: two routes, the body read,
# a drain on SIGTERM.
cat >"$T/hello.c" <<'C'
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <event2/buffer.h>
#include <event2/event.h>

#include <evfcgi.h>

static void
hi(struct evfcgi_req *req, void *arg)
{
	char		 out[512];
	const char	*m = evfcgi_param(req, "REQUEST_METHOD");
	int		 n;

	n = snprintf(out, sizeof(out), "%s says hi: %s %s?%s body=%zu\n",
	    (const char *)arg, m != NULL ? m : "-", evfcgi_path(req),
	    evfcgi_query(req), evbuffer_get_length(evfcgi_body(req)));
	evfcgi_respond(req, 200, "text/plain", out, (size_t)n);
}

static void
teapot(struct evfcgi_req *req, void *arg)
{
	(void)arg;
	evfcgi_respond_error(req, 418, "short and stout");
}

int
main(int argc, char **argv)
{
	struct evfcgi_limits	 lim;
	struct evfcgi_server	*srv;
	struct event_base	*base;
	char			 err[256];

	if (argc != 2)
		return 2;
	signal(SIGPIPE, SIG_IGN);
	evfcgi_limits_default(&lim);
	if ((base = event_base_new()) == NULL ||
	    (srv = evfcgi_server_new(base, &lim)) == NULL ||
	    evfcgi_route(srv, "/hi", hi, "libevfcgi") == -1 ||
	    evfcgi_route(srv, "/teapot", teapot, NULL) == -1 ||
	    evfcgi_handle_signals(srv) == -1)
		return 1;
	if (evfcgi_listen(srv, argv[1], 0660, err, sizeof(err)) == -1) {
		fprintf(stderr, "hello: %s\n", err);
		return 1;
	}
	if (evfcgi_run(srv) == -1)
		return 1;
	evfcgi_server_free(srv);
	event_base_free(base);
	return 0;
}
C

# serve_and_ask NAME BINARY [ENV...]: runs BINARY on a free port, asks it
# through cgi-fcgi (a GET with a query, a POST with a body, an unrouted
# path, an error route), then stops it with SIGTERM: it must exit 0.
serve_and_ask() {
	local name=$1 bin=$2 port pid rc
	shift 2
	port=$(freeport)
	spawn env "$@" "$bin" "127.0.0.1:$port" 2>>"$T/hello.log"
	pid=$SPAWNED
	if ! wait_port "$port"; then
		not_ok "$name: listens"
		return
	fi
	REQUEST_METHOD=GET SCRIPT_NAME=/hi REQUEST_URI='/hi?x=1' QUERY_STRING=x=1 \
		cgi-fcgi -bind -connect "127.0.0.1:$port" </dev/null >"$T/get" 2>&1
	check "$name: GET /hi?x=1 through cgi-fcgi: 200 and the handler's line" eval '
		grep -q "^Status: 200" "$T/get" &&
		grep -q "^libevfcgi says hi: GET /hi?x=1 body=0\$" "$T/get"'
	printf 'hello body' >"$T/body"
	REQUEST_METHOD=POST SCRIPT_NAME=/hi CONTENT_LENGTH=10 \
		cgi-fcgi -bind -connect "127.0.0.1:$port" <"$T/body" >"$T/post" 2>&1
	check "$name: POST /hi with 10 body bytes: body=10" \
		grep -q "^libevfcgi says hi: POST /hi? body=10" "$T/post"
	REQUEST_METHOD=GET SCRIPT_NAME=/nope \
		cgi-fcgi -bind -connect "127.0.0.1:$port" </dev/null >"$T/404" 2>&1
	check "$name: an unrouted path: 404" grep -q '^Status: 404' "$T/404"
	REQUEST_METHOD=GET SCRIPT_NAME=/teapot \
		cgi-fcgi -bind -connect "127.0.0.1:$port" </dev/null >"$T/418" 2>&1
	check "$name: evfcgi_respond_error: 418" grep -q '^Status: 418' "$T/418"
	kill -TERM "$pid"
	wait "$pid"
	rc=$?
	check "$name: SIGTERM drains and exits 0 (exit $rc)" test "$rc" -eq 0
}

# Shared: pkg-config's flags as they are; runs with the staged library.
if cc -Wall -Wextra -Werror -o "$T/hello_shared" "$T/hello.c" \
    $(pkg-config --cflags --libs evfcgi) 2>"$T/cc.err"; then
	ok "a handler program builds with pkg-config --cflags --libs evfcgi (shared)"
	check "hello_shared needs libevfcgi.so.1" eval \
		'readelf -d "$T/hello_shared" | grep -q "NEEDED.*\[libevfcgi.so.1\]"'
	check "hello_shared loads libevfcgi from the staged tree" eval \
		'LD_LIBRARY_PATH=$S/usr/lib ldd "$T/hello_shared" | grep -q "libevfcgi.so.1 => $S/usr/lib/libevfcgi.so.1"'
	serve_and_ask "shared" "$T/hello_shared" LD_LIBRARY_PATH="$S/usr/lib"
else
	not_ok "a handler program builds with pkg-config (shared): $(head -n 5 "$T/cc.err")"
fi
# docs/operations.md's staged build: an rpath to the stage, no LD_LIBRARY_PATH.
if cc -Wall -o "$T/hello_rpath" "$T/hello.c" $(pkg-config --cflags --libs evfcgi) \
    -Wl,-rpath,"$S/usr/lib" 2>"$T/cc.err"; then
	check "docs/operations.md's staged build (-Wl,-rpath): loads libevfcgi from the stage" eval \
		'ldd "$T/hello_rpath" | grep -q "libevfcgi.so.1 => $S/usr/lib/libevfcgi.so.1"'
else
	not_ok "docs/operations.md's staged build (-Wl,-rpath): $(head -n 5 "$T/cc.err")"
fi

# Static: libevfcgi.a by name (-l:), libevent as pkg-config --static says.
static_libs=$(pkg-config --static --libs evfcgi | sed 's/-levfcgi\b/-l:libevfcgi.a/')
if cc -Wall -Wextra -Werror -o "$T/hello_static" "$T/hello.c" \
    $(pkg-config --cflags evfcgi) $static_libs 2>"$T/cc.err"; then
	ok "a handler program builds against libevfcgi.a (pkg-config --static)"
	check "hello_static needs no libevfcgi.so" eval \
		'! readelf -d "$T/hello_static" | grep -q "NEEDED.*libevfcgi"'
	serve_and_ask "static" "$T/hello_static"
else
	not_ok "a handler program builds against libevfcgi.a: $(head -n 5 "$T/cc.err")"
fi
unset PKG_CONFIG_PATH PKG_CONFIG_SYSROOT_DIR
others=$(nm -g --defined-only "$S/usr/lib/libevfcgi.a" | awk 'NF >= 3 && $3 !~ /^evfcgi_/ { print $3 }')
check "the installed libevfcgi.a defines no global but evfcgi_* (others: $(echo $others | head -c 120))" \
	test -z "$others"

# --- The installed daemon and tools run.
port=$(freeport)
spawn "$S/usr/sbin/evfcgid" --listen "127.0.0.1:$port" 2>"$T/evfcgid.log"
if wait_port "$port"; then
	REQUEST_METHOD=GET SCRIPT_NAME=/hello \
		cgi-fcgi -bind -connect "127.0.0.1:$port" </dev/null >"$T/hello" 2>&1
	check "installed evfcgid: /hello answers Hello World" grep -q '^Hello World' "$T/hello"
	capture "$S/usr/bin/fcgi_load" -n 20 -c 2 -k "127.0.0.1:$port" /hello
	check "installed fcgi_load: 20 requests, no errors" eval \
		'[ "$RC" -eq 0 ] && grep -q "^requests: 20" <<<"$OUT"'
else
	not_ok "installed evfcgid: listens"
fi
for t in http_get http_load http_many; do
	check "installed $t --help" eval '"$S/usr/bin/$t" --help 2>&1 | grep -q "^usage:"'
done
capture "$S/usr/bin/http_many" -Q -c 3 http://127.0.0.1:1/
check "installed http_many: 3 clients to a closed port, 3 refused connects counted, exit 1" \
	eval '[ "$RC" -eq 1 ] && grep -qx "error connect ECONNREFUSED: 3" <<<"$OUT"'

# --- The systemd units: systemd-analyze verify must say nothing.  It
# checks that ExecStart exists, so a copy points at the staged daemon.
if command -v systemd-analyze >/dev/null; then
	mkdir -p "$T/units"
	for u in evfcgid.service evfcgid.socket; do
		sed "s|/usr/sbin/evfcgid|$S/usr/sbin/evfcgid|" \
			"$S/usr/lib/systemd/system/$u" >"$T/units/$u"
	done
	out=$(systemd-analyze verify --man=no "$T/units/evfcgid.socket" \
	    "$T/units/evfcgid.service" 2>&1)
	rc=$?
	if [ "$rc" -eq 0 ] && [ -z "$out" ]; then
		ok "systemd-analyze verify: the socket and service units are clean"
	else
		not_ok "systemd-analyze verify (exit $rc): $out"
	fi
	exposure=$(systemd-analyze security --offline=yes --no-pager \
	    "$T/units/evfcgid.service" 2>/dev/null |
	    sed -n 's/.*Overall exposure level for evfcgid.service: \([0-9.]*\).*/\1/p')
	check "systemd-analyze security: exposure ${exposure:-?} at most 2.0 (hardened)" \
		awk -v e="${exposure:-99}" 'BEGIN { exit !(e <= 2.0) }'
	svc=$S/usr/lib/systemd/system/evfcgid.service
	for d in DynamicUser=yes ProtectSystem=strict NoNewPrivileges=yes \
	    'CapabilityBoundingSet=$' 'SystemCallFilter=@system-service' \
	    'KillSignal=SIGTERM' 'ExecReload=/bin/kill -HUP \$MAINPID'; do
		check "evfcgid.service: $(sed 's/\\\$/$/; s/\$$//' <<<"$d")" \
			grep -q "^$d" "$svc"
	done
	stop=$(sed -n 's/^TimeoutStopSec=\([0-9]*\)$/\1/p' "$svc")
	drain=$("$S/usr/sbin/evfcgid" --help | sed -n 's/.*--drain-timeout S.*(\([0-9]*\)).*/\1/p')
	check "TimeoutStopSec ($stop) is above the default drain timeout ($drain)" \
		test "${stop:-0}" -gt "${drain:-999}"
else
	echo "# skipped: systemd-analyze is not installed"
fi

# --- Uninstall leaves no file behind.
make -C "$TOP" -s uninstall DESTDIR="$S" PREFIX=/usr >"$T/uninstall.log" 2>&1
left=$(find "$S" ! -type d | sed "s|^$S||" | tr '\n' ' ')
check "make uninstall removes every installed file${left:+ (left: $left)}" test -z "$left"

# --- PREFIX defaults to /usr/local.
S2=$T/stage2
make -C "$TOP" -s install DESTDIR="$S2" >"$T/install2.log" 2>&1
check "default PREFIX: /usr/local/sbin/evfcgid, /usr/local/lib/libevfcgi.so.1" \
	test -x "$S2/usr/local/sbin/evfcgid" -a -e "$S2/usr/local/lib/libevfcgi.so.1"
check "default PREFIX: evfcgi.pc says prefix=/usr/local" \
	grep -qx 'prefix=/usr/local' "$S2/usr/local/lib/pkgconfig/evfcgi.pc"
check "default PREFIX: the unit runs /usr/local/sbin/evfcgid" \
	grep -q '^ExecStart=/usr/local/sbin/evfcgid ' \
	"$S2/usr/local/lib/systemd/system/evfcgid.service"
make -C "$TOP" -s uninstall DESTDIR="$S2" >/dev/null 2>&1
left=$(find "$S2" ! -type d | sed "s|^$S2||" | tr '\n' ' ')
check "default PREFIX: make uninstall removes it all${left:+ (left: $left)}" test -z "$left"
# --- docs/library.md's install block, run as written (PREFIX under $HOME,
# no DESTDIR): make install says the rpath is needed, and README's first
# handler, built by the block, runs and answers.
H=$T/home
mkdir -p "$H/app"
sed -n '/<!-- install:begin -->/,/<!-- install:end -->/p' "$TOP/docs/library.md" |
	sed '1,2d;$d' | sed '$d' | grep -v '^\./hi ' >"$T/install-block.sh"
check "docs/library.md's install block extracted ($(wc -l <"$T/install-block.sh") lines)" \
	grep -q -- '-Wl,-rpath,$(pkg-config --variable=libdir evfcgi)' "$T/install-block.sh"
sed -n '/<!-- example:begin -->/,/<!-- example:end -->/p' "$TOP/README.md" |
	sed '1,2d;$d' | sed '$d' >"$H/app/hi.c"
(
	cd "$H/app" && export HOME=$H && unset PKG_CONFIG_PATH PKG_CONFIG_SYSROOT_DIR
	make() { command make -C "$TOP" -s "$@"; }
	set -e
	source "$T/install-block.sh"
) >"$T/block.log" 2>&1
rc=$?
check "the install block runs (exit $rc)" test "$rc" -eq 0
check "make install PREFIX=\$HOME/...: it says an rpath is needed" \
	grep -q 'not a directory the dynamic loader searches' "$T/block.log"
if [ -x "$H/app/hi" ]; then
	port=$(freeport)
	spawn "$H/app/hi" "127.0.0.1:$port" 2>"$T/hi-installed.log"
	if wait_port "$port"; then
		REQUEST_METHOD=GET SCRIPT_NAME=/hi \
			cgi-fcgi -bind -connect "127.0.0.1:$port" </dev/null >"$T/hi-out" 2>&1
		check "the block's program finds libevfcgi.so.1 by its rpath and answers /hi" \
			grep -q '^hi$' "$T/hi-out"
	else
		not_ok "the block's program runs: $(head -n 3 "$T/hi-installed.log")"
	fi
	kill "$SPAWNED" 2>/dev/null
else
	not_ok "the block built ./hi: $(tail -n 5 "$T/block.log")"
fi
make -C "$TOP" -s uninstall PREFIX="$H/opt/evfcgi" >/dev/null 2>&1
finish
