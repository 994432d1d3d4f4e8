# tests/frontends.sh: runnable copies of nginx.conf.example and
# lighttpd.conf.example, for the tests, scripts/demo and
# tools/slow-client-experiment; a static nginx for the tests of the HTTP
# tools; and, for test_nginx.sh, test_lighttpd.sh, test_apache.sh and
# test_caddy.sh, a front end per check and the checks through it.  Source it after
# tests/lib.sh (it uses spawn, freeport, wait_port, have_ipv6_loopback
# and check); the checks through a front end also use status_of and
# http_check from tests/http.sh.
#
# A copy is the example with its own marked values replaced (port,
# backend, pid, logs, temp paths), so the examples stay the one source of
# truth: when a value the generator looks for is missing from an example,
# generation fails and says which.  Everything a front end writes stays in
# its DIR.
#
#   nginx_conf DIR PORT BACKENDS [VARIANT...]   writes DIR/nginx.conf
#   nginx_static_conf DIR PORT ROOT [VARIANT...]
#                                               writes DIR/nginx.conf, a
#                                               static file server
#   start_nginx DIR                             starts it; sets NGINX_PID
#   lighttpd_conf DIR PORT BACKEND [VARIANT...] writes DIR/lighttpd.conf
#   start_lighttpd DIR                          starts it; sets LIGHTTPD_PID
#   frontend_start NAME DIR PORT BACKEND [VARIANT...]
#                                               both steps by name;
#                                               sets FRONTEND_PID
#   start_fe FRONTEND LABEL BACKEND [VARIANT...]
#                                               frontend_start on a free
#                                               port, in $T; sets URL
#   stop_fe                                     stops it; sets FE_RC
#   slow_client URL, check_backpressure, check_absorbed,
#   check_blocking_fcgid_behind, check_backpressure_behind,
#   fe_backend_conns, check_status_kept_local, check_slow_pair
#                                               checks through it
#   apache_conf, start_apache, caddy_conf, start_caddy
#                                               the same for Apache httpd
#                                               and Caddy (at the end;
#                                               frontend_start and
#                                               start_fe know them)
#   head_then_get, fe_battery                   the checks every front
#                                               end passes
#
# Backends are written as for evfcgid --listen: HOST:PORT, [V6]:PORT,
# unix:/path.  Any FastCGI server will do (tools/blocking_fcgid too).

FE_TOP=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
NGINX_EXAMPLE=$FE_TOP/nginx.conf.example
LIGHTTPD_EXAMPLE=$FE_TOP/lighttpd.conf.example
NGINX=${NGINX:-$(command -v nginx || echo /usr/sbin/nginx)}
LIGHTTPD=${LIGHTTPD:-$(command -v lighttpd || echo /usr/sbin/lighttpd)}

# fe_rewrite EXAMPLE OUT RULES: copies EXAMPLE to OUT, replacing each line
# whose text (after its indentation) starts with a rule's prefix by the
# rule's replacement, indented alike.  RULES holds one rule per line,
# "prefix<TAB>replacement"; "\n" in a replacement starts a new line, an
# empty replacement deletes the line.  Fails, naming the prefix, when a
# rule matched no line: the example changed under the generator.
fe_rewrite() {
	awk -v rules="$3" -v example="$1" '
	BEGIN {
		FS = "\t"
		while ((getline line < rules) > 0) {
			i = index(line, "\t")
			n++
			pre[n] = substr(line, 1, i - 1)
			rep[n] = substr(line, i + 1)
			hits[n] = 0
		}
		close(rules)
	}
	{
		match($0, /^[ \t]*/)
		indent = substr($0, 1, RLENGTH)
		text = substr($0, RLENGTH + 1)
		for (r = 1; r <= n; r++) {
			if (substr(text, 1, length(pre[r])) != pre[r])
				continue
			hits[r]++
			if (rep[r] == "")
				next
			k = split(rep[r], parts, /\\n/)
			for (j = 1; j <= k; j++)
				print indent parts[j]
			next
		}
		print
	}
	END {
		bad = 0
		for (r = 1; r <= n; r++)
			if (hits[r] == 0) {
				printf "frontends.sh: %s has no line starting with \"%s\"\n",
				    example, pre[r] > "/dev/stderr"
				bad = 1
			}
		exit bad
	}' "$1" >"$2"
}

