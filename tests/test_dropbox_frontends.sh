#!/bin/bash
# examples/dropbox behind lighttpd and Apache httpd, each run from a copy
# of its example (lighttpd.conf.example, apache.conf.example: only the
# backend, port, logs and paths changed), as the examples say uploads go:
#   - a form of two files, 40 MiB and 30 MiB (more than 64 MiB together:
#     lighttpd's old server.max-request-size refused it), arrives whole;
#   - lighttpd streams it on (server.stream-request-body = 2): its upload
#     folder held under 1 MiB of it at once (measured: 20 KB; 37 to 39 MB
#     of the 40 MiB file with the default 0);
#   - Apache applies no LimitRequestBody to what it proxies: 30 MiB past a
#     1 MiB LimitRequestBody reaches the backend all the same.
# tests/test_dropbox.sh does the rest behind nginx.
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/http.sh"
source "$(dirname "$0")/frontends.sh"

command -v curl >/dev/null || { not_ok "curl is installed"; finish; }
[ -x "$TOP/examples/dropbox" ] || { not_ok "examples/dropbox is built (make)"; finish; }

DIR=$T/drop
mkdir -p "$DIR"
port=$(freeport)
DROPBOX_PASSWORD=sesame spawn "$TOP/examples/dropbox" --listen "127.0.0.1:$port" \
	--dir "$DIR" 2>>"$T/dropbox.log"
wait_port "$port" || { not_ok "dropbox starts: $(tail -n 3 "$T/dropbox.log")"; finish; }
head -c $((40 << 20)) /dev/urandom >"$T/big"
head -c $((30 << 20)) /dev/urandom >"$T/mid"

for fe in lighttpd apache; do
	if [ "$fe" = lighttpd ] && [ ! -x "$LIGHTTPD" ]; then
		not_ok "lighttpd is installed ($LIGHTTPD; make deps)"
		continue
	fi
	if [ "$fe" = apache ] && [ ! -x "$APACHE" ]; then
		not_ok "apache2 is installed ($APACHE; make deps)"
		continue
	fi
	start_fe "$fe" "dropbox" "127.0.0.1:$port" || continue
	curl -sS -o /dev/null -w '%{http_code}' --max-time 120 \
		-F "file=@$T/big;filename=$fe-big" -F "file=@$T/mid;filename=$fe-mid" \
		"$URL/upload" >"$T/$fe.code" 2>"$T/$fe.err" &
	cpid=$!
	# The most of the body lighttpd's temp files held at once.
	spooled=0
	while kill -0 "$cpid" 2>/dev/null; do
		b=$(du -sb "$FE_DIR/uploads" 2>/dev/null | cut -f1)
		[ "${b:-0}" -gt "$spooled" ] && spooled=$b
		sleep 0.01
	done
	wait "$cpid"
	code=$(cat "$T/$fe.code")
	check "$fe: a form of 40 MiB and 30 MiB files: 303 ($code $(cat "$T/$fe.err"))" \
		test "$code" = 303
	check "$fe: the 40 MiB file is whole on disk" cmp -s "$T/big" "$DIR/$fe-big"
	check "$fe: the 30 MiB file too" cmp -s "$T/mid" "$DIR/$fe-mid"
	[ "$fe" = lighttpd ] &&
		check "lighttpd: the body streamed on, under 1 MiB of it in temp files ($spooled bytes)" \
			test "$spooled" -lt $((1 << 20))
	stop_fe
	[ "$fe" = apache ] || continue
	# What apache.conf.example says: LimitRequestBody caps no proxied body.
	sed -i 's/^LimitRequestBody .*/LimitRequestBody 1048576/' "$FE_DIR/apache.conf"
	start_apache "$FE_DIR" || { not_ok "apache starts again"; continue; }
	FRONTEND_PID=$APACHE_PID
	code=$(curl -sS -o /dev/null -w '%{http_code}' --max-time 120 \
		-F "file=@$T/mid;filename=past-limit" "$URL/upload" 2>&1)
	check "apache: LimitRequestBody 1 MiB lets 30 MiB through to the backend ($code)" \
		eval 'grep -q "^LimitRequestBody 1048576$" "$FE_DIR/apache.conf" &&
			test "$code" = 303 && cmp -s "$T/mid" "$DIR/past-limit"'
	stop_fe
done
finish
