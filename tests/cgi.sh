# tests/cgi.sh: the CGI test bed (issue 12), for tests/test_cgi.sh and
# tests/test_cgi_git.sh: a CGI backend, fcgiwrap (the reference peer) or
# `evfcgid --cgi`, started alike, and nginx in front of it with the CGI
# locations docs/cgi.md quotes.  Source it after tests/lib.sh and
# tests/frontends.sh (it uses T, TOP, EVFCGID, spawn, freeport, wait_port,
# nginx_conf, fe_rewrite and start_nginx).
#
#   cgi_www DIR                      DIR/cgi-bin: the scripts of tests/cgi
#                                    and the cases the gateway must refuse
#   cgi_backend_usable BACKEND       true if it can run here; else says why
#                                    in CGI_SKIP
#   start_fcgiwrap [tcp|unix] [N]    fcgiwrap with N children (4)
#   start_cgi_backend BACKEND ROOT [tcp|unix] [N]
#                                    fcgiwrap, or evfcgid --cgi --cgi-root
#                                    ROOT; sets CGI_ADDR, CGI_PID, CGI_LOG
#   stop_cgi_backend                 SIGTERM to its process group
#   nginx_cgi_conf DIR PORT ADDR WWW [git=ROOT]
#                                    writes DIR/nginx.conf
#   start_cgi_nginx ADDR WWW [git=ROOT]
#                                    starts it on a free port; sets CGI_URL
#   cgi_own_pid PID                  a pid a script reported, ended on exit
#
# The backend runs with EVFCGI_SECRET=1 in its environment: a script must
# not see it.  Each backend is started as the leader of a process group of
# its own (setsid), and the group is ended on exit, so scripts that hang
# under fcgiwrap do not outlive the test.  To run the tests against one
# backend only: CGI_BACKENDS=evfcgid bash tests/test_cgi.sh; another
# evfcgid binary: CGI_EVFCGID=/path/to/evfcgid.

CGI_BACKENDS=${CGI_BACKENDS:-fcgiwrap evfcgid}
CGI_EVFCGID=${CGI_EVFCGID:-$EVFCGID}	# override: a sanitizer build
FCGIWRAP=${FCGIWRAP:-$(command -v fcgiwrap || echo /usr/sbin/fcgiwrap)}
GIT_HTTP_BACKEND=${GIT_HTTP_BACKEND:-$(git --exec-path 2>/dev/null)/git-http-backend}
# evfcgid's per-request time limit: the option and the seconds the tests
# give it (the hung script must be ended within it and a margin).
CGI_TIMEOUT_OPT=${CGI_TIMEOUT_OPT:---cgi-timeout}
CGI_TIMEOUT=${CGI_TIMEOUT:-3}
CGI_GROUPS=()
CGI_OWN=()

# cgi_cleanup: ends the backends' process groups and the scripts that
# reported their pids, then lib.sh's cleanup.
cgi_cleanup() {
	local g
	for g in "${CGI_GROUPS[@]}"; do
		kill -TERM -- "-$g" 2>/dev/null
	done
	for g in "${CGI_OWN[@]}"; do
		kill -KILL "$g" 2>/dev/null
	done
	[ "${#CGI_GROUPS[@]}" -gt 0 ] && sleep 0.2
	for g in "${CGI_GROUPS[@]}"; do
		kill -KILL -- "-$g" 2>/dev/null
	done
	cleanup
}
trap cgi_cleanup EXIT

# cgi_pids FILE: the pids of the processes running the CGI program FILE,
# by its path on their command line or, for a #! script run from its
# descriptor (its interpreter reads /dev/fd/3), by a descriptor open on it.
# One find over every process's descriptors: a find and a grep per
# process took over 2 s on a busy machine, longer than a test's grace.
cgi_pids() {
	{
		pgrep -f "$1"
		find /proc/[0-9]*/fd -maxdepth 1 -lname "$1" 2>/dev/null | cut -d/ -f3
	} | sort -un | tr '\n' ' '
}

# cgi_own_pid PID: PID, which a script under test reported (X-Pid), is
# killed on exit if it is still running.
cgi_own_pid() {
	[[ $1 =~ ^[0-9]+$ ]] && CGI_OWN+=("$1")
}