# nginx_conf DIR PORT BACKENDS [VARIANT...]: writes DIR/nginx.conf, the
# example listening on 127.0.0.1:PORT in the foreground, with pid, logs and
# all five temp paths in DIR, the workers as root when started as root
# (else, as nobody, they could not write DIR), and an upstream server per
# comma-separated address in BACKENDS.  Variants:
#   buffered     fastcgi_buffering on (nginx's default: spools to temp files)
#   notemp       fastcgi_buffering on with fastcgi_max_temp_file_size 0
#   nosndbuf     no sndbuf=16k on the listen line (the kernel autotunes)
#   workers=N    worker_processes N instead of auto
#   keepalive=N  upstream keepalive N (0 removes it: a connection per request)
#   send_timeout=T  nginx send_timeout T (e.g. 3s) instead of the example's
#   errlog=LEVEL the error log's level (warn; info logs client timeouts)
#   script_filename=PATH  also pass SCRIPT_FILENAME PATH (PHP-FPM finds its
#                script by it; evfcgid ignores it): make bench's peers
#   bind=ADDR    listen on ADDR:PORT instead of 127.0.0.1:PORT (0.0.0.0: every
#                address, as in a network namespace of the experiment's --links)
# Returns non-zero, saying why, on an unknown variant or a changed example.
nginx_conf() {
	local dir=$1 port=$2 backends=$3 v b rules params
	local buffering="fastcgi_buffering off;" listen="sndbuf=16k backlog=4096" workers="" keepalive="" list
	local send_timeout="" errlog=warn script="" bind=127.0.0.1
	shift 3
	for v in "$@"; do
		case $v in
		buffered) buffering="fastcgi_buffering on;" ;;
		notemp) buffering='fastcgi_buffering on;\nfastcgi_max_temp_file_size 0;' ;;
		nosndbuf) listen="backlog=4096" ;;
		workers=*) workers=${v#workers=} ;;
		keepalive=*) keepalive=${v#keepalive=} ;;
		send_timeout=*) send_timeout=${v#send_timeout=} ;;
		errlog=*) errlog=${v#errlog=} ;;
		script_filename=*) script=${v#script_filename=} ;;
		bind=*) bind=${v#bind=} ;;
		*) echo "nginx_conf: unknown variant '$v'" >&2; return 2 ;;
		esac
	done
	mkdir -p "$dir"/client_body "$dir"/proxy "$dir"/fastcgi "$dir"/uwsgi "$dir"/scgi || return 1
	local servers="" top="daemon off;"
	# Each backend gets the example's own server parameters.
	params=$(sed -n 's|^[[:space:]]*server unix:/run/evfcgid\.sock\([^;]*\);.*|\1|p' "$NGINX_EXAMPLE")
	IFS=, read -ra list <<<"$backends"
	for b in "${list[@]}"; do
		servers+="${servers:+\\n}server $b$params;"
	done
	[ "$(id -u)" -eq 0 ] && top+='\nuser root;'
	local temps="client_body_temp_path $dir/client_body;\\nproxy_temp_path $dir/proxy;"
	temps+="\\nfastcgi_temp_path $dir/fastcgi;\\nuwsgi_temp_path $dir/uwsgi;\\nscgi_temp_path $dir/scgi;"
	rules=$dir/nginx.rules
	{
		printf '%s\t%s\n' "user www-data;" "$top"
		printf '%s\t%s\n' "pid /run/nginx-evfcgid.pid;" "pid $dir/nginx.pid;"
		printf '%s\t%s\n' "error_log /var/log/nginx/evfcgid.error.log" "error_log $dir/error.log $errlog;"
		printf '%s\t%s\n' "access_log /var/log/nginx/evfcgid.access.log;" "access_log $dir/access.log;\\n$temps"
		printf '%s\t%s\n' "listen 127.0.0.1:8080 sndbuf=16k backlog=4096;" "listen $bind:$port${listen:+ $listen};"
		printf '%s\t%s\n' "server unix:/run/evfcgid.sock" "$servers"
		printf '%s\t%s\n' "fastcgi_buffering off;" "$buffering"
		[ -n "$script" ] && printf '%s\t%s\n' "fastcgi_param SCRIPT_NAME " \
			"fastcgi_param SCRIPT_NAME       \$fastcgi_script_name;\\nfastcgi_param SCRIPT_FILENAME   $script;"
		[ -n "$send_timeout" ] && printf '%s\t%s\n' "send_timeout " "send_timeout $send_timeout;"
		[ -n "$workers" ] && printf '%s\t%s\n' "worker_processes auto;" "worker_processes $workers;"
		if [ "$keepalive" = 0 ]; then
			printf '%s\t%s\n' "keepalive 32;" ""
			printf '%s\t%s\n' "keepalive_timeout 50s;" ""
		elif [ -n "$keepalive" ]; then
			printf '%s\t%s\n' "keepalive 32;" "keepalive $keepalive;"
		fi
	} >"$rules"
	fe_rewrite "$NGINX_EXAMPLE" "$dir/nginx.conf" "$rules" || return 1
	echo "$port" >"$dir/port"
}

# nginx_static_conf DIR PORT ROOT [VARIANT...]: writes DIR/nginx.conf, not
# from the example: one nginx process (no master) serving the files of
# ROOT on 127.0.0.1:PORT, with its pid, error log and temp paths in DIR,
# no access log, the worker as root when started as root, and /chunked/
# serving the same files in chunked coding (sub_filter drops
# Content-Length).  For the tests of the HTTP tools.  Variants:
#   v6            also listen on [::1]:PORT, when the host has IPv6 loopback
#   many          room for thousands of connections (4096 per worker, 8192
#                 descriptors, a listen backlog of 4096)
#   small_log     /small logs each request's status and end time ($msec)
#                 to DIR/small.log
#   varying       /varying answers a body of fixed length that differs
#                 every time
#   who_log       /who answers "who" and logs each client's address
#                 ($remote_addr) to DIR/who.log
#   fastcgi=ADDR  /sleep goes to the FastCGI server at ADDR over kept
#                 connections
#   proxy=PPORT   127.0.0.1:PPORT is an HTTP proxy to this server that logs
#                 each request line ($request) to DIR/proxy.log
# Returns non-zero, saying why, on an unknown variant.
nginx_static_conf() {
	local dir=$1 port=$2 root=$3 v user="" listen6="" rlimit="" conns=1024
	local backlog="" requests=1000000 logformat="" upstream="" locations=""
	local servers=""
	shift 3
	for v in "$@"; do
		case $v in
		v6) have_ipv6_loopback && listen6="listen [::1]:$port;" ;;
		many)
			rlimit="worker_rlimit_nofile 8192;" conns=4096 backlog=" backlog=4096"
			requests=100000000
			;;
		small_log)
			logformat+="
	log_format counted '\$status \$msec';"
			locations+="
		location = /small {
			access_log $dir/small.log counted;
		}"
			;;
		varying)
			locations+='
		location = /varying {
			return 200 "$request_id\n";
		}'
			;;
		who_log)
			logformat+="
	log_format who '\$remote_addr';"
			locations+="
		location = /who {
			access_log $dir/who.log who;
			return 200 \"who\\n\";
		}"
			;;
		fastcgi=*)
			upstream="upstream backend {
		server ${v#fastcgi=};
		keepalive 16;
	}"
			locations+="
		location = /sleep {
			fastcgi_pass backend;
			fastcgi_keep_conn on;
			include /etc/nginx/fastcgi_params;
			fastcgi_param SCRIPT_NAME /sleep;
		}"
			;;
		proxy=*)
			logformat+="
	log_format proxied '\$request';"
			servers+="
	server {
		listen 127.0.0.1:${v#proxy=};
		access_log $dir/proxy.log proxied;
		location / {
			proxy_pass http://127.0.0.1:$port;
		}
	}"
			;;
		*) echo "nginx_static_conf: unknown variant '$v'" >&2; return 2 ;;
		esac
	done
	mkdir -p "$dir" || return 1
	[ "$(id -u)" -eq 0 ] && user='user root;'
	cat >"$dir/nginx.conf" <<CONF
