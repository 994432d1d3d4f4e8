/*
 * blocking_fcgid: the control group of the slow-client experiment.  It is
 * meant to stall; it is not the product.
 *
 * This is the classic libfcgi application: FCGX_Init(), one listening
 * socket, N threads each looping over FCGX_Accept_r() (the accept
 * serialized by a mutex, as libfcgi's threaded.c example does), a handler
 * that writes its answer with blocking FCGX_PutStr() calls, FCGX_Finish_r().
 * It serves the same routes as evfcgid with byte-identical bodies, so the
 * two can be measured side by side behind the same front end.
 *
 * Why it exists: a write to a slow reader blocks once the kernel's socket
 * buffers on both sides are full, and the thread doing it is pinned there
 * for as long as the client takes.  With one thread a single slow client
 * stalls every other request; with N threads, N slow clients do.  evfcgid
 * claims to avoid exactly this, and the experiment proves nothing unless
 * this program shows the stall in the same run.
 *
 * One deliberate difference from threaded.c: the accept mutex is taken
 * only when a new connection has to be accepted.  A thread waiting for the
 * next request on a kept-alive connection (FCGI_KEEP_CONN, nginx's
 * fastcgi_keep_conn) would otherwise hold the mutex while it sleeps and
 * starve every other thread, which would stall the control group for a
 * reason that has nothing to do with slow clients.
 */
#include <sys/types.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>

#include <netinet/in.h>

#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <netdb.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <fcgiapp.h>

#include "config.h"
#include "app.h"

#define PROG		"blocking_fcgid"
#define PATTERN_PERIOD	64
#define WRITE_CHUNK	65536		/* largest single FCGX_PutStr */
#define STREAM_CHUNK	16384		/* /stream makes its body this big a piece */
#define MAX_SIZE	1073741824ULL	/* largest /size?N and /stream?N (1 GiB) */
#define MAX_BODY	(64UL * 1024 * 1024)	/* largest /echo body, as evfcgid */
#define SLEEP_MAX_MS	3600000
#define MAX_THREADS	1024
#define BACKLOG		1024
#define PATH_MAX_LEN	512

_Static_assert(sizeof(APP_PATTERN_LINE) - 1 == PATTERN_PERIOD,
    "the pattern line is one period long");

/* One request being answered: what the routes need, and what they did. */
struct job {
	FCGX_Request	*j_req;
	const char	*j_query;	/* QUERY_STRING, "" when absent */
	int		 j_status;	/* the status sent, for the log */
	uint64_t	 j_bytes;	/* body bytes written */
};

struct route {
	const char	*rt_path;
	int		(*rt_fn)(struct job *);
};

static void	usage(FILE *);
static int	parse_args(int, char **, const char **);
static void	on_term(int);
static int	parse_count(const char *, uint64_t *);
static int	open_listener(const char *);
static int	listen_inet(const char *, const char *, const char *);
static int	listen_unix(const char *, const char *);
static void	check_fd0(void);
static void	*worker(void *);
static void	serve(FCGX_Request *);
static const char *status_text(int);
static int	put(struct job *, const void *, size_t);
static int	send_header(struct job *, int, const char *, uint64_t);
static int	respond(struct job *, int, const char *, const void *, size_t);
static int	respond_error(struct job *, int, const char *);
static int	check_content_length(struct job *);
static int	send_pattern(struct job *, uint64_t);
static int	sized_query(struct job *, uint64_t *);
static int	route_hello(struct job *);
static int	route_big(struct job *);
static int	route_size(struct job *);
static int	route_stream(struct job *);
static int	route_echo(struct job *);
static int	route_sleep(struct job *);
static int	route_status(struct job *);

static const struct route routes[] = {
	{ "/hello",	route_hello },
	{ "/big",	route_big },
	{ "/size",	route_size },
	{ "/stream",	route_stream },
	{ "/echo",	route_echo },
	{ "/sleep",	route_sleep },
	{ "/status",	route_status },
};

