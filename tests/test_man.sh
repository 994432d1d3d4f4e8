#!/bin/bash
# The manual pages (man/, mdoc): each lint-clean under mandoc at the
# warning level, every long flag a program's --help prints present in its
# page, and every function of src/engine/evfcgi.h in evfcgi(3), so the pages
# cannot drift from the programs and the header.
source "$(dirname "$0")/lib.sh"

command -v mandoc >/dev/null || { not_ok "mandoc is installed (package mandoc)"; finish; }

pages="man/evfcgid.8 man/evfcgi.3 man/http_get.1 man/http_load.1 man/fcgi_load.1
	man/http_many.1"
for p in $pages; do
	if [ ! -f "$TOP/$p" ]; then
		not_ok "$p exists"
		continue
	fi
	out=$(cd "$TOP" && mandoc -T lint -W warning "$p" 2>&1)
	rc=$?
	if [ "$rc" -eq 0 ] && [ -z "$out" ]; then
		ok "$p: mandoc -T lint -W warning is clean"
	else
		not_ok "$p: mandoc -T lint -W warning (exit $rc): $out"
	fi
done

# flags_of HELPFILE: the long flags in a --help text, one a line: words
# that start with one or two dashes and a letter, and at least two letters
# long (http_load's classic flags take one dash: -parallel).
flags_of() {
	grep -oE '(^|[][ ,|])--?[A-Za-z][A-Za-z-]+' "$1" |
		sed -E 's/^[][ ,|]//' | grep -vE '^-[A-Za-z]$' | sort -u
}

# documents PAGE PROGRAM: every long flag of PROGRAM --help is in PAGE as
# rendered (mandoc -T ascii), as a word of its own.
documents() {
	local page=$1 prog=$2 f missing="" n=0
	"$prog" --help >"$T/help" 2>&1
	mandoc -T ascii "$TOP/$page" | sed "s/.\x08//g" >"$T/page"
	for f in $(flags_of "$T/help"); do
		n=$((n + 1))
		grep -qE -- "(^|[^A-Za-z-])$f([^A-Za-z-]|\$)" "$T/page" ||
			missing+=" $f"
	done
	if [ "$n" -lt 3 ]; then
		not_ok "$page: $prog --help printed $n long flags (expected many)"
	elif [ -z "$missing" ]; then
		ok "$page: all $n long flags of $(basename "$prog") --help"
	else
		not_ok "$page: flags of $(basename "$prog") --help missing:$missing"
	fi
}

documents man/evfcgid.8 "$TOP/src/evfcgid"
documents man/http_get.1 "$TOP/tools/http_get"
documents man/http_load.1 "$TOP/tools/http_load"
documents man/fcgi_load.1 "$TOP/tools/fcgi_load"
documents man/http_many.1 "$TOP/tools/http_many"

# Every function the public header declares has its .Nm and its .Fn in
# the SYNOPSIS of evfcgi(3).
fns=$(grep -oE '\bevfcgi_[a-z_]+\(' "$TOP/src/engine/evfcgi.h" | tr -d '(' | sort -u)
missing=""
n=0
for f in $fns; do
	n=$((n + 1))
	grep -qE "^\.Nm $f( ,)?\$" "$TOP/man/evfcgi.3" &&
		grep -qE "^\.Fn $f " "$TOP/man/evfcgi.3" || missing+=" $f"
done
if [ "$n" -lt 10 ]; then
	not_ok "evfcgi.3: found only $n functions in src/engine/evfcgi.h"
elif [ -z "$missing" ]; then
	ok "evfcgi.3: all $n functions of src/engine/evfcgi.h (.Nm and .Fn)"
else
	not_ok "evfcgi.3: functions of src/engine/evfcgi.h not documented:$missing"
fi

# The pages name their program and section as installed.
for p in $pages; do
	b=$(basename "$p")
	name=${b%.*} sec=${b##*.}
	up=$(echo "$name" | tr '[:lower:]' '[:upper:]')
	check "$p: .Dt $up $sec" grep -qx "\.Dt $up $sec" "$TOP/$p"
done
finish
