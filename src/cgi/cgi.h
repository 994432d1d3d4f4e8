/*
 * cgi.h: CGI programs (RFC 3875) run on the loop, fcgiwrap's job without
 * its stalls (`evfcgid --cgi`).  Each request runs the program its params
 * name; its body is fed to the program's stdin as it arrives, and its
 * stdout is read only while the connection's output has room, so a slow
 * client holds at most a watermark and a pipe buffer here while the
 * program waits in its own write().
 *
 * The parts: cgi_header.c parses a program's header block (pure, over
 * bytes), cgi_env.c builds its environment (pure, one allocation),
 * cgi_spawn.c opens and checks it and starts it, cgi.c runs requests,
 * children, limits and reaping on the loop, cgi_io.c moves the bytes.
 */
#ifndef CGI_H
#define CGI_H

#include <sys/types.h>

#include <stddef.h>

struct event_base;
struct evfcgi_server;

/* The PATH a program gets when the web server's params name none. */
#define CGI_SAFE_PATH		"/usr/local/bin:/usr/bin:/bin"
#define CGI_MAX_REDIRECTS	5	/* local redirects a request */

struct cgi_config {
	const char	*c_root;	/* programs must be inside; required */
	size_t		 c_max;		/* children at once */
	size_t		 c_queue;	/* requests waiting for a child slot */
	int		 c_timeout;	/* s per request; 0: none */
	int		 c_lifetime;	/* s of wall clock per request; 0: none */
	int		 c_write_timeout; /* s its output may wait for the
					   client with no progress; 0: none */
	size_t		 c_max_header;	/* bytes of a program's header block */
	size_t		 c_hold;	/* output held until the body ends */
	int		 c_grace;	/* s from SIGTERM to SIGKILL */
	int		 c_stderr_rate;	/* stderr lines logged a second, each */
	int		 c_argv;	/* an indexed query's words as argv */
	int		 c_reapers;	/* one per worker (1 without) */
	uid_t		 c_uid;		/* the programs' user; -1: as is */
	gid_t		 c_gid;
	int		 c_apart;	/* c_uid is not the daemon's user */
	size_t		 c_nproc;	/* RLIMIT_NPROC of a program; 0: as is */
	size_t		 c_pids;	/* pids.max of a program's cgroup;
					   0: no cgroups */
};

/* Fills cfg with the defaults --help documents. */
void	cgi_config_default(struct cgi_config *cfg);

struct cgi;

/*
 * Makes srv run CGI programs for every request (a streamed route for "/"
 * and the default route), per cfg (copied; c_root must stay valid).
 * From the first program started, the loop handles SIGCHLD and reaps
 * the process's children.  Returns the CGI engine, or NULL with a
 * message in err when the root cannot be resolved or out of memory.
 */
struct cgi *cgi_new(struct evfcgi_server *srv, struct event_base *base,
	    const struct cgi_config *cfg, char *err, size_t errlen);

/*
 * In worker slot (from 0) of n, cg (NULL: nothing) takes its share of
 * the totals --cgi-max and --cgi-queue: an nth each, the remainder to the
 * first slots.  Called once in each worker, before its loop runs; the
 * options made sure that c_max >= n.
 */
void	cgi_share(struct cgi *cg, int slot, int n);

/*
 * Ends what is left once the loop has stopped (after evfcgi_server_free(),
 * which ended the requests): programs still running get SIGTERM (SIGKILL
 * those being ended already), and the engine is freed.
 */
void	cgi_free(struct cgi *cg);

/* --- The header block of a program's output (cgi_header.c). --- */

/* One header field; name and value are not NUL-ended. */
struct cgi_field {
	const char	*f_name;
	size_t		 f_namelen;
	const char	*f_value;	/* blanks around it trimmed */
	size_t		 f_valuelen;
};

/*
 * Looks for the end of the header block at the start of buf: lines
 * "name: value" (name an HTTP token; value without control characters
 * but tab) ending in LF or CRLF, then an empty line.  *pos is where the
 * lines not yet checked begin: start at 0, keep it between calls as buf
 * grows.  Returns the block's length with its empty line, 0 when more is
 * needed (*pos moved past the lines checked), or -1 when malformed (*why
 * says how).
 */
long	cgi_header_scan(const char *buf, size_t len, size_t *pos,
	    const char **why);

/*
 * The field at *off (from 0) of a block cgi_header_scan() accepted (len:
 * its length).  Returns 1 with f set and *off moved on, 0 at its end.
 */
int	cgi_header_next(const char *buf, size_t len, size_t *off,
	    struct cgi_field *f);

/* What a header block asks for (RFC 3875 6.2). */
enum cgi_kind {
	CGI_DOCUMENT,		/* Content-Type and/or Status, a body */
	CGI_LOCAL_REDIRECT,	/* Location: /path, no Status: run that */
	CGI_CLIENT_REDIRECT	/* Location: absolute (302 unless Status) */
};

struct cgi_head {
	enum cgi_kind	 h_kind;
	int		 h_status;	/* the answer's status */
	const char	*h_reason;	/* Status's reason phrase, or NULL */
	size_t		 h_reasonlen;
	struct cgi_field h_ctype;	/* f_name NULL: none */
	struct cgi_field h_location;	/* f_name NULL: none */
	long long	 h_clen;	/* Content-Length, -1: none */
};