static const struct option longopts[] = {
	{ "listen",	required_argument, NULL, 'l' },
	{ "threads",	required_argument, NULL, 't' },
	{ "verbose",	no_argument,	   NULL, 'v' },
	{ "help",	no_argument,	   NULL, 'h' },
	{ "version",	no_argument,	   NULL, 'V' },
	{ NULL, 0, NULL, 0 }
};

/*
 * One period more than the largest write, so that a write starting
 * anywhere in the period is one contiguous run of this buffer.
 */
static char			pattern[WRITE_CHUNK + PATTERN_PERIOD];
static pthread_mutex_t		accept_mutex = PTHREAD_MUTEX_INITIALIZER;
static int			listen_fd = -1;
static int			nthreads = 1;
static int			verbose;
static char			unix_path[sizeof(((struct sockaddr_un *)0)->sun_path)];
static atomic_uint_fast64_t	nrequests;	/* accepted since start */
static atomic_uint_fast64_t	nactive;	/* being answered now */

/* Prints the usage text, which says what this program is for, to f. */
static void
usage(FILE *f)
{
	fprintf(f,
"usage: " PROG " [-t N] [--listen ADDR] [-v]\n"
"The blocking control group of the slow-client experiment: the classic\n"
"libfcgi loop (FCGX_Accept_r, blocking FCGX_PutStr writes, FCGX_Finish_r)\n"
"on 1..N threads, serving evfcgid's demo routes with the same bytes.  A\n"
"slow client pins a thread in a blocking write once the kernel's socket\n"
"buffers fill; with -t 1 one slow client stalls everyone.  Not the product.\n"
"\n"
"  -t, --threads N     threads that accept and answer (default 1, at most %d);\n"
"                      1: the main thread alone, no extra threads\n"
"  -l, --listen ADDR   HOST:PORT, [V6]:PORT or unix:/path; without it, fd 0\n"
"                      must be a listening socket (spawn-fcgi convention)\n"
"  -v, --verbose       one line per request on stderr\n"
"  -h, --help          this text\n"
"  -V, --version       the version\n"
"\n"
"Routes: /hello, /big (96256 bytes), /size?N and /stream?N (N bytes, at\n"
"most 1 GiB), /echo (the request body back), /sleep?MS (blocks the thread),\n"
"/status (JSON: pid, threads, requests, active); anything else is 404.\n"
"Exit status: 0 on SIGTERM/SIGINT, 1 when it cannot listen, 2 on usage errors.\n",
	    MAX_THREADS);
}

/* SIGTERM/SIGINT: remove our unix socket file and end at once, status 0. */
static void
on_term(int sig)
{
	(void)sig;
	if (unix_path[0] != '\0')
		unlink(unix_path);
	_exit(0);
}

/* Parses a plain decimal count.  Returns 0, or -1 when s is not one. */
static int
parse_count(const char *s, uint64_t *out)
{
	char			*end;
	unsigned long long	 n;

	if (*s < '0' || *s > '9' || strlen(s) > 20)
		return -1;
	errno = 0;
	n = strtoull(s, &end, 10);
	if (errno != 0 || *end != '\0')
		return -1;
	*out = n;
	return 0;
}

/*
 * Opens the listening socket described by spec (HOST:PORT, [V6]:PORT,
 * unix:/path).  Returns the descriptor; exits 2 when spec is malformed and
 * 1 when it cannot be listened on.
 */
static int
open_listener(const char *spec)
{
	char		 host[256];
	const char	*hstart, *port, *end;
	size_t		 hlen;
	uint64_t	 n;

	if (strncmp(spec, "unix:", 5) == 0)
		return listen_unix(spec + 5, spec);
	if (spec[0] == '[') {
		if ((end = strchr(spec, ']')) == NULL || end[1] != ':')
			goto bad;
		hlen = (size_t)(end - spec - 1);
		hstart = spec + 1;
		port = end + 2;
		if (hlen == 0)
			goto bad;
	} else {
		if ((end = strrchr(spec, ':')) == NULL || strchr(spec, ':') != end)
			goto bad;
		hlen = (size_t)(end - spec);
		hstart = spec;
		port = end + 1;
	}
	if (hlen >= sizeof(host) || parse_count(port, &n) == -1 || n == 0 ||
	    n > 65535)
		goto bad;
	memcpy(host, hstart, hlen);
	host[hlen] = '\0';
	return listen_inet(strcmp(host, "*") == 0 ? "" : host, port, spec);
bad:
	fprintf(stderr, PROG ": bad --listen address '%s' (expected HOST:PORT, "
	    "[V6]:PORT or unix:/path)\n", spec);
	exit(2);
}