daemon off;
master_process off;
$user
worker_processes 1;
$rlimit
error_log $dir/error.log;
pid $dir/nginx.pid;
events { worker_connections $conns; }
http {
	access_log off;$logformat
	$upstream
	client_body_temp_path $dir/client_body;
	proxy_temp_path $dir/proxy;
	fastcgi_temp_path $dir/fastcgi;
	uwsgi_temp_path $dir/uwsgi;
	scgi_temp_path $dir/scgi;
	default_type application/octet-stream;
	keepalive_requests $requests;
	server {
		listen 127.0.0.1:$port$backlog;
		$listen6
		root $root;
		location /chunked/ {
			alias $root/;
			sub_filter 'no such text in any test file' 'x';
			sub_filter_types *;
		}$locations
	}$servers
}
CONF
	echo "$port" >"$dir/port"
}

# start_nginx DIR: checks and starts nginx on DIR/nginx.conf, waits until
# its port accepts; sets NGINX_PID (the master, stopped on exit).  On
# failure prints nginx's complaint and returns non-zero.
start_nginx() {
	local dir=$1
	if ! "$NGINX" -t -q -p "$dir" -c "$dir/nginx.conf" -e "$dir/error.log" 2>"$dir/check.err"; then
		sed 's/^/# nginx: /' "$dir/check.err" >&2
		return 1
	fi
	spawn "$NGINX" -p "$dir" -c "$dir/nginx.conf" -e "$dir/error.log" 2>>"$dir/stderr"
	NGINX_PID=$SPAWNED
	if ! wait_port "$(cat "$dir/port")" 10 || ! kill -0 "$NGINX_PID" 2>/dev/null; then
		tail -n 5 "$dir/error.log" "$dir/stderr" 2>/dev/null | sed 's/^/# nginx: /' >&2
		return 1
	fi
}

# lighttpd_conf DIR PORT BACKEND [VARIANT...]: writes DIR/lighttpd.conf,
# the example listening on 127.0.0.1:PORT with pid, logs, upload dir and
# document root in DIR.  BACKEND is one address (unix:/path: the example's
# first way; HOST:PORT, [V6]:PORT: its TCP way), or "spawn:COMMAND [ARGS]": the
# second way, lighttpd starts COMMAND itself by bin-path with a listening
# unix socket (DIR/backend.sock-0) on its fd 0.  Variants:
#   stream=N     server.stream-response-body N instead of 2 (0, 1: buffer all)
#   max_write_idle=S  server.max-write-idle S instead of the example's
#   bind=ADDR    server.bind ADDR instead of 127.0.0.1 (as nginx_conf's)
# Returns non-zero, saying why, on an unknown variant or a changed example.
lighttpd_conf() {
	local dir=$1 port=$2 backend=$3 v rules stream=2 idle="" bind=""
	shift 3
	for v in "$@"; do
		case $v in
		stream=[012]) stream=${v#stream=} ;;
		max_write_idle=*) idle=${v#max_write_idle=} ;;
		bind=*) bind=${v#bind=} ;;
		*) echo "lighttpd_conf: unknown variant '$v'" >&2; return 2 ;;
		esac
	done
	mkdir -p "$dir/www" "$dir/uploads" || return 1
	rules=$dir/lighttpd.rules
	{
		printf '%s\t%s\n' 'server.port = 8080' "server.port = $port"
		printf '%s\t%s\n' 'server.document-root = ' "server.document-root = \"$dir/www\""
		printf '%s\t%s\n' 'server.pid-file = ' "server.pid-file = \"$dir/lighttpd.pid\""
		printf '%s\t%s\n' 'server.errorlog = ' "server.errorlog = \"$dir/error.log\""
		printf '%s\t%s\n' 'accesslog.filename = ' "accesslog.filename = \"$dir/access.log\""
		printf '%s\t%s\n' 'server.upload-dirs = ' "server.upload-dirs = ( \"$dir/uploads\" )"
		printf '%s\t%s\n' 'server.stream-response-body = 2' "server.stream-response-body = $stream"
		[ -n "$idle" ] && printf '%s\t%s\n' 'server.max-write-idle = ' "server.max-write-idle = $idle"
		[ -n "$bind" ] && printf '%s\t%s\n' 'server.bind = ' "server.bind = \"$bind\""
		case $backend in
		spawn:*)
			printf '%s\t%s\n' '"socket" => "/run/lighttpd/evfcgid.sock",' "\"socket\" => \"$dir/backend.sock\","
			printf '%s\t%s\n' '"bin-path" => "/usr/local/sbin/evfcgid",' "\"bin-path\" => \"${backend#spawn:}\","
			printf '%s\t%s\n' 'fastcgi.server = ( "/" => ( var.evfcgid_local ) )' \
			    'fastcgi.server = ( "/" => ( var.evfcgid_spawn ) )'
			;;
		unix:*)
			printf '%s\t%s\n' '"socket" => "/run/evfcgid.sock",' "\"socket\" => \"${backend#unix:}\","
			;;
		\[*\]:*)
			local h=${backend%:*}
			h=${h#\[}
			printf '%s\t%s\n' '"host" => "127.0.0.1",' "\"host\" => \"${h%]}\","
			printf '%s\t%s\n' '"port" => 9000,' "\"port\" => ${backend##*:},"
			printf '%s\t%s\n' 'fastcgi.server = ( "/" => ( var.evfcgid_local ) )' \
			    'fastcgi.server = ( "/" => ( var.evfcgid_tcp ) )'
			;;
		*:*)
			printf '%s\t%s\n' '"host" => "127.0.0.1",' "\"host\" => \"${backend%:*}\","
			printf '%s\t%s\n' '"port" => 9000,' "\"port\" => ${backend##*:},"
			printf '%s\t%s\n' 'fastcgi.server = ( "/" => ( var.evfcgid_local ) )' \
			    'fastcgi.server = ( "/" => ( var.evfcgid_tcp ) )'
			;;
		*) echo "lighttpd_conf: bad backend '$backend'" >&2; return 2 ;;
		esac
	} >"$rules"
	fe_rewrite "$LIGHTTPD_EXAMPLE" "$dir/lighttpd.conf" "$rules" || return 1
	echo "$port" >"$dir/port"
}

