#!/bin/bash
# examples/dropbox in a real browser: Debian's chromium, headless, driven
# by puppeteer-core (tests/node, from the npm registry) through nginx
# (a copy of nginx.conf.example): it logs in through the form, uploads two
# files through the upload form, sees them listed and downloads one.
# Skipped, saying why, where chromium or puppeteer-core is not installed
# (make deps installs both) or no browser can start.
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/http.sh"
source "$(dirname "$0")/frontends.sh"

if ! command -v chromium >/dev/null && ! command -v chromium-browser >/dev/null; then
	echo "# skipped: chromium is not installed (apt-get install chromium; make deps does)"
	ok "browser test skipped: no chromium"
	finish
fi
if [ ! -d "$TOP/tests/node/node_modules/puppeteer-core" ]; then
	echo "# skipped: puppeteer-core is not in tests/node (make deps installs it)"
	ok "browser test skipped: no puppeteer-core"
	finish
fi
[ -x "$TOP/examples/dropbox" ] || { not_ok "examples/dropbox is built (make)"; finish; }
DIR=$T/drop
mkdir -p "$DIR"
port=$(freeport)
DROPBOX_PASSWORD=sesame spawn "$TOP/examples/dropbox" --listen "127.0.0.1:$port" \
	--dir "$DIR" 2>>"$T/dropbox.log"
wait_port "$port" || { not_ok "dropbox starts: $(tail -n 3 "$T/dropbox.log")"; finish; }
start_fe nginx dropbox "127.0.0.1:$port" || finish
head -c 300000 /dev/urandom >"$T/photo one.bin"
printf 'notes <&>\n' >"$T/notes.txt"
(cd "$TOP/tests/node" && HOME=$T timeout 120 node browser.js "$URL" "$DIR" \
	"$T/photo one.bin" "$T/notes.txt") >"$T/browser.out" 2>&1
rc=$?
cat "$T/browser.out"
FAILS=$((FAILS + $(grep -c '^not ok' "$T/browser.out")))
if [ "$rc" -eq 77 ]; then
	echo "# skipped: the browser could not start here"
	ok "browser test skipped: no browser could start"
	finish
fi
check "the browser session ended well (exit $rc)" test "$rc" -eq 0
check "the uploads are on disk as sent" cmp -s "$T/photo one.bin" "$DIR/photo one.bin"
finish