/*
 * Binds and listens on host:port (host "" for every address).  Returns the
 * descriptor; exits 1 with a message naming spec when that fails.
 */
static int
listen_inet(const char *host, const char *port, const char *spec)
{
	struct addrinfo	 hints, *res, *ai;
	int		 fd = -1, on = 1, rc, err = 0;

	memset(&hints, 0, sizeof(hints));
	hints.ai_family = AF_UNSPEC;
	hints.ai_socktype = SOCK_STREAM;
	hints.ai_flags = AI_PASSIVE | AI_NUMERICSERV;
	if ((rc = getaddrinfo(host[0] != '\0' ? host : NULL, port, &hints,
	    &res)) != 0) {
		fprintf(stderr, PROG ": cannot listen on %s: %s\n", spec,
		    gai_strerror(rc));
		exit(1);
	}
	for (ai = res; ai != NULL; ai = ai->ai_next) {
		if ((fd = socket(ai->ai_family, ai->ai_socktype | SOCK_CLOEXEC,
		    ai->ai_protocol)) == -1) {
			err = errno;
			continue;
		}
		setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &on, sizeof(on));
		if (bind(fd, ai->ai_addr, ai->ai_addrlen) == 0 &&
		    listen(fd, BACKLOG) == 0)
			break;
		err = errno;
		close(fd);
		fd = -1;
	}
	freeaddrinfo(res);
	if (fd == -1) {
		fprintf(stderr, PROG ": cannot listen on %s: %s\n", spec,
		    strerror(err));
		exit(1);
	}
	return fd;
}

/*
 * Binds and listens on the unix socket path, first removing a stale socket
 * file left by a dead server (one that refuses connections).  Returns the
 * descriptor; exits 1 when that fails, 2 when the path is too long.
 */
static int
listen_unix(const char *path, const char *spec)
{
	struct sockaddr_un	 sun;
	struct stat		 st;
	int			 fd, probe;

	memset(&sun, 0, sizeof(sun));
	sun.sun_family = AF_UNIX;
	if (path[0] == '\0' || strlen(path) >= sizeof(sun.sun_path)) {
		fprintf(stderr, PROG ": bad --listen address '%s' (empty or too "
		    "long a path)\n", spec);
		exit(2);
	}
	strcpy(sun.sun_path, path);
	if (lstat(path, &st) == 0) {
		if (!S_ISSOCK(st.st_mode)) {
			fprintf(stderr, PROG ": cannot listen on %s: the file "
			    "exists and is not a socket\n", spec);
			exit(1);
		}
		if ((probe = socket(AF_UNIX, SOCK_STREAM, 0)) != -1) {
			if (connect(probe, (struct sockaddr *)&sun,
			    sizeof(sun)) == 0) {
				fprintf(stderr, PROG ": cannot listen on %s: "
				    "a server is listening there\n", spec);
				exit(1);
			}
			close(probe);
		}
		unlink(path);
	}
	if ((fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0)) == -1 ||
	    bind(fd, (struct sockaddr *)&sun, sizeof(sun)) == -1 ||
	    listen(fd, BACKLOG) == -1) {
		fprintf(stderr, PROG ": cannot listen on %s: %s\n", spec,
		    strerror(errno));
		exit(1);
	}
	strcpy(unix_path, path);
	return fd;
}

/* Without --listen, fd 0 must be a listening socket; else exits 2. */
static void
check_fd0(void)
{
	struct stat	 st;
	socklen_t	 len = sizeof(int);
	int		 acc = 0;

	if (fstat(0, &st) == -1 || !S_ISSOCK(st.st_mode) ||
	    getsockopt(0, SOL_SOCKET, SO_ACCEPTCONN, &acc, &len) == -1 ||
	    acc == 0) {
		fprintf(stderr, PROG ": no --listen given and fd 0 is not a "
		    "listening socket; use --listen ADDR or start it under "
		    "spawn-fcgi\n");
		exit(2);
	}
}