# start_lighttpd DIR: checks and starts lighttpd on DIR/lighttpd.conf in
# the foreground (-D), waits until its port accepts; sets LIGHTTPD_PID
# (stopped on exit; lighttpd stops a backend it spawned).  On failure
# prints lighttpd's complaint and returns non-zero.
start_lighttpd() {
	local dir=$1
	if ! "$LIGHTTPD" -tt -f "$dir/lighttpd.conf" >"$dir/check.err" 2>&1; then
		sed 's/^/# lighttpd: /' "$dir/check.err" >&2
		return 1
	fi
	spawn "$LIGHTTPD" -D -f "$dir/lighttpd.conf" 2>>"$dir/stderr"
	LIGHTTPD_PID=$SPAWNED
	if ! wait_port "$(cat "$dir/port")" 10 || ! kill -0 "$LIGHTTPD_PID" 2>/dev/null; then
		tail -n 5 "$dir/error.log" "$dir/stderr" 2>/dev/null | sed 's/^/# lighttpd: /' >&2
		return 1
	fi
}

# frontend_start NAME DIR PORT BACKEND [VARIANT...]: writes and starts a
# front end by name; sets FRONTEND_PID.  NAME is nginx, lighttpd, apache
# or caddy, optionally followed by variants joined with "-": nginx-buffered,
# nginx-notemp, nginx-nosndbuf, nginx-buffered-nosndbuf, lighttpd-stream0,
# lighttpd-stream1 ...; more variants may follow as arguments, as
# nginx_conf and lighttpd_conf take them.  BACKEND as for those.
frontend_start() {
	local name=$1 dir=$2 port=$3 backend=$4 v parts pid
	local -a variants=()
	IFS=- read -ra parts <<<"$name"
	for v in "${parts[@]:1}"; do
		case $v in
		stream[012]) variants+=("stream=${v#stream}") ;;
		*) variants+=("$v") ;;
		esac
	done
	variants+=("${@:5}")
	case ${parts[0]} in
	nginx | lighttpd | apache | caddy) ;;
	*) echo "frontend_start: unknown front end '$name'" >&2; return 2 ;;
	esac
	# Each front end has its FE_conf and start_FE, which sets FE_PID.
	"${parts[0]}_conf" "$dir" "$port" "$backend" "${variants[@]}" && "start_${parts[0]}" "$dir" ||
		return
	pid=${parts[0]^^}_PID
	FRONTEND_PID=${!pid}
}

# --- A front end per check (tests/test_nginx.sh, test_lighttpd.sh,
# test_apache.sh, test_caddy.sh) ---------------------------------------------

# start_fe FRONTEND LABEL BACKEND [VARIANT...]: FRONTEND (a NAME as
# frontend_start takes it) on a free port, in a fresh directory under $T;
# sets URL, FE_DIR and FRONTEND_PID.  Reports "LABEL: FRONTEND starts"
# (not ok) only when it does not.
FE_NO=0
start_fe() {
	local fe=$1 label=$2 backend=$3 port
	shift 3
	port=$(freeport)
	FE_DIR=$T/$fe.$((++FE_NO))
	if frontend_start "$fe" "$FE_DIR" "$port" "$backend" "$@"; then
		URL=http://127.0.0.1:$port
		return 0
	fi
	not_ok "$label: $fe starts"
	return 1
}

# stop_fe: SIGTERM to the front end of start_fe; sets FE_RC to its exit
# status.
stop_fe() {
	kill "$FRONTEND_PID"
	wait "$FRONTEND_PID" 2>/dev/null
	FE_RC=$?
	# What the front end said, when it did not end well.
	[ "$FE_RC" -eq 0 ] ||
		tail -n 5 "$FE_DIR/error.log" "$FE_DIR/stderr" 2>/dev/null | sed 's/^/# front end: /'
}

