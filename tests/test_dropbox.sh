#!/bin/bash
# examples/dropbox behind the real nginx (a copy of nginx.conf.example,
# only its upstream changed), asked with curl as a browser would: the
# list and its form, uploads of one and several files (three of 49 MiB
# in one form, the app's memory held to a watermark meanwhile), a file
# past the cap refused 413 with nothing left on disk, downloads with HEAD
# and Range, the JSON listing, login by cookie guarding deletes, and
# names that try to leave the folder.
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/http.sh"
source "$(dirname "$0")/frontends.sh"

for p in curl jq; do
	command -v $p >/dev/null || { not_ok "$p is installed"; finish; }
done
[ -x "$TOP/examples/dropbox" ] || { not_ok "examples/dropbox is built (make)"; finish; }

DIR=$T/drop
mkdir -p "$DIR"
port=$(freeport)
DROPBOX_PASSWORD=sesame spawn "$TOP/examples/dropbox" --listen "127.0.0.1:$port" \
	--dir "$DIR" --max-size $((50 << 20)) 2>>"$T/dropbox.log"
PID=$SPAWNED
wait_port "$port" || { not_ok "dropbox starts: $(tail -n 3 "$T/dropbox.log")"; finish; }
start_fe nginx dropbox "127.0.0.1:$port" || finish