/*
 * Reads the CGI fields of a block cgi_header_scan() accepted.  Returns 0
 * with h filled, or -1 with *why: no Content-Type, Location or Status; a
 * Status that is not a 3-digit code from 100 to 599; a bad or repeated
 * CGI field; a bad Content-Length.
 */
int	cgi_header_read(const char *buf, size_t len, struct cgi_head *h,
	    const char **why);

/* Whether f's name is name, case-insensitively. */
int	cgi_field_is(const struct cgi_field *f, const char *name);

/* --- Local redirects (cgi_redirect.c). --- */

/*
 * The path of a local redirect's Location (loc, len bytes, the path
 * without its query), resolved as a server resolves a request's (RFC 3875
 * 6.2.2): each segment %-decoded, then dot segments removed (RFC 3986
 * 5.2.4).  Refused: a path not starting with '/', a bad escape, a
 * segment that decodes to a '/', a NUL or another control character, and
 * a ".." that would climb above "/".  Writes the path, NUL-ended, to out
 * (len + 1 bytes are enough).  Returns its length, or -1 with *why.
 */
long	cgi_local_path(const char *loc, size_t len, char *out,
	    const char **why);

/* --- The environment (cgi_env.c). --- */

struct evfcgi_req;

struct cgi_param {
	const char	*p_name;
	const char	*p_value;	/* NULL: unset (an override) */
};

/*
 * The CGI/1.1 environment (RFC 3875 4.1) for a program: the web server's
 * params (pv, n) as they came, then the overrides (over, nover; a NULL
 * value removes the name), a later name replacing an earlier, but for a
 * client's header (HTTP_*: nginx passes a repeated one as two params),
 * whose copies are joined in order, with "; " for HTTP_COOKIE, ", " for
 * the others, empty ones left out; then
 * GATEWAY_INTERFACE=CGI/1.1, QUERY_STRING= and PATH=CGI_SAFE_PATH when
 * absent.  Names that are empty or hold '=' are left out.  Nothing of the
 * caller's own environment.  Returns a NULL-ended array of "NAME=value",
 * sorted by name, in one allocation the caller free()s; NULL when out of
 * memory.
 */
char	**cgi_env_build(const struct cgi_param *pv, size_t n,
	    const struct cgi_param *over, size_t nover);

/*
 * The first name among pv (n params) that the gateway decides on and
 * that comes more than once, or NULL: the CGI/1.1 meta-variables (RFC
 * 3875 4.1) and DOCUMENT_ROOT, DOCUMENT_URI, REQUEST_URI and
 * SCRIPT_FILENAME.  The gateway reads the last of a name, as the
 * program's environment holds it; this only says so in the debug log.
 */
const char *cgi_param_dup(const struct cgi_param *pv, size_t n);

/*
 * The command line (RFC 3875 4.4) for a program at argv0 whose
 * environment is envp: argv0 alone, unless indexed is set and the
 * request is an indexed query, a GET or HEAD whose QUERY_STRING is a
 * search-string (words of unreserved, escaped and reserved characters
 * but "=", joined by single '+'); then each word, %-decoded, follows.
 * A query that is not one, a word that decodes to a NUL, or a word that
 * decodes to something starting with '-' (an option to the program: the
 * php-cgi CVE-2012-1823 class) adds nothing at all.  One allocation the
 * caller free()s; NULL when out of memory.
 */
char	**cgi_argv_build(const char *argv0, char *const envp[], int indexed);

/* --- Paths and processes (cgi_spawn.c). --- */

/* A program opened for running: what was checked is what runs. */
struct cgi_prog {
	int	 pr_fd;		/* the file (read-only, else O_PATH); -1: none */
	int	 pr_dir;	/* its directory (O_PATH): its working dir */
	char	*pr_real;	/* its resolved path */
	int	 pr_script;	/* it starts with "#!": fd 3 stays open for it */
};

/*
 * Opens the program at path for running.  path must be absolute and
 * resolve (realpath: symlinks, "..") inside the root: root (rootlen
 * bytes, resolved, no trailing '/'; "" for "/"), opened as rootfd.  Its
 * directory, then the file in it, are opened beneath rootfd with no
 * symbolic link on the way (openat2 RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS;
 * without openat2, O_NOFOLLOW and the descriptor's /proc/self/fd link
 * must be the resolved path), so that a file or directory swapped since
 * cannot lead out; then checked on the descriptor: a regular file this
 * process may execute.  Then opened read-only too where it may be read
 * (the same file, or refused).  Returns 0 with pr filled (close-on-exec
 * descriptors; cgi_prog_close() it),
 * or the status to answer (403, 404; 500 when out of memory, 503 out of
 * descriptors) with *why, pr holding nothing.
 */
int	cgi_open(int rootfd, const char *root, size_t rootlen,
	    const char *path, struct cgi_prog *pr, const char **why);

/* Closes what pr holds (none is fine); it then holds nothing. */
void	cgi_prog_close(struct cgi_prog *pr);

/* A started program: its pid (and process group) and the daemon's ends. */
struct cgi_proc {
	pid_t	 p_pid;
	int	 p_in;		/* its stdin: we write */
	int	 p_out;		/* its stdout: we read */
	int	 p_err;		/* its stderr: we read */
};

#endif /* CGI_H */