# check_blocking_fcgid_behind FRONTEND [URI EXPECTED_BODY_FILE]...: the
# control group, tools/blocking_fcgid, behind FRONTEND (as start_fe takes
# it) serves /hello and /big as evfcgid does (the bodies http_route_checks
# left in $T/exp), and each URI with its expected body.  nginx runs one
# worker here: each worker keeps its own upstream connection, and the one
# blocking thread serves one connection at a time, so a request that a
# second worker took waited until the first's idle kept connection timed
# out (keepalive_timeout 50s).
check_blocking_fcgid_behind() {
	local fe=$1
	local -a v=()
	shift
	if [ ! -x "$BFCGID" ]; then
		not_ok "tools/blocking_fcgid is built (make): the control group behind $fe"
		return
	fi
	[ "$fe" = nginx ] && v=(workers=1)
	start_blocking_fcgid
	start_fe "$fe" "blocking_fcgid" "$BFCGID_ADDR" "${v[@]}" || return
	http_check "blocking_fcgid behind $fe: /hello" "$URL/hello" 200 "$T/exp/hello" text/plain
	http_check "blocking_fcgid behind $fe: /big" "$URL/big" 200 "$T/exp/big"
	while [ $# -ge 2 ]; do
		http_check "blocking_fcgid behind $fe: $1" "$URL$1" 200 "$2"
		shift 2
	done
	stop_fe
}

# slow_client URL: curl reading URL at 64 KiB/s in the background (30 s at
# most); sets SLOW_PID.
slow_client() {
	spawn curl -s -o /dev/null --limit-rate 64k --max-time 30 "$1"
	SLOW_PID=$SPAWNED
}

# check_backpressure LABEL ADDR: a slow_client reads 64 MiB of /stream
# through the front end at $URL; ok when, 2 s later, the daemon at ADDR is
# still producing it, holds at most about its high watermark and counts
# the client's socket as stalled.  Leaves the client reading (SLOW_PID).
check_backpressure() {
	local label=$1 addr=$2 active stalled queued hw
	slow_client "$URL/stream?67108864"
	sleep 2
	read -r active stalled queued hw \
		<<<"$(status_of "$addr" requests_active stalled_sockets bytes_queued high_water)"
	echo "# $label, slow client: requests_active $active, stalled_sockets $stalled, bytes_queued $queued (high water $hw)"
	check "$label: 2 s later the slow client's 64 MiB are still being produced" \
		test "${active:-0}" -ge 2
	check "$label: evfcgid holds at most about the high watermark ($queued <= $hw + 64k)" \
		test "${queued:-0}" -le $((hw + 65536))
	check "$label: evfcgid counts the slow client's socket as stalled ($stalled)" \
		test "${stalled:-0}" -ge 1
}

# check_absorbed LABEL WHAT ADDR: the control of check_backpressure, for a
# front end that buffers.  A slow_client reads 64 MiB of /stream through
# it at $URL; ok when, within 10 s, the daemon at ADDR has nothing active
# but the /status asking (WHAT says who took the answer) while the client
# still reads.  Stops the client.
check_absorbed() {
	local label=$1 what=$2 addr=$3 i done_="" reading=""
	slow_client "$URL/stream?67108864"
	for ((i = 0; i < 100; i++)); do
		nap 0.1
		if [ "$(status_of "$addr" requests_active)" = 1 ]; then
			done_=$i
			kill -0 "$SLOW_PID" 2>/dev/null && reading=1
			break
		fi
	done
	echo "# $label, slow client: the daemon was done within $(( ${done_:-100} * 100 + 100 )) ms"
	check "$label (control): $what the daemon is done within 10 s" test -n "$done_"
	check "$label (control): meanwhile the client is still reading" test -n "$reading"
	kill "$SLOW_PID" 2>/dev/null
}

# check_backpressure_behind FRONTEND LABEL ADDR [SNDBUF_NAME SNDBUF]:
# FRONTEND as the example has it, in front of the evfcgid at ADDR, passes
# check_backpressure LABEL; the kernel's send buffer towards the slow
# client is printed and, when SNDBUF_NAME is given, checked to be SNDBUF
# bytes (a check named SNDBUF_NAME).  Stops the client and the front end.
check_backpressure_behind() {
	local fe=$1 label=$2 addr=$3 tb
	start_fe "$fe" "backpressure" "$addr" || return
	check_backpressure "$label" "$addr"
	if command -v ss >/dev/null; then
		tb=$(sndbuf_of "${URL##*:}")
		echo "# $label: the kernel send buffer towards the slow client is ${tb:-unknown} bytes"
		[ -z "${4:-}" ] ||
			check "$4: the client socket's send buffer is $5 (got ${tb:-none})" test "${tb:-0}" -eq "$5"
	else
		echo "# ss (iproute2) missing: the send buffer towards the slow client is not measured"
	fi
	kill "$SLOW_PID" 2>/dev/null
	stop_fe
}

# fe_backend_conns ADDR N: N requests for /hello, one at a time, through
# the front end at $URL; sets FE_CONNS and FE_REQS to the connections and
# requests the evfcgid at ADDR counted for them (its /status asked before
# and after, the second asking taken out).
fe_backend_conns() {
	local addr=$1 n=$2 i c0 r0 c1 r1
	read -r c0 r0 <<<"$(status_of "$addr" connections_total requests)"
	for ((i = 0; i < n; i++)); do curl -s -o /dev/null "$URL/hello"; done
	read -r c1 r1 <<<"$(status_of "$addr" connections_total requests)"
	FE_CONNS=$((c1 - c0 - 1)) FE_REQS=$((r1 - r0 - 1))
}

# check_status_kept_local: the example front end at $URL serves /status
# to this machine (127.0.0.1), refuses it (403) to another client
# (127.0.0.2) and serves that client the rest (/hello).
check_status_kept_local() {
	local code
	code=$(curl -s -o /dev/null -w '%{http_code}' "$URL/status")
	check "the example serves /status to this machine ($code)" test "$code" = 200
	code=$(curl -s -o /dev/null -w '%{http_code}' --interface 127.0.0.2 "$URL/status?format=prometheus")
	check "the example keeps /status from other clients (127.0.0.2: $code)" test "$code" = 403
	code=$(curl -s -o /dev/null -w '%{http_code}' --interface 127.0.0.2 "$URL/hello")
	check "... and serves them the rest (127.0.0.2 /hello: $code)" test "$code" = 200
}

# check_slow_pair FRONTEND BACKEND K SIZE SECONDS NAME VARIANTS CNAME
# CVARIANTS: two copies of FRONTEND at once in front of the evfcgid at
# BACKEND, the example with VARIANTS and its control with CVARIANTS (each
# a space-separated list, maybe empty), each with an http_get behind it
# reading /size?SIZE 512 bytes every 1000/K ms (at most K x 512 B/s) for
# SECONDS at most.  Checks "NAME: a client reading at most ... gets all
# SIZE bytes" (byte for byte) and "CNAME (control): the slow client is
# cut" (it gets less, or other bytes).  Without CNAME, only the example.
# Each says how far the kernel's send buffer towards its client grew.
check_slow_pair() {
	local fe=$1 backend=$2 k=$3 size=$4 secs=$5 v rc b
	local -a names=("$6" "${8:-}") variants=("$7" "${9:-}") runs=(0)
	local -A got=() port=() tb=()
	[ -n "${8:-}" ] && runs=(0 1)
	pattern "$size" >"$T/exp.slow"
	for v in "${runs[@]}"; do
		# shellcheck disable=SC2086 # a list of variants
		if start_fe "$fe" "slow, ${names[v]}" "$backend" ${variants[v]}; then
			spawn "$FE_TOP/tools/http_get" -b 512 -p $((1000 / k)) -t "$secs" -o "$T/slow.$v" \
				"$URL/size?$size" >"$T/get.$v" 2>&1
			got[$v]=$SPAWNED port[$v]=${URL##*:} tb[$v]=0
		fi
	done
	while ! none_running "${got[@]}"; do
		for v in "${!port[@]}"; do
			b=$(sndbuf_of "${port[$v]}")
			[ "${b:-0}" -gt "${tb[$v]}" ] && tb[$v]=$b
		done
		sleep 0.2
	done
	for v in "${runs[@]}"; do
		[ -n "${got[$v]:-}" ] || continue
		wait "${got[$v]}"
		rc=$?
		echo "# ${names[v]}: $(tail -n 1 "$T/get.$v"); the send buffer towards it reached ${tb[$v]} bytes"
		if [ "$v" = 1 ]; then
			check "${names[v]} (control): the slow client is cut (rc $rc)" \
				eval '! same_file "$T/exp.slow" "$T/slow.$v"'
		else
			check "${names[v]}: a client reading at most $((k * 512)) B/s gets all $size bytes (rc $rc)" \
				same_file "$T/exp.slow" "$T/slow.$v"
		fi
	done
}

# --- Apache httpd and Caddy (tests/test_apache.sh, test_caddy.sh) ----------

APACHE_EXAMPLE=$FE_TOP/apache.conf.example
CADDY_EXAMPLE=$FE_TOP/Caddyfile.example
APACHE=${APACHE:-$(command -v apache2 || echo /usr/sbin/apache2)}
CADDY=${CADDY:-$(command -v caddy || echo /usr/bin/caddy)}

# apache_conf DIR PORT BACKEND [VARIANT...]: writes DIR/apache.conf, the
# example listening on 127.0.0.1:PORT, with pid, runtime dir and logs in
# DIR, and its ProxyPass to BACKEND (HOST:PORT or unix:/path).  Started as root, the
# children run as the example's user (www-data); they touch nothing in DIR.
# Variants:
#   timeout=T        Timeout T (whole seconds: Apache reads "10ms" as 10)
#                    instead of the example's
#   proxy_timeout=T  ProxyTimeout T instead of the example's
#   noreuse          no enablereuse=on (a backend connection per request)
#   nosndbuf         no SendBufferSize (the kernel autotunes)
# Returns non-zero, saying why, on an unknown variant or a changed example.
apache_conf() {
	local dir=$1 port=$2 backend=$3 v rules timeout="" ptimeout="" params sndbuf=""
	shift 3
	params=$(sed -n 's#^[[:space:]]*ProxyPass "/" "unix:/run/evfcgid\.sock|fcgi://localhost/"\(.*\)$#\1#p' "$APACHE_EXAMPLE")
	local target="fcgi://$backend/"
	[[ $backend == unix:* ]] && target="$backend|fcgi://localhost/"
	for v in "$@"; do
		case $v in
		timeout=*) timeout=${v#timeout=} ;;
		proxy_timeout=*) ptimeout=${v#proxy_timeout=} ;;
		noreuse) params=${params/ enablereuse=on/} ;;
		nosndbuf) sndbuf=no ;;
		*) echo "apache_conf: unknown variant '$v'" >&2; return 2 ;;
		esac
	done
	mkdir -p "$dir/run" || return 1
	rules=$dir/apache.rules
	{
		printf '%s\t%s\n' 'Listen 127.0.0.1:8080' "Listen 127.0.0.1:$port"
		printf '%s\t%s\n' '<VirtualHost 127.0.0.1:8080>' "<VirtualHost 127.0.0.1:$port>"
		printf '%s\t%s\n' 'ProxyPass "/" "unix:/run/evfcgid.sock|fcgi://localhost/"' "ProxyPass \"/\" \"$target\"$params"
		printf '%s\t%s\n' 'PidFile ' "PidFile $dir/apache.pid"
		printf '%s\t%s\n' 'DefaultRuntimeDir ' "DefaultRuntimeDir $dir/run"
		printf '%s\t%s\n' 'ErrorLog ' "ErrorLog $dir/error.log"
		printf '%s\t%s\n' 'CustomLog ' "CustomLog $dir/access.log evfcgid"
		[ -n "$timeout" ] && printf '%s\t%s\n' 'Timeout 900' "Timeout $timeout"
		[ -n "$ptimeout" ] && printf '%s\t%s\n' 'ProxyTimeout 60' "ProxyTimeout $ptimeout"
		[ -n "$sndbuf" ] && printf '%s\t%s\n' 'SendBufferSize ' ""
	} >"$rules"
	fe_rewrite "$APACHE_EXAMPLE" "$dir/apache.conf" "$rules" || return 1
	echo "$port" >"$dir/port"
}