# cgi_www DIR: makes DIR/cgi-bin, a document root's CGI directory: a copy
# of every script in tests/cgi, and the cases a gateway must refuse:
# noexec.sh (a script without the execute bit), adir (a directory) and
# outside.sh (a symlink to an executable outside DIR/cgi-bin).
cgi_www() {
	local dir=$1
	mkdir -p "$dir/cgi-bin/adir" "$dir/outside" || return 1
	cp -p "$TOP"/tests/cgi/* "$dir/cgi-bin/" || return 1
	printf '#!/bin/sh\nprintf "Content-Type: text/plain\\r\\n\\r\\nran\\n"\n' \
		>"$dir/cgi-bin/noexec.sh"
	chmod 644 "$dir/cgi-bin/noexec.sh"
	cp -p "$dir/cgi-bin/hello.sh" "$dir/outside/hello.sh"
	ln -s ../outside/hello.sh "$dir/cgi-bin/outside.sh"
}

# cgi_backend_usable BACKEND: true if BACKEND (fcgiwrap or evfcgid) can
# run here; otherwise false with the reason in CGI_SKIP.  evfcgid counts
# as usable once its --help mentions --cgi.
cgi_backend_usable() {
	CGI_SKIP=""
	case $1 in
	fcgiwrap)
		[ -x "$FCGIWRAP" ] || CGI_SKIP="fcgiwrap is not installed ($FCGIWRAP)"
		;;
	evfcgid)
		if [ ! -x "$CGI_EVFCGID" ]; then
			CGI_SKIP="$CGI_EVFCGID is not built"
		elif ! "$CGI_EVFCGID" --help 2>&1 | grep -q -e '--cgi'; then
			CGI_SKIP="$CGI_EVFCGID --help does not mention --cgi"
		fi
		;;
	*) CGI_SKIP="unknown CGI backend '$1'" ;;
	esac
	[ -z "$CGI_SKIP" ]
}

# cgi_each_backend FN: FN BACKEND for each of $CGI_BACKENDS that can run;
# one that cannot is a failure (evfcgid has --cgi now: a build without it
# must not pass by skipping).
cgi_each_backend() {
	local b
	for b in $CGI_BACKENDS; do
		if cgi_backend_usable "$b"; then
			"$1" "$b"
		else
			not_ok "$b: $CGI_SKIP"
		fi
	done
}

# cgi_addr KIND: sets CGI_ADDR to a fresh listening address of KIND (tcp:
# 127.0.0.1:PORT on a free port; unix: unix:$T/cgi.N.sock) and CGI_NO to
# the number of this backend, which names its files.
CGI_NO=0
cgi_addr() {
	CGI_NO=$((CGI_NO + 1))
	case $1 in
	unix) CGI_ADDR=unix:$T/cgi.$CGI_NO.sock ;;
	*) CGI_ADDR=127.0.0.1:$(freeport) ;;
	esac
}

# cgi_spawn_group LOG CMD...: spawns CMD with EVFCGI_SECRET=1 as the
# leader of a new session, its stderr to LOG; sets CGI_PID and records its
# group for cgi_cleanup.  Fails when CMD did not become its group's
# leader (setsid had to fork).
cgi_spawn_group() {
	local log=$1 pgid
	shift
	spawn env EVFCGI_SECRET=1 setsid "$@" 2>>"$log"
	CGI_PID=$SPAWNED
	CGI_GROUPS+=("$CGI_PID")
	sleep 0.05
	pgid=$(ps -o pgid= -p "$CGI_PID" | tr -d ' ')
	if [ -n "$pgid" ] && [ "$pgid" != "$CGI_PID" ]; then
		echo "# $1 runs in group $pgid, not its own ($CGI_PID)" >&2
		return 1
	fi
}

# start_fcgiwrap [tcp|unix] [N]: fcgiwrap with N preforked children (4),
# listening on a fresh address of the kind (tcp by default); sets
# CGI_ADDR (as nginx and evfcgid --listen write it), CGI_PID and CGI_LOG
# (its stderr: the scripts' stderr too); waits until it accepts.
start_fcgiwrap() {
	local kind=${1:-tcp} n=${2:-4}
	cgi_addr "$kind"
	CGI_LOG=$T/fcgiwrap.$CGI_NO.log
	case $CGI_ADDR in
	unix:*) cgi_spawn_group "$CGI_LOG" "$FCGIWRAP" -c "$n" -s "$CGI_ADDR" || return 1 ;;
	*) cgi_spawn_group "$CGI_LOG" "$FCGIWRAP" -c "$n" -s "tcp:$CGI_ADDR" || return 1 ;;
	esac
	wait_port "$CGI_ADDR"
}

# start_evfcgid_cgi ROOT [tcp|unix]: evfcgid --cgi --cgi-root ROOT on a
# fresh address, with the time limit CGI_TIMEOUT_OPT CGI_TIMEOUT when its
# --help lists that option, and the flags in the array CGI_EVFCGID_FLAGS;
# sets CGI_ADDR, CGI_PID and CGI_LOG.
CGI_EVFCGID_FLAGS=()
start_evfcgid_cgi() {
	local root=$1 kind=${2:-tcp}
	local -a limit=()
	"$CGI_EVFCGID" --help 2>&1 | grep -q -e "$CGI_TIMEOUT_OPT" &&
		limit=("$CGI_TIMEOUT_OPT" "$CGI_TIMEOUT")
	cgi_addr "$kind"
	CGI_LOG=$T/evfcgid-cgi.$CGI_NO.log
	cgi_spawn_group "$CGI_LOG" "$CGI_EVFCGID" --cgi --cgi-root "$root" "${limit[@]}" \
		"${CGI_EVFCGID_FLAGS[@]}" --listen "$CGI_ADDR" --allow 127.0.0.1 || return 1
	wait_port "$CGI_ADDR"
}

# start_cgi_backend BACKEND ROOT [tcp|unix] [N]: BACKEND (fcgiwrap or
# evfcgid) serving the CGI programs under ROOT (fcgiwrap has no such
# limit; N is its number of children); sets CGI_ADDR, CGI_PID, CGI_LOG.
start_cgi_backend() {
	case $1 in
	fcgiwrap) start_fcgiwrap "${3:-tcp}" "${4:-4}" ;;
	evfcgid) start_evfcgid_cgi "$2" "${3:-tcp}" ;;
	*) echo "start_cgi_backend: unknown backend '$1'" >&2; return 2 ;;
	esac
}

# stop_cgi_backend: SIGTERM to the backend's process group (fcgiwrap's
# children and their scripts with it), then waits for it.
stop_cgi_backend() {
	kill -TERM -- "-$CGI_PID" 2>/dev/null
	wait "$CGI_PID" 2>/dev/null
}

# cgi_locations ADDR [git=ROOT]: the nginx location blocks for CGI through
# the gateway at ADDR (127.0.0.1:PORT or unix:/path), one per line joined
# by a literal "\n" as fe_rewrite takes them, as docs/cgi.md quotes them:
# the stock params file first (CGI_NGINX_PARAMS: Debian's
# /etc/nginx/fastcgi_params as nginx-common installs it, which sets
# SCRIPT_NAME, DOCUMENT_ROOT, REMOTE_USER ... itself), then the location's
# own lines, which nginx sends after it: the gateway must take the last
# of a name.  /cgi-bin/ runs $document_root/cgi-bin/NAME for
# /cgi-bin/NAME/PATH_INFO (fcgiwrap's convention: SCRIPT_FILENAME is
# $document_root$fastcgi_script_name); with git=ROOT, /git/ is
# git-http-backend over the repositories in ROOT.  Both stream
# (fastcgi_buffering off) so a slow client's backpressure reaches the
# gateway.  Both name the gateway directly, not through an upstream with
# `keepalive`: nginx 1.22 with fastcgi_buffering off returns such a
# connection to its keepalive pool after END_REQUEST even without
# fastcgi_keep_conn (it never asked for FCGI_KEEP_CONN), and fcgiwrap
# closes it as the spec says: a request nginx sent on it meanwhile got a
# 502 (7 of 30 `git ls-remote`), and a POST is not retried.  fcgiwrap
# does not keep connections (with fastcgi_keep_conn on, 30 of 30 failed).
CGI_NGINX_PARAMS=${CGI_NGINX_PARAMS:-/etc/nginx/fastcgi_params}
cgi_locations() {
	local addr=$1 git="" v
	shift
	for v in "$@"; do
		case $v in
		git=*) git=${v#git=} ;;
		*) echo "cgi_locations: unknown option '$v'" >&2; return 2 ;;
		esac
	done
	{
		printf 'location /cgi-bin/ {\n\tfastcgi_pass %s;\n' "$addr"
		cgi_params
		cat <<'NGINX'
	fastcgi_buffering off;
	fastcgi_split_path_info ^(/cgi-bin/[^/]+)(/.*)$;
	fastcgi_param SCRIPT_FILENAME   $document_root$fastcgi_script_name;
	fastcgi_param SCRIPT_NAME       $fastcgi_script_name;
	fastcgi_param PATH_INFO         $fastcgi_path_info;
}
NGINX
		if [ -n "$git" ]; then
			printf 'location /git/ {\n\tfastcgi_pass %s;\n' "$addr"
			cgi_params
			cat <<NGINX
	fastcgi_buffering off;
	client_max_body_size 0;
	fastcgi_split_path_info ^(/git)(/.*)\$;
	fastcgi_param SCRIPT_FILENAME   $GIT_HTTP_BACKEND;
	fastcgi_param SCRIPT_NAME       /git;
	fastcgi_param PATH_INFO         \$fastcgi_path_info;
	fastcgi_param GIT_PROJECT_ROOT  $git;
	fastcgi_param GIT_HTTP_EXPORT_ALL 1;
}
NGINX
		fi
	} | awk '{ printf "%s%s", sep, $0; sep = "\\n" }'
}

# cgi_params: the rest of the CGI/1.1 parameters: `include
# $CGI_NGINX_PARAMS` as installed, or where there is none (an nginx not
# from Debian) its lines, as in nginx.conf.example's location /.
cgi_params() {
	if [ -r "$CGI_NGINX_PARAMS" ]; then
		printf '\tinclude %s;\n' "$CGI_NGINX_PARAMS"
		return
	fi
	echo "# cgi.sh: no $CGI_NGINX_PARAMS: its usual lines instead" >&2
	cat <<'NGINX'
	fastcgi_param QUERY_STRING      $query_string;
	fastcgi_param REQUEST_METHOD    $request_method;
	fastcgi_param CONTENT_TYPE      $content_type;
	fastcgi_param CONTENT_LENGTH    $content_length;
	fastcgi_param REQUEST_URI       $request_uri;
	fastcgi_param DOCUMENT_URI      $document_uri;
	fastcgi_param DOCUMENT_ROOT     $document_root;
	fastcgi_param SERVER_PROTOCOL   $server_protocol;
	fastcgi_param REQUEST_SCHEME    $scheme;
	fastcgi_param HTTPS             $https if_not_empty;
	fastcgi_param GATEWAY_INTERFACE CGI/1.1;
	fastcgi_param SERVER_SOFTWARE   nginx/$nginx_version;
	fastcgi_param REMOTE_ADDR       $remote_addr;
	fastcgi_param REMOTE_PORT       $remote_port;
	fastcgi_param SERVER_ADDR       $server_addr;
	fastcgi_param SERVER_PORT       $server_port;
	fastcgi_param SERVER_NAME       $server_name;
NGINX
}

# nginx_cgi_conf DIR PORT ADDR WWW [git=ROOT]: writes DIR/nginx.conf:
# nginx.conf.example as tests/frontends.sh makes it (port PORT, backend
# ADDR, paths in DIR) with `root WWW` and the CGI locations before its
# location /.
nginx_cgi_conf() {
	local dir=$1 port=$2 addr=$3 www=$4 locs
	shift 4
	nginx_conf "$dir" "$port" "$addr" || return 1
	locs=$(cgi_locations "$addr" "$@") || return 1
	{
		printf '%s\t%s\n' "server_name localhost;" "server_name localhost;\\nroot $www;"
		printf '%s\t%s\n' "location / {" "$locs\\nlocation / {"
	} >"$dir/nginx.cgi.rules"
	fe_rewrite "$dir/nginx.conf" "$dir/nginx.conf.cgi" "$dir/nginx.cgi.rules" &&
		mv "$dir/nginx.conf.cgi" "$dir/nginx.conf"
}

# start_cgi_nginx ADDR WWW [git=ROOT]: nginx_cgi_conf in a fresh directory
# under $T, on a free port, started; sets CGI_URL, CGI_FE_DIR and
# NGINX_PID.
start_cgi_nginx() {
	local port
	port=$(freeport)
	CGI_NO=$((CGI_NO + 1))
	CGI_FE_DIR=$T/nginx-cgi.$CGI_NO
	nginx_cgi_conf "$CGI_FE_DIR" "$port" "$@" && start_nginx "$CGI_FE_DIR" || return 1
	CGI_URL=http://127.0.0.1:$port
}

# stop_cgi_nginx: stops the nginx of start_cgi_nginx.
stop_cgi_nginx() {
	kill "$NGINX_PID" 2>/dev/null
	wait "$NGINX_PID" 2>/dev/null
}