/*
 * A thread's life: accept a request (under the mutex when that means a new
 * connection), answer it, finish it, forever.  Exits the process only when
 * the listening socket itself is broken; a failed request never does.
 */
static void *
worker(void *arg)
{
	FCGX_Request	 req;
	int		 rc, locked;

	(void)arg;
	if (FCGX_InitRequest(&req, listen_fd, 0) != 0) {
		fprintf(stderr, PROG ": FCGX_InitRequest failed\n");
		exit(1);
	}
	for (;;) {
		locked = req.ipcFd < 0;
		if (locked)
			pthread_mutex_lock(&accept_mutex);
		rc = FCGX_Accept_r(&req);
		if (locked)
			pthread_mutex_unlock(&accept_mutex);
		if (rc < 0) {
			/* Out of descriptors or memory: wait, do not spin. */
			if (rc == -EMFILE || rc == -ENFILE || rc == -ENOBUFS ||
			    rc == -ENOMEM || rc == -EINTR || rc == -EAGAIN) {
				usleep(100000);
				continue;
			}
			fprintf(stderr, PROG ": accept failed: %s\n",
			    rc > -4096 ? strerror(-rc) : "libfcgi error");
			exit(1);
		}
		atomic_fetch_add(&nrequests, 1);
		atomic_fetch_add(&nactive, 1);
		serve(&req);
		FCGX_Finish_r(&req);
		atomic_fetch_sub(&nactive, 1);
	}
	return NULL;
}

/*
 * Answers one accepted request by its route.  A write that fails (the
 * client went away) ends this request early and nothing else.
 */
static void
serve(FCGX_Request *req)
{
	struct job	 j;
	const char	*uri, *q, *sn, *pi;
	char		 path[PATH_MAX_LEN];
	size_t		 i;
	int		 n, rc = 0;

	memset(&j, 0, sizeof(j));
	j.j_req = req;
	if ((j.j_query = FCGX_GetParam("QUERY_STRING", req->envp)) == NULL)
		j.j_query = "";
	if ((uri = FCGX_GetParam("REQUEST_URI", req->envp)) != NULL) {
		q = strchr(uri, '?');
		n = snprintf(path, sizeof(path), "%.*s",
		    (int)(q != NULL ? (size_t)(q - uri) : strlen(uri)), uri);
	} else {
		sn = FCGX_GetParam("SCRIPT_NAME", req->envp);
		pi = FCGX_GetParam("PATH_INFO", req->envp);
		n = snprintf(path, sizeof(path), "%s%s", sn != NULL ? sn : "",
		    pi != NULL ? pi : "");
	}
	if (n < 0 || (size_t)n >= sizeof(path))
		path[0] = '\0';		/* longer than any route: a 404 */

	if (check_content_length(&j) == 0) {
		for (i = 0; i < sizeof(routes) / sizeof(routes[0]); i++)
			if (strcmp(path, routes[i].rt_path) == 0)
				break;
		if (i < sizeof(routes) / sizeof(routes[0]))
			rc = routes[i].rt_fn(&j);
		else
			rc = respond_error(&j, 404, NULL);
	}
	if (verbose)
		fprintf(stderr, PROG ": %s%s%s -> %d, %" PRIu64 " bytes%s\n",
		    path, j.j_query[0] != '\0' ? "?" : "", j.j_query,
		    j.j_status, j.j_bytes, rc == -1 ? ", client gone" : "");
}

/* The reason phrase evfcgid uses for status; a static string. */
static const char *
status_text(int status)
{
	switch (status) {
	case 200:
		return "OK";
	case 400:
		return "Bad Request";
	case 404:
		return "Not Found";
	case 413:
		return "Content Too Large";
	case 503:
		return "Service Unavailable";
	default:
		return "Unknown";
	}
}