# start_apache DIR: checks and starts Apache on DIR/apache.conf in the
# foreground, waits until its port accepts; sets APACHE_PID (the parent,
# stopped on exit; it stops its children).  On failure prints Apache's
# complaint and returns non-zero.
start_apache() {
	local dir=$1
	if ! "$APACHE" -t -f "$dir/apache.conf" >"$dir/check.err" 2>&1; then
		sed 's/^/# apache: /' "$dir/check.err" >&2
		return 1
	fi
	spawn "$APACHE" -f "$dir/apache.conf" -DFOREGROUND 2>>"$dir/stderr"
	APACHE_PID=$SPAWNED
	if ! wait_port "$(cat "$dir/port")" 10 || ! kill -0 "$APACHE_PID" 2>/dev/null; then
		tail -n 5 "$dir/error.log" "$dir/stderr" 2>/dev/null | sed 's/^/# apache: /' >&2
		return 1
	fi
}

# --- The battery every front end passes (tests/test_apache.sh, test_caddy.sh)

# HEAD then GET on one kept client connection.  Prints one line:
#   head=STATUS head_len=CONTENT-LENGTH|- stray=N kept=yes|no get=STATUS get_body=N same=yes|no
# stray: bytes that arrived after the HEAD's headers (a body where none
# may be); kept: the connection still served the GET.
FE_HEAD_GET_PY='
import socket, sys, time
host, port, path, exp = sys.argv[1], int(sys.argv[2]), sys.argv[3], sys.argv[4]
want = open(exp, "rb").read()
s = socket.create_connection((host, port), timeout=30)
def head_of(buf):
	while b"\r\n\r\n" not in buf:
		d = s.recv(65536)
		if not d:
			return None, buf
		buf += d
	h, rest = buf.split(b"\r\n\r\n", 1)
	return h.decode("latin-1").split("\r\n"), rest