# req CURL_ARGS... PATH: sets CODE; R.h the header, R.b the body.
n=0
req() {
	local path=${!#}
	R=$T/r.$((++n))
	CODE=$(curl -sS -o "$R.b" -D "$R.h" -w '%{http_code}' --max-time 120 \
		"${@:1:$#-1}" "$URL$path" 2>"$R.err")
	[ -e "$R.b" ] || : >"$R.b"
}
hval() { header_value "$R.h" "$1"; }
rss_kb() { awk '/^VmRSS/ { print $2 }' "/proc/$PID/status"; }

req /
check "GET / lists with an upload form" \
	test "$CODE" = 200 -a "$(grep -c 'enctype=multipart/form-data' "$R.b")" = 1

head -c 1000 /dev/urandom >"$T/a.bin"
printf 'hello <b>&</b>\n' >"$T/b c.txt"
req -F "file=@$T/a.bin" -F "file=@$T/b c.txt" /upload
check "two files in one form: 303 to / ($CODE)" test "$CODE" = 303 -a "$(hval Location)" = /
check "the uploads are whole on disk" cmp -s "$T/a.bin" "$DIR/a.bin"
check "the second upload too" cmp -s "$T/b c.txt" "$DIR/b c.txt"
req /
check "the list escapes names in HTML and URLs" \
	grep -q 'href="/files/b%20c.txt">b c.txt</a>' "$R.b"
req /api/files
check "GET /api/files: a JSON array of name, size, mtime" \
	jq -e 'length == 2 and (map(select(.name == "a.bin"))[0].size == 1000)
		and all(.[]; .mtime > 0)' "$R.b"
check "/api/files is application/json" test "$(hval Content-Type)" = application/json

req /files/a.bin
check "a download is the file byte for byte" cmp -s "$R.b" "$T/a.bin"
check "with its Content-Length" test "$(hval Content-Length)" = 1000
req -I /files/a.bin
got=$(curl -sS -I -o /dev/null -w '%{size_download}' "$URL/files/a.bin")
check "HEAD: the length, no body ($got bytes)" \
	test "$CODE" = 200 -a "$(hval Content-Length)" = 1000 -a "$got" = 0
req -H 'Range: bytes=10-19' /files/a.bin
check "Range: 206 with Content-Range and those bytes" \
	test "$CODE" = 206 -a "$(hval Content-Range)" = "bytes 10-19/1000" \
	-a "$(od -An -tx1 "$R.b")" = "$(tail -c +11 "$T/a.bin" | head -c 10 | od -An -tx1)"
req -H 'Range: bytes=5000-' /files/a.bin
check "an unsatisfiable Range: 416" test "$CODE" = 416 -a "$(hval Content-Range)" = "bytes */1000"

# Names that try to leave DIR, or are none.
: >"$T/outside"
for p in /files/..%2Foutside /files/%2e%2e /files/%2E%2E%2Fdrop /files/.hidden \
	/files/a%00b /files/ "/files/..%2F..%2Fetc%2Fpasswd"; do
	req --path-as-is "$p"
	# "/files/%2e%2e" is "/" once resolved (nginx resolves it so too).
	check "GET $p is refused or the list, never a file ($CODE)" \
		test "$CODE" -ge 400 -a "$CODE" -lt 500 -o \
		"$(grep -c '<h1>Files' "$R.b")" = 1
done
req -F "file=@$T/a.bin;filename=../evil" /upload
check "an upload named ../evil: 400 ($CODE), nothing outside" \
	test "$CODE" = 400 -a ! -e "$T/evil" -a ! -e "$DIR/../evil"
req -F "file=@$T/a.bin;filename=.x" /upload
check "an upload named .x: 400 ($CODE)" test "$CODE" = 400

# Past the cap: 413, and nothing left on disk (no temp file either).
head -c $((50 << 20)) /dev/zero >"$T/big"
echo x >>"$T/big"
before=$(ls -A "$DIR" | sort | tr '\n' ' ')
req -F "file=@$T/big;filename=big" /upload
check "a file past 50 MiB: 413 ($CODE)" test "$CODE" = 413
check "and nothing left of it in the folder" test "$(ls -A "$DIR" | sort | tr '\n' ' ')" = "$before"

# Three files of 49 MiB in one form; the app's memory meanwhile.
for i in 1 2 3; do head -c $((49 << 20)) /dev/urandom >"$T/f$i"; done
idle=$(rss_kb)
peak=$idle
curl -sS -o /dev/null -w '%{http_code}' --max-time 300 -F "file=@$T/f1" \
	-F "file=@$T/f2" -F "file=@$T/f3" "$URL/upload" >"$T/code3" &
cpid=$!
while kill -0 "$cpid" 2>/dev/null; do
	r=$(rss_kb)
	[ "${r:-0}" -gt "$peak" ] && peak=$r
	sleep 0.05
done
wait "$cpid"
echo "# dropbox RSS: idle $idle kB, peak $peak kB during 3 x 49 MiB"
check "three 49 MiB files in one form: 303 ($(cat "$T/code3"))" test "$(cat "$T/code3")" = 303
check "each whole on disk" sh -c "cmp -s '$T/f1' '$DIR/f1' && cmp -s '$T/f2' '$DIR/f2' && cmp -s '$T/f3' '$DIR/f3'"
check "the app's RSS grew by less than 8 MiB ($((peak - idle)) kB)" test $((peak - idle)) -lt 8192

# Login guards deletes.
req -X DELETE /files/a.bin
check "DELETE without a session: 403 ($CODE)" test "$CODE" = 403 -a -e "$DIR/a.bin"
req -d password=wrong /login
check "a wrong password: 403 ($CODE), no cookie" test "$CODE" = 403 -a -z "$(hval Set-Cookie)"
req -d password=sesame /login
cookie=$(hval Set-Cookie)
check "the password: 303 and an HttpOnly session cookie" \
	test "$CODE" = 303 -a -n "$(echo "$cookie" | grep 'HttpOnly' | grep 'SameSite=Strict')"
sid=${cookie%%;*}
req -X DELETE -H "Cookie: sid=forged" /files/a.bin
check "DELETE with a forged session: 403 ($CODE)" test "$CODE" = 403
req -X DELETE -H "Cookie: $sid" /files/a.bin
check "DELETE with the session: 204, gone ($CODE)" test "$CODE" = 204 -a ! -e "$DIR/a.bin"
req -X POST -H "Cookie: $sid" "/files/b%20c.txt/delete"
check "POST .../delete with the session: 303, gone ($CODE)" test "$CODE" = 303 -a ! -e "$DIR/b c.txt"
req -X DELETE -H "Cookie: $sid" /files/a.bin
check "DELETE of a file gone: 404 ($CODE)" test "$CODE" = 404
req -X PUT /files/f1
check "PUT /files/f1: 405 with Allow ($CODE)" test "$CODE" = 405 -a -n "$(hval Allow)"
finish
