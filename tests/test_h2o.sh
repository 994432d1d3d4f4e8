#!/bin/bash
# evfcgid behind the real h2o 2.2 (fastcgi.connect), the HEAD question:
# evfcgid answers HEAD as RFC 3875 asks (the GET's headers, Content-Length
# included, and no body), and h2o 2.2 then closes the client's kept
# connection whenever that Content-Length is not 0.  Its fastcgi handler
# counts the body against the Content-Length without looking at the
# method (lib/handler/fastcgi.c, do_send: a final send with bytes still
# "left" makes the HTTP/1 connection not persistent).  A known quirk of
# h2o, printed as a note; what must hold is checked: the HEAD answer is
# right (200, the length, no body bytes), a HEAD of an empty answer keeps
# the connection, and GETs are served byte for byte on kept connections.
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/http.sh"
source "$(dirname "$0")/frontends.sh"
H2O=${H2O:-$(command -v h2o || echo /usr/bin/h2o)}

command -v python3 >/dev/null || { not_ok "python3 is installed"; finish; }
[ -x "$H2O" ] || { not_ok "h2o is installed ($H2O; make deps)"; finish; }

start_evfcgid --max-size 16m --max-body 8m
P=$(freeport)
user=""
[ "$(id -u)" -eq 0 ] && user="user: root"
cat >"$T/h2o.conf" <<CONF
listen:
  host: 127.0.0.1
  port: $P
$user
pid-file: $T/h2o.pid
error-log: $T/h2o.err
hosts:
  default:
    paths:
      /:
        fastcgi.connect:
          host: 127.0.0.1
          port: $EVFCGID_PORT
          type: tcp
CONF
spawn "$H2O" -c "$T/h2o.conf" 2>>"$T/h2o.stderr"
wait_port "$P" || { not_ok "h2o starts ($(tail -n 3 "$T/h2o.err" "$T/h2o.stderr" 2>/dev/null))"; finish; }
URL=http://127.0.0.1:$P
mkdir -p "$T/exp"
for n in 0 100 1048576; do
	pattern "$n" >"$T/exp/$n"
	http_check "h2o: /size?$n byte for byte" "$URL/size?$n" 200 "$T/exp/$n"
	line=$(head_then_get "$URL" "/size?$n" "$T/exp/$n")
	echo "# h2o: HEAD then GET /size?$n on one connection: $line"
	check "h2o: HEAD /size?$n: 200, Content-Length $n, no body" \
		eval '[[ $line == "head=200 head_len=$n stray=0 "* ]]'
	if [ "$n" = 0 ]; then
		check "h2o: ... Content-Length 0: the connection kept, the GET served" \
			eval '[[ $line == *"kept=yes get=200 get_body=0 same=yes" ]]'
	elif [[ $line == *kept=no* ]]; then
		echo "# note: h2o closed the client's connection after a HEAD with Content-Length $n (its known quirk, see README)"
	else
		check "h2o: ... the GET on the same connection, byte for byte" \
			eval '[[ $line == *"kept=yes get=200 get_body=$n same=yes" ]]'
	fi
done
# Kept client connections for GETs: curl reuses one for all three.
out=$(curl -s -o /dev/null -o /dev/null -o /dev/null -w '%{num_connects}\n' \
	"$URL/size?100" "$URL/big" "$URL/size?100")
check "h2o: three GETs on one kept client connection (connects: $(echo $out))" \
	test "$(echo $out)" = "1 0 0"
check "evfcgid still running" kill -0 "$EVFCGID_PID"
finish