def field(h, name):
	for l in h[1:]:
		k, _, v = l.partition(":")
		if k.strip().lower() == name:
			return v.strip()
	return None
def unchunk(buf):
	out = b""
	while True:
		while b"\r\n" not in buf:
			d = s.recv(65536)
			if not d:
				return out
			buf += d
		size, buf = buf.split(b"\r\n", 1)
		n = int(size.split(b";")[0], 16)
		while len(buf) < n + 2:
			d = s.recv(65536)
			if not d:
				return out + buf
			buf += d
		if n == 0:
			return out
		out, buf = out + buf[:n], buf[n + 2:]
req = "%s " + path + " HTTP/1.1\r\nHost: " + host + "\r\n\r\n"
s.sendall((req % "HEAD").encode())
h, rest = head_of(b"")
if h is None:
	print("head=0 head_len=- stray=0 kept=no get=0 get_body=0 same=no"); sys.exit(0)
hs = h[0].split(" ")[1]
hl = field(h, "content-length") or "-"
s.settimeout(0.5)
stray, closed = len(rest), False
try:
	while True:
		d = s.recv(65536)
		if not d:
			closed = True
			break
		stray += len(d)
except socket.timeout:
	pass
s.settimeout(30)
gs, body, kept = "0", b"", "no"
if not closed:
	try:
		s.sendall((req % "GET").encode())
		h, body = head_of(b"")
		if h is not None:
			kept = "yes"
			gs = h[0].split(" ")[1]
			n = int(field(h, "content-length") or -1)
			if n < 0:
				body = unchunk(body)
			while len(body) < n:
				d = s.recv(65536)
				if not d:
					break
				body += d
	except OSError:
		pass
print("head=%s head_len=%s stray=%d kept=%s get=%s get_body=%d same=%s" % (hs, hl, stray,
    kept, gs, len(body), "yes" if body == want else "no"))
'