/*
 * Writes len bytes to the request's STDOUT, blocking as long as the peer
 * takes to read.  Returns 0, or -1 when the stream failed (peer gone).
 */
static int
put(struct job *j, const void *buf, size_t len)
{
	if (len == 0)
		return 0;
	if (FCGX_PutStr(buf, (int)len, j->j_req->out) != (int)len)
		return -1;
	return 0;
}

/* Writes the CGI header block.  Returns 0, or -1 when the peer is gone. */
static int
send_header(struct job *j, int status, const char *ctype, uint64_t len)
{
	char	 buf[256];
	int	 n;

	j->j_status = status;
	n = snprintf(buf, sizeof(buf), "Status: %d %s\r\nContent-Type: %s\r\n"
	    "Content-Length: %" PRIu64 "\r\n\r\n", status, status_text(status),
	    ctype, len);
	return put(j, buf, (size_t)n);
}

/* A whole small answer.  Returns 0, or -1 when the peer is gone. */
static int
respond(struct job *j, int status, const char *ctype, const void *body,
    size_t len)
{
	if (send_header(j, status, ctype, len) == -1 || put(j, body, len) == -1)
		return -1;
	j->j_bytes = len;
	return 0;
}

/*
 * The error answer evfcgid gives: "STATUS TEXT: detail\n" (no ": detail"
 * when detail is NULL), text/plain.  Returns 0, or -1 when the peer is gone.
 */
static int
respond_error(struct job *j, int status, const char *detail)
{
	char	 body[256];
	int	 n;

	n = snprintf(body, sizeof(body), "%d %s%s%s\n", status,
	    status_text(status), detail != NULL ? ": " : "",
	    detail != NULL ? detail : "");
	if (n < 0 || (size_t)n >= sizeof(body))
		n = (int)strlen(body);
	return respond(j, status, "text/plain", body, (size_t)n);
}

/*
 * Rejects a malformed CONTENT_LENGTH (400) or one above MAX_BODY (413), as
 * evfcgid does for every route.  Returns 0 when the request may go on, 1
 * when it was answered, -1 when the peer is gone.
 */
static int
check_content_length(struct job *j)
{
	const char	*cl;
	uint64_t	 n;

	cl = FCGX_GetParam("CONTENT_LENGTH", j->j_req->envp);
	if (cl == NULL || *cl == '\0')
		return 0;
	if (parse_count(cl, &n) == -1)
		return respond_error(j, 400, "bad CONTENT_LENGTH") == -1 ? -1 : 1;
	if (n > MAX_BODY)
		return respond_error(j, 413, "request body above the limit") ==
		    -1 ? -1 : 1;
	return 0;
}

/*
 * Writes total bytes of the pattern, in writes of up to WRITE_CHUNK taken
 * from the static buffer.  Returns 0, or -1 when the peer is gone.
 */
static int
send_pattern(struct job *j, uint64_t total)
{
	uint64_t	 pos = 0;
	size_t		 n;

	while (pos < total) {
		n = total - pos < WRITE_CHUNK ? (size_t)(total - pos) :
		    WRITE_CHUNK;
		if (put(j, pattern + pos % PATTERN_PERIOD, n) == -1)
			return -1;
		pos += n;
		j->j_bytes = pos;
	}
	return 0;
}

/*
 * Reads N from the query of /size and /stream.  Returns 0 with *n set, 1
 * when it answered 400 or 413 itself, -1 when the peer is gone.
 */
static int
sized_query(struct job *j, uint64_t *n)
{
	char	 detail[96];

	if (parse_count(j->j_query, n) == -1)
		return respond_error(j, 400, "expected a byte count: ?N") ==
		    -1 ? -1 : 1;
	if (*n > MAX_SIZE) {
		snprintf(detail, sizeof(detail), "%" PRIu64 " bytes is above "
		    "the limit of %llu", *n, MAX_SIZE);
		return respond_error(j, 413, detail) == -1 ? -1 : 1;
	}
	return 0;
}

