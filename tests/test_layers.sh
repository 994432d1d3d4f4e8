#!/bin/bash
# src/ in layers (src/README): scripts/layers passes on the tree's objects
# and fails, naming the files and the names, on planted objects that break
# a rule: two files that call each other, a longer circle, a lower folder
# that calls a higher one, two folders of one rank that call each other;
# a module's two files (conn.c and its part conn_input.c) are one node.
# And the library is made of the engine alone.
source "$(dirname "$0")/lib.sh"

LAYERS=$TOP/scripts/layers

# plant DIR FOLDER/NAME 'C source': compiles one object in DIR/FOLDER.
plant() {
	mkdir -p "$1/${2%/*}"
	printf '%s\n' "$3" >"$1/$2.c"
	cc -std=c11 -c -o "$1/$2.o" "$1/$2.c"
}

# expect_fail NAME PATTERN ARGS...: scripts/layers ARGS exits 1 and says
# PATTERN (an extended regular expression).
expect_fail() {
	local name=$1 pat=$2
	shift 2
	capture sh "$LAYERS" "$@"
	if [ "$RC" -eq 1 ] && grep -qE "$pat" <<<"$OUT"; then
		ok "$name"
	else
		not_ok "$name (exit $RC): $OUT $ERR"
	fi
}

for d in engine cgi demo daemon; do
	if [ -z "$(ls "$TOP/src/$d"/*.o 2>/dev/null)" ]; then
		not_ok "src/$d has objects (make first)"
		finish
	fi
done

capture sh "$LAYERS"
if [ "$RC" -eq 0 ]; then
	ok "scripts/layers: the tree's references point down ($OUT)"
else
	not_ok "scripts/layers on the tree (exit $RC): $OUT $ERR"
fi
capture sh "$LAYERS" "$TOP"/src/asan/*/
check "scripts/layers: the sanitizer objects too" test "$RC" -eq 0

for d in "" engine cgi demo daemon; do
	check "src/${d:+$d/}README says what the folder is" \
		test -s "$TOP/src/${d:+$d/}README"
done

# The request struct is its own files' alone (src/engine/README): no other
# file includes req_struct.h, and request.h no longer defines the struct.
own="query.c reply.c req_data.c req_state.c reqdata.c request.c response.c"
incl=$(cd "$TOP" && grep -l '#include "req_struct.h"' src/*/*.c src/*/*.h \
	tools/*.c fuzz/*.c examples/*.c 2>/dev/null | sed 's,.*/,,' | sort |
	tr '\n' ' ')
check "req_struct.h is included by the request's own files alone ($incl)" \
	test "$incl" = "$own "
check "request.h does not define struct evfcgi_req" \
	sh -c "! grep -q '^struct evfcgi_req {' '$TOP/src/engine/request.h'"

# The library is the engine alone: no object of another folder in the
# archives, no name of the gateway, the demo or the daemon in libevfcgi.
members=$(ar t "$TOP/src/libevfcgi-internal.a" | sort)
engine=$(cd "$TOP/src/engine" && ls *.o | sort)
check "libevfcgi-internal.a holds exactly src/engine's objects" \
	test "$members" = "$engine"
names=$(nm "$TOP/src/libevfcgi.a" "$TOP/src/libevfcgi-internal.a" |
	awk '{ print $NF }' | grep -E '^(cgi|app|privs|options|opt|status|prom)_' |
	sort -u | tr '\n' ' ')
check "libevfcgi has no name of cgi/, demo/ or daemon/${names:+: $names}" \
	test -z "$names"

# Planted: each case in its own directory, as folders named like src/'s.
P=$T/pair
plant "$P" engine/a 'void b(void); void a(void) { b(); }'
plant "$P" engine/b 'void a(void); void b(void) { a(); }'
expect_fail "a pair of files that call each other fails, named" \
	'engine/a\.o and engine/b\.o reference each other' "$P/engine"
expect_fail "the pair's names are given" \
	'engine/a\.o -> engine/b\.o: b$' "$P/engine/a.o" "$P/engine/b.o"

C=$T/circle
plant "$C" cgi/x 'void y(void); void x(void) { y(); }'
plant "$C" cgi/y 'void z(void); void y(void) { z(); }'
plant "$C" cgi/z 'void x(void); void z(void) { x(); }'
expect_fail "a circle of three files fails" \
	'circle: cgi/[xyz]\.o -> cgi/[xyz]\.o -> cgi/[xyz]\.o -> cgi/' "$C/cgi"

U=$T/up
plant "$U" engine/low 'void high(void); void low(void) { high(); }'
plant "$U" daemon/high 'void high(void) { }'
expect_fail "a lower folder calling a higher one fails" \
	'engine/low\.o \(engine\) reaches up to daemon/high\.o \(daemon\): high' \
	"$U/engine" "$U/daemon"

S=$T/side
plant "$S" demo/d 'void g(void); void d(void) { g(); }'
plant "$S" cgi/g 'void g(void) { }'
expect_fail "two folders of one rank calling each other fails" \
	'demo/d\.o \(demo\) reaches up to cgi/g\.o \(cgi\): g' "$S/demo" "$S/cgi"

N=$T/noname
plant "$N" misc/m 'void m(void) { }'
expect_fail "a folder with no rank fails" 'folder misc has no rank' "$N/misc"

# The same shapes, downward, pass: the script is not failing on anything.
D=$T/down
plant "$D" engine/base 'void base(void) { }'
plant "$D" engine/mid 'void base(void); void mid(void) { base(); }'
plant "$D" cgi/gw 'void mid(void); void gw(void) { mid(); }'
plant "$D" daemon/top 'void gw(void); void base(void); void top(void) { gw(); base(); }'
capture sh "$LAYERS" "$D/engine" "$D/cgi" "$D/daemon"
check "references that point down pass ($OUT)" test "$RC" -eq 0

# A module in two files (scripts/layers' PARTS: conn_input is conn's
# part) is one node: the two may call each other, and the rest sees one.
M=$T/module
plant "$M" engine/conn 'void conn_process_read(void); void conn_fail(void) { } void conn_readcb(void) { conn_process_read(); }'
plant "$M" engine/conn_input 'void conn_fail(void); void conn_process_read(void) { conn_fail(); }'
capture sh "$LAYERS" "$M/engine"
check "a module's two files (conn, conn_input) may call each other ($OUT)" \
	eval '[ "$RC" -eq 0 ] && grep -q "1 files" <<<"$OUT"'
plant "$M" engine/low 'void conn_fail(void); void low(void) { conn_fail(); }'
plant "$M" engine/conn_input 'void conn_fail(void); void low(void); void conn_process_read(void) { conn_fail(); low(); }'
expect_fail "the module and another file calling each other still fails" \
	'engine/conn\.o and engine/low\.o reference each other' "$M/engine"

finish