# head_then_get URL PATH EXPECTED_FILE: the line of FE_HEAD_GET_PY for a
# HEAD then a GET of PATH on one connection to URL (http://HOST:PORT).
head_then_get() {
	local hp=${1#http://}
	python3 -c "$FE_HEAD_GET_PY" "${hp%:*}" "${hp##*:}" "$2" "$3"
}

# A client that asks for PATH, reads BYTES of the answer and resets the
# connection (SO_LINGER 0).  Prints the bytes it read.
FE_RESET_PY='
import socket, struct, sys
host, port, path, n = sys.argv[1], int(sys.argv[2]), sys.argv[3], int(sys.argv[4])
s = socket.create_connection((host, port), timeout=30)
s.sendall(("GET " + path + " HTTP/1.1\r\nHost: " + host + "\r\n\r\n").encode())
got = 0
while got < n:
	d = s.recv(min(65536, n - got))
	if not d:
		break
	got += len(d)
s.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
s.close()
print(got)
'

# fe_battery LABEL URL BACKEND: what a front end at URL in front of the
# evfcgid at BACKEND (started with --max-size 16m --max-body 8m) must do,
# beyond http_route_checks: answers of 0 B to 8 MiB byte for byte, HEAD
# then GET on one kept connection, a 5 MiB chunked upload, and a client
# reset mid-answer followed by 20 good requests.  HEAD_KEPT=no before the
# call makes a closed connection after HEAD a note, not a failure (a front
# end's known quirk, said where it is set); CHUNKED=411 expects the
# chunked upload refused 411 (a front end that streams request bodies to
# FastCGI and will not buffer one of unknown length).
fe_battery() {
	local l=$1 u=$2 backend=$3 n line bad i got hp=${2#http://}
	mkdir -p "$T/exp"
	for n in 0 1 4096 65536 1048576 4194304 8388608; do
		[ -e "$T/exp/$n" ] || pattern "$n" >"$T/exp/$n"
		http_check "$l: /size?$n byte for byte" "$u/size?$n" 200 "$T/exp/$n"
	done
	http_check "$l: /stream?8388608 byte for byte" "$u/stream?8388608" 200 "$T/exp/8388608"

	for n in 0 65536 1048576; do
		line=$(head_then_get "$u" "/size?$n" "$T/exp/$n")
		echo "# $l: HEAD then GET /size?$n on one connection: $line"
		check "$l: HEAD /size?$n: 200, no body after its head" \
			eval '[[ $line == head=200\ *stray=0\ * ]]'
		if [ "${HEAD_KEPT:-yes}" = no ] && [[ $line == *kept=no* ]]; then
			echo "# note: $l closed the client connection after a HEAD (known, see README)"
		else
			check "$l: ... then GET /size?$n on the same connection, byte for byte" \
				eval '[[ $line == *kept=yes\ get=200\ get_body=$n\ same=yes ]]'
		fi
	done

	[ -e "$T/exp/in.5m" ] || head -c 5242880 /dev/urandom >"$T/exp/in.5m"
	local r=$T/chunked.$((++HTTP_NO)) code
	code=$(curl -sS -o "$r" -w '%{http_code}' --max-time 60 -H 'Transfer-Encoding: chunked' \
		-H 'Content-Type: application/octet-stream' -H 'Expect:' \
		--data-binary "@$T/exp/in.5m" "$u/echo" 2>"$r.err")
	if [ "${CHUNKED:-}" = 411 ]; then
		check "$l: POST /echo, 5 MiB chunked: 411, refused as said (HTTP $code)" \
			test "$code" = 411
	else
		check "$l: POST /echo, 5 MiB chunked, back byte for byte (HTTP $code)" \
			eval '[ "$code" = 200 ] && cmp -s "$r" "$T/exp/in.5m"'
	fi

	got=$(python3 -c "$FE_RESET_PY" "${hp%:*}" "${hp##*:}" "/size?8388608" 200000)
	echo "# $l: a client read $got bytes of /size?8388608 and reset its connection"
	bad=0
	for ((i = 0; i < 20; i++)); do
		curl -s -o "$T/after" --max-time 30 "$u/size?1048576"
		cmp -s "$T/after" "$T/exp/1048576" || bad=$((bad + 1))
	done
	check "$l: after a client reset mid-answer, 20 x /size?1048576 byte for byte ($bad bad)" \
		test "$bad" -eq 0
	wait_until 10 eval '[ "$(status_of "$backend" requests_active)" = 1 ]'
	check "$l: ... and evfcgid is left with no request but the /status asking" \
		test "$(status_of "$backend" requests_active)" = 1
}

# caddy_conf DIR PORT BACKEND [VARIANT...]: writes DIR/Caddyfile, the
# example serving http://127.0.0.1:PORT with its access log in DIR and its
# reverse_proxy to BACKEND (HOST:PORT).  Variants:
#   read_timeout=T   the fastcgi transport's read_timeout T (unset in the
#                    example)
#   write=T          the server's write timeout T (unset in the example)
# Returns non-zero, saying why, on an unknown variant or a changed example.
caddy_conf() {
	local dir=$1 port=$2 backend=$3 v rules rt="" wt=""
	shift 3
	for v in "$@"; do
		case $v in
		read_timeout=*) rt=${v#read_timeout=} ;;
		write=*) wt=${v#write=} ;;
		*) echo "caddy_conf: unknown variant '$v'" >&2; return 2 ;;
		esac
	done
	mkdir -p "$dir/home" || return 1
	rules=$dir/caddy.rules
	{
		printf '%s\t%s\n' 'http://127.0.0.1:8080 {' "http://127.0.0.1:$port {"
		printf '%s\t%s\n' 'reverse_proxy 127.0.0.1:9000 {' "reverse_proxy $backend {"
		printf '%s\t%s\n' 'output file /var/log/caddy/evfcgid.access.log' "output file $dir/access.log"
		[ -n "$rt" ] && printf '%s\t%s\n' 'dial_timeout 3s' "dial_timeout 3s\\nread_timeout $rt"
		[ -n "$wt" ] && printf '%s\t%s\n' 'idle 5m' "idle 5m\\nwrite $wt"
	} >"$rules"
	fe_rewrite "$CADDY_EXAMPLE" "$dir/Caddyfile" "$rules" || return 1
	echo "$port" >"$dir/port"
}

# start_caddy DIR: checks and starts Caddy on DIR/Caddyfile, with HOME and
# the XDG directories (its data and autosave) in DIR; waits until its port
# accepts; sets CADDY_PID (stopped on exit).  On failure prints Caddy's
# complaint and returns non-zero.
start_caddy() {
	local dir=$1
	local -a env=(env HOME="$dir/home" XDG_DATA_HOME="$dir/home/data"
		XDG_CONFIG_HOME="$dir/home/config")
	if ! "${env[@]}" "$CADDY" validate --config "$dir/Caddyfile" --adapter caddyfile \
	    >"$dir/check.err" 2>&1; then
		grep -v '"level":"info"' "$dir/check.err" | tail -n 5 | sed 's/^/# caddy: /' >&2
		return 1
	fi
	spawn "${env[@]}" "$CADDY" run --config "$dir/Caddyfile" --adapter caddyfile 2>>"$dir/stderr"
	CADDY_PID=$SPAWNED
	if ! wait_port "$(cat "$dir/port")" 10 || ! kill -0 "$CADDY_PID" 2>/dev/null; then
		tail -n 5 "$dir/stderr" 2>/dev/null | sed 's/^/# caddy: /' >&2
		return 1
	fi
}