/* Route contract: answer the request; 0 when done, -1 when the peer left. */
static int
route_hello(struct job *j)
{
	static const char	 hello[] = "Hello World\n";

	return respond(j, 200, "text/plain", hello, sizeof(hello) - 1);
}

static int
route_big(struct job *j)
{
	if (send_header(j, 200, "text/plain", APP_BIG_SIZE) == -1)
		return -1;
	return send_pattern(j, APP_BIG_SIZE);
}

static int
route_size(struct job *j)
{
	uint64_t	 n;
	int		 rc;

	if ((rc = sized_query(j, &n)) != 0)
		return rc == -1 ? -1 : 0;
	if (send_header(j, 200, "text/plain", n) == -1)
		return -1;
	return send_pattern(j, n);
}

/* /size's bytes, but each piece made fresh, as a generator would. */
static int
route_stream(struct job *j)
{
	char		 chunk[STREAM_CHUNK];
	uint64_t	 n, pos;
	size_t		 i, len;
	int		 rc;

	if ((rc = sized_query(j, &n)) != 0)
		return rc == -1 ? -1 : 0;
	if (send_header(j, 200, "text/plain", n) == -1)
		return -1;
	for (pos = 0; pos < n; pos += len) {
		len = n - pos < STREAM_CHUNK ? (size_t)(n - pos) : STREAM_CHUNK;
		for (i = 0; i < len; i++)
			chunk[i] = APP_PATTERN_LINE[(pos + i) % PATTERN_PERIOD];
		if (put(j, chunk, len) == -1)
			return -1;
		j->j_bytes = pos + len;
	}
	return 0;
}

/*
 * The request body back.  It is read whole first (at most MAX_BODY, as
 * evfcgid), since the length goes in the header and a front end may send
 * the whole body before it reads any of the answer.
 */
static int
route_echo(struct job *j)
{
	FCGX_Stream	*in = j->j_req->in;
	const char	*cl;
	char		*buf, *nb, trash[4096];
	uint64_t	 hint = 0;
	size_t		 len = 0, cap, want, off;
	int		 got, c, rc;

	/* check_content_length() has seen to it that the hint is sane. */
	cl = FCGX_GetParam("CONTENT_LENGTH", j->j_req->envp);
	if (cl == NULL || parse_count(cl, &hint) == -1)
		hint = 0;
	cap = hint < 4096 ? 4096 : hint > MAX_BODY ? MAX_BODY : (size_t)hint;
	if ((buf = malloc(cap)) == NULL)
		return respond_error(j, 503, "out of memory");
	for (;;) {
		want = cap - len < WRITE_CHUNK ? cap - len : WRITE_CHUNK;
		got = FCGX_GetStr(buf + len, (int)want, in);
		if (got > 0)
			len += (size_t)got;
		if (got < (int)want)
			break;			/* end of the body */
		if (len < cap)
			continue;
		if ((c = FCGX_GetChar(in)) == EOF)
			break;			/* exactly as announced */
		if (cap == MAX_BODY) {
			while (FCGX_GetStr(trash, sizeof(trash), in) > 0)
				;
			free(buf);
			return respond_error(j, 413,
			    "request body above the limit");
		}
		cap = cap * 2 < MAX_BODY ? cap * 2 : MAX_BODY;
		if ((nb = realloc(buf, cap)) == NULL) {
			free(buf);
			return respond_error(j, 503, "out of memory");
		}
		buf = nb;
		buf[len++] = (char)c;
	}
	rc = send_header(j, 200, "application/octet-stream", len);
	for (off = 0; rc == 0 && off < len; off += want) {
		want = len - off < WRITE_CHUNK ? len - off : WRITE_CHUNK;
		rc = put(j, buf + off, want);
		j->j_bytes = off + want;
	}
	free(buf);
	return rc;
}

/* Blocks this thread for MS ms: the point of this backend. */
static int
route_sleep(struct job *j)
{
	struct timespec	 ts;
	uint64_t	 ms;
	char		 msg[48];
	int		 n;

	if (parse_count(j->j_query, &ms) == -1 || ms > SLEEP_MAX_MS)
		return respond_error(j, 400,
		    "expected milliseconds: ?MS, at most 3600000");
	ts.tv_sec = (time_t)(ms / 1000);
	ts.tv_nsec = (long)(ms % 1000) * 1000000L;
	while (nanosleep(&ts, &ts) == -1 && errno == EINTR)
		;
	n = snprintf(msg, sizeof(msg), "slept %" PRIu64 " ms\n", ms);
	return respond(j, 200, "text/plain", msg, (size_t)n);
}

static int
route_status(struct job *j)
{
	char	 buf[256];
	int	 n;

	n = snprintf(buf, sizeof(buf), "{\"pid\":%d,\"threads\":%d,"
	    "\"requests\":%" PRIu64 ",\"active\":%" PRIu64 "}\n",
	    (int)getpid(), nthreads, (uint64_t)atomic_load(&nrequests),
	    (uint64_t)atomic_load(&nactive));
	return respond(j, 200, "application/json", buf, (size_t)n);
}

/*
 * Reads the command line into nthreads, verbose and *listen_spec.
 * Returns -1 to go on, else the status to exit with (0 after --help or
 * --version, 2 for a bad flag or value).
 */
static int
parse_args(int argc, char **argv, const char **listen_spec)
{
	uint64_t	 n;
	int		 ch;

	while ((ch = getopt_long(argc, argv, "l:t:vhV", longopts, NULL)) !=
	    -1) {
		switch (ch) {
		case 'l':
			if (*listen_spec != NULL) {
				fprintf(stderr, PROG ": --listen given twice "
				    "(one listener only)\n");
				return 2;
			}
			*listen_spec = optarg;
			break;
		case 't':
			if (parse_count(optarg, &n) == -1 || n < 1 ||
			    n > MAX_THREADS) {
				fprintf(stderr, PROG ": bad thread count '%s' "
				    "for -t/--threads (1 to %d)\n", optarg,
				    MAX_THREADS);
				return 2;
			}
			nthreads = (int)n;
			break;
		case 'v':
			verbose = 1;
			break;
		case 'h':
			usage(stdout);
			return 0;
		case 'V':
			printf(PROG " %s (evfcgid's blocking control group, "
			    "libfcgi)\n", PACKAGE_VERSION);
			return 0;
		default:
			fprintf(stderr, "Try '" PROG " --help'.\n");
			return 2;
		}
	}
	if (optind < argc) {
		fprintf(stderr, PROG ": unexpected argument '%s'\n"
		    "Try '" PROG " --help'.\n", argv[optind]);
		return 2;
	}
	return -1;
}

int
main(int argc, char **argv)
{
	struct sigaction	 sa;
	pthread_t		 tid;
	const char		*listen_spec = NULL;
	size_t			 i;
	int			 rc;

	if ((rc = parse_args(argc, argv, &listen_spec)) != -1)
		return rc;
	for (i = 0; i < sizeof(pattern); i++)
		pattern[i] = APP_PATTERN_LINE[i % PATTERN_PERIOD];

	/* Before FCGX_Init, which installs its own SIGPIPE handler only
	 * where the disposition is still the default. */
	signal(SIGPIPE, SIG_IGN);
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_term;
	sigemptyset(&sa.sa_mask);
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGINT, &sa, NULL);

	if (listen_spec != NULL)
		listen_fd = open_listener(listen_spec);
	else {
		check_fd0();
		listen_fd = 0;
	}
	if ((rc = FCGX_Init()) != 0) {
		fprintf(stderr, PROG ": FCGX_Init failed (%d)\n", rc);
		return 1;
	}
	if (verbose)
		fprintf(stderr, PROG ": listening on %s, %d thread%s\n",
		    listen_spec != NULL ? listen_spec : "fd 0", nthreads,
		    nthreads == 1 ? "" : "s");

	for (i = 1; i < (size_t)nthreads; i++) {
		if ((rc = pthread_create(&tid, NULL, worker, NULL)) != 0) {
			fprintf(stderr, PROG ": cannot start thread: %s\n",
			    strerror(rc));
			return 1;
		}
		pthread_detach(tid);
	}
	worker(NULL);
	return 0;
}
