/*
 * response.c: what a request answers: the CGI header block (status,
 * Content-Type, Content-Length, the handler's header lines), the body by
 * copy, by reference, from a file or from a producer, and the end.  Each
 * goes as STDOUT records into the connection's output buffer through
 * fcgi_out; a failure to queue breaks the stream (the req_link's ops).
 */
#include <sys/types.h>

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>
#include <unistd.h>

#include <event2/buffer.h>
#include <event2/event.h>

#include "fcgi_out.h"
#include "fcgi_proto.h"
#include "log.h"
#include "req_struct.h"

static int	req_fd_produce(struct evfcgi_req *, size_t, void *);
static int	hdr_token(const char *);
static int	hdr_value_bad(const char *);
static int	hdr_variable_bad(const char *);
static int	hdr_variable_reserved(const char *);
static int	req_can_write(struct evfcgi_req *);
static int	req_out(struct evfcgi_req *, int);
static int	req_finish(struct evfcgi_req *, int);
static int	req_body_writable(struct evfcgi_req *, size_t);
static inline int req_admit(struct evfcgi_req *, size_t);
static int	req_admit_over(struct evfcgi_req *, uint64_t);
static void	hdr_drop(struct req_buf *, const char *);
static int	req_head_out(struct evfcgi_req *, int, const char *,
		    const char *, long long, const void *, size_t);
static int	req_engine_page(struct evfcgi_req *, int, const char *);

/* RFC 9110 section 15, and 429/431 (RFC 6585), 451 (RFC 7725). */
static const struct {
	int		 st_code;
	const char	*st_text;
} req_statuses[] = {
	{ 100, "Continue" },
	{ 101, "Switching Protocols" },
	{ 200, "OK" },
	{ 201, "Created" },
	{ 202, "Accepted" },
	{ 203, "Non-Authoritative Information" },
	{ 204, "No Content" },
	{ 205, "Reset Content" },
	{ 206, "Partial Content" },
	{ 300, "Multiple Choices" },
	{ 301, "Moved Permanently" },
	{ 302, "Found" },
	{ 303, "See Other" },
	{ 304, "Not Modified" },
	{ 305, "Use Proxy" },
	{ 307, "Temporary Redirect" },
	{ 308, "Permanent Redirect" },
	{ 400, "Bad Request" },
	{ 401, "Unauthorized" },
	{ 402, "Payment Required" },
	{ 403, "Forbidden" },
	{ 404, "Not Found" },
	{ 405, "Method Not Allowed" },
	{ 406, "Not Acceptable" },
	{ 407, "Proxy Authentication Required" },
	{ 408, "Request Timeout" },
	{ 409, "Conflict" },
	{ 410, "Gone" },
	{ 411, "Length Required" },
	{ 412, "Precondition Failed" },
	{ 413, "Content Too Large" },
	{ 414, "URI Too Long" },
	{ 415, "Unsupported Media Type" },
	{ 416, "Range Not Satisfiable" },
	{ 417, "Expectation Failed" },
	{ 421, "Misdirected Request" },
	{ 422, "Unprocessable Content" },
	{ 426, "Upgrade Required" },
	{ 428, "Precondition Required" },
	{ 429, "Too Many Requests" },
	{ 431, "Request Header Fields Too Large" },
	{ 451, "Unavailable For Legal Reasons" },
	{ 500, "Internal Server Error" },
	{ 501, "Not Implemented" },
	{ 502, "Bad Gateway" },
	{ 503, "Service Unavailable" },
	{ 504, "Gateway Timeout" },
	{ 505, "HTTP Version Not Supported" },
};

const char *
req_status_text(int status)
{
	size_t	 i;

	for (i = 0; i < sizeof(req_statuses) / sizeof(req_statuses[0]); i++)
		if (req_statuses[i].st_code == status)
			return req_statuses[i].st_text;
	return "Unknown";
}

/*
 * Whether r may still queue output: answering, its stream intact, and not
 * in the middle of the engine's own end or answer of it (r_app_locked).
 */
static int
req_can_write(struct evfcgi_req *r)
{
	return req_answerable(r) && !r->r_link->rl_broken &&
	    !r->r_app_locked;
}

/*
 * Checks what an fcgi_out call returned: on -1 the connection's stream may
 * hold a cut record, so the connection is told to close.  Returns rc.
 */
static int
req_out(struct evfcgi_req *r, int rc)
{
	struct req_link	*l = r->r_link;

	if (rc == -1 && !l->rl_broken) {
		l->rl_broken = 1;
		l->rl_env->re_ops->ro_failed(l->rl_owner,
		    "out of memory queueing output");
	}
	return rc;
}

void
req_link_cut(struct req_link *l)
{
	if (!l->rl_cut && !l->rl_broken &&
	    fcgi_out_cut(&l->rl_out) == -1)
		l->rl_env->re_ops->ro_failed(l->rl_owner,
		    "out of memory queueing output");
	l->rl_cut = 1;
	l->rl_broken = 1;
}

#define RESP_HEAD_MAX	1024	/* the engine's header lines (req_head_out) */

/*
 * Whether len body bytes that r writes in one call may be queued under
 * the output cap (budget_admit(), what the stage holds counted too).  A
 * producer's writes pass: its room and the budget's waits pace them, at
 * most a call's worth past (evfcgi_producer); so do the writes of an
 * answer evfcgi_respond() admitted whole, the 503 page of one refused
 * here (r_admitted), and nothing (len 0).  A header block is
 * not refused alone (evfcgi_respond() counts it with its body): an
 * application that ignores evfcgi_header()'s -1 would end its answer
 * without one.
 */
static inline int
req_admit(struct evfcgi_req *r, size_t len)
{
	const struct fcgi_out	*o = &r->r_link->rl_out;
	const struct budget	*b = r->r_link->rl_env->re_output;
	size_t			 staged;

	if (b == NULL || len == 0 || r->r_admitted || r->r_link->rl_prod == r)
		return 1;
	staged = o->fo_stage != NULL ? o->fo_stage->fs_len : 0;
	/* Under the cap with it all: the common case, at no call's cost. */
	if (b->b_queued + staged + len <= b->b_cap)
		return 1;
	return req_admit_over(r, (uint64_t)staged + len);
}

/*
 * req_admit() past the cap: whether budget_admit() lets len more bytes
 * (the stage's included) in; a refusal is logged, at most a line a
 * second (peers that never read come in floods).
 */
static int
req_admit_over(struct evfcgi_req *r, uint64_t len)
{
	static time_t	 said;
	static size_t	 quiet;
	struct budget	*b = r->r_link->rl_env->re_output;
	time_t		 now;

	if (budget_admit(b, len))
		return 1;
	if ((now = time(NULL)) != said) {
		log_warn("%s: request %u: %llu bytes of output refused: %llu "
		    "queued in all, the cap %llu (--max-queued)%s",
		    r->r_link->rl_peer, r->r_h.h_id, (unsigned long long)len,
		    (unsigned long long)b->b_queued,
		    (unsigned long long)b->b_cap, quiet > 0 ?
		    " (and others since the last line)" : "");
		said = now;
		quiet = 0;
	} else
		quiet++;
	return 0;
}

/* Appends n bytes of s to b at *off; -1 (nothing appended) past len. */
static int
hdr_put(char *b, size_t len, size_t *off, const char *s, size_t n)
{
	if (n > len - *off)
		return -1;
	memcpy(b + *off, s, n);
	*off += n;
	return 0;
}

/* Appends v in decimal, as hdr_put. */
static int
hdr_num(char *b, size_t len, size_t *off, long long v)
{
	char			 d[24];
	size_t			 i = sizeof(d);
	unsigned long long	 u = v < 0 ? 0 - (unsigned long long)v :
	    (unsigned long long)v;

	do
		d[--i] = (char)('0' + u % 10);
	while ((u /= 10) > 0);
	if (v < 0)
		d[--i] = '-';
	return hdr_put(b, len, off, d + i, sizeof(d) - i);
}

/* Into req_head_out()'s buf, keeping 2 bytes for the block's last CRLF. */
#define HDR_PUT(s)	hdr_put(buf, sizeof(buf) - 2, &n, s, strlen(s))
#define HDR_MAX		65536	/* bytes of evfcgi_header_add() lines */
#define AUTH_ONE_RECORD	8192	/* an authorizer's body sent with its header */
#define ERRPAGE_CTYPE_MAX 256	/* an error page maker's Content-Type */

/* Whether s is an HTTP token (RFC 9110 5.6.2), not empty. */
static int
hdr_token(const char *s)
{
	static const char	 tchar[] = "!#$%&'*+-.^_`|~";

	if (*s == '\0')
		return 0;
	for (; *s != '\0'; s++)
		if (!((*s >= 'a' && *s <= 'z') || (*s >= 'A' && *s <= 'Z') ||
		    (*s >= '0' && *s <= '9') || strchr(tchar, *s) != NULL))
			return 0;
	return 1;
}

/*
 * Whether s cannot be a field value (RFC 9110 5.5): a control character
 * other than tab (CR and LF would split the header block).
 */
static int
hdr_value_bad(const char *s)
{
	for (; *s != '\0'; s++)
		if (((unsigned char)*s < 0x20 && *s != '\t') || *s == 0x7f)
			return 1;
	return 0;
}

/*
 * Whether name (a token) is an authorizer's "Variable-NAME" (any case)
 * whose NAME a web server could not pass on as a variable: empty, not all
 * letters, digits and '_', or a digit first.
 */
static int
hdr_variable_bad(const char *name)
{
	const char	*v = name + 9;

	if (strncasecmp(name, "Variable-", 9) != 0)
		return 0;
	if (*v == '\0' || (*v >= '0' && *v <= '9'))
		return 1;
	for (; *v != '\0'; v++)
		if (!((*v >= 'a' && *v <= 'z') || (*v >= 'A' && *v <= 'Z') ||
		    (*v >= '0' && *v <= '9') || *v == '_'))
			return 1;
	return 0;
}

/*
 * Whether Variable-NAME names what the front end would hand to the next
 * program as something else: a client's header (HTTP_*), a CGI
 * meta-variable (RFC 3875 4.1) or one that front ends and PHP read as
 * such (SCRIPT_FILENAME, DOCUMENT_ROOT ...), or what changes how a
 * program runs before its own code does: the dynamic loader's and
 * glibc's (LD_*, GLIBC_TUNABLES, GCONV_PATH, glibc's unsecure list),
 * the shell's, the interpreters' (PHP*, PERL*, PYTHON*, NODE_*, RUBY*
 * ...) and git's (GIT_*), HOME and TMPDIR.  Families by prefix, so that
 * a new member is refused too.  Case does not matter: some front ends
 * fold it.  Returns 1 if reserved.
 */
static int
hdr_variable_reserved(const char *name)
{
	static const char *const	 reserved[] = {
		"AUTH_TYPE", "CONTENT_LENGTH", "CONTENT_TYPE",
		"GATEWAY_INTERFACE", "PATH_INFO", "PATH_TRANSLATED",
		"QUERY_STRING", "REMOTE_ADDR", "REMOTE_HOST", "REMOTE_IDENT",
		"REMOTE_USER", "REQUEST_METHOD", "SCRIPT_NAME", "SERVER_NAME",
		"SERVER_PORT", "SERVER_PROTOCOL", "SERVER_SOFTWARE",
		"SCRIPT_FILENAME", "DOCUMENT_ROOT", "REQUEST_URI",
		"REQUEST_SCHEME", "REDIRECT_STATUS", "HTTPS", "REMOTE_PORT",
		"SERVER_ADDR", "PATH", "IFS", "ENV", "BASH_ENV", "SHELLOPTS",
		"BASHOPTS", "CDPATH", "PS4", "PROMPT_COMMAND", "HOME", "SHELL",
		"TMPDIR", "TMP", "TEMP", "TZ", "TZDIR", "LOCPATH", "NLSPATH",
		"HOSTALIASES", "LOCALDOMAIN", "RES_OPTIONS", "RESOLV_HOST_CONF",
		"NIS_PATH", "GETCONF_DIR", "CLASSPATH", "SSLKEYLOGFILE",
		"TCLLIBPATH", NULL
	};
	static const char *const	 prefix[] = {
		"GLIBC_", "GCONV_", "MALLOC_", "BASH_FUNC_", "PHP", "PERL",
		"PYTHON", "NODE_", "NPM_", "RUBY", "GEM_", "BUNDLE_", "GIT_",
		"JAVA_", "_JAVA_", "JDK_", "LUA_", "OPENSSL_", "SSL_CERT_",
		"LC_", NULL
	};
	const char	*v = name + 9;
	size_t		 i;

	if (strncasecmp(name, "Variable-", 9) != 0)
		return 0;
	if (strncasecmp(v, "LD_", 3) == 0 || strncasecmp(v, "HTTP_", 5) == 0)
		return 1;
	for (i = 0; reserved[i] != NULL; i++)
		if (strcasecmp(v, reserved[i]) == 0)
			return 1;
	for (i = 0; prefix[i] != NULL; i++)
		if (strncasecmp(v, prefix[i], strlen(prefix[i])) == 0)
			return 1;
	return 0;
}

int
evfcgi_header_add(struct evfcgi_req *r, const char *name, const char *value)
{
	const char	*why = NULL;
	size_t		 nl, vl, have = r->r_hdrs.b_len;

	if (!req_can_write(r) || r->r_h.h_out != OUT_NONE)
		why = "after the header block";
	else if (!hdr_token(name))
		why = "a name that is not a token";
	else if (strcasecmp(name, "Status") == 0 ||
	    strcasecmp(name, "Content-Length") == 0)
		why = "a field the engine writes";
	else if (r->r_h.h_role == FCGI_AUTHORIZER && hdr_variable_bad(name))
		why = "Variable-NAME whose NAME is not a variable name "
		    "(letters, digits, '_'; not a digit first)";
	else if (r->r_h.h_role == FCGI_AUTHORIZER && hdr_variable_reserved(name))
		why = "Variable-NAME whose NAME is reserved (HTTP_*, a CGI "
		    "meta-variable, LD_*, PERL* ... see evfcgi(3))";
	else if (hdr_value_bad(value))
		why = "a control character in the value";
	else if ((nl = strlen(name)) + (vl = strlen(value)) + 4 >
	    HDR_MAX - have)
		why = "past 64 KiB of header lines";
	else if (req_buf_reserve(&r->r_hdrs, have + nl + vl + 4) == -1)
		why = "out of memory";
	if (why != NULL) {
		log_warn("%s: request %u: header line refused: %s (%.64s)",
		    r->r_link->rl_peer, r->r_h.h_id, why, name);
		return -1;
	}
	/* One Content-Type: the last one given. */
	if (strcasecmp(name, "Content-Type") == 0) {
		hdr_drop(&r->r_hdrs, name);
		have = r->r_hdrs.b_len;
	}
	memcpy(r->r_hdrs.b_p + have, name, nl);
	memcpy(r->r_hdrs.b_p + have + nl, ": ", 2);
	memcpy(r->r_hdrs.b_p + have + nl + 2, value, vl);
	memcpy(r->r_hdrs.b_p + have + nl + 2 + vl, "\r\n", 2);
	r->r_hdrs.b_len = have + nl + vl + 4;
	return 0;
}

/* Removes the lines named name (any case) from the added lines h. */
static void
hdr_drop(struct req_buf *h, const char *name)
{
	size_t	 nl = strlen(name), off = 0, end;
	char	*eol;

	while (off < h->b_len) {
		eol = memchr(h->b_p + off, '\n', h->b_len - off);
		end = (size_t)(eol - h->b_p) + 1;	/* every line ends so */
		if (end - off > nl && h->b_p[off + nl] == ':' &&
		    strncasecmp(h->b_p + off, name, nl) == 0) {
			memmove(h->b_p + off, h->b_p + end, h->b_len - end);
			h->b_len -= end - off;
		} else
			off = end;
	}
}

int
evfcgi_header(struct evfcgi_req *r, int status, const char *ctype,
    long long content_length)
{
	return req_header(r, status, NULL, ctype, content_length);
}

int
evfcgi_header_reason(struct evfcgi_req *r, int status, const char *reason,
    const char *ctype, long long content_length)
{
	return req_header(r, status, reason, ctype, content_length);
}

const char *
evfcgi_status_text(int status)
{
	return req_status_text(status);
}

int
req_header(struct evfcgi_req *r, int status, const char *reason,
    const char *ctype, long long content_length)
{
	return req_head_out(r, status, reason, ctype, content_length, NULL, 0);
}

/*
 * req_header(), with the first tlen bytes of the body at tail (or none)
 * in the header block's record.  Returns as req_header().
 */
static int
req_head_out(struct evfcgi_req *r, int status, const char *reason,
    const char *ctype, long long content_length, const void *tail,
    size_t tlen)
{
	char		 buf[RESP_HEAD_MAX];
	struct req_buf	*h = &r->r_hdrs;
	const char	*bad = NULL;
	size_t		 n = 0;
	int		 nobody = r->r_nobody;

	if (!req_can_write(r))
		return -1;
	if (r->r_h.h_out != OUT_NONE) {
		log_warn("%s: request %u: a second header (status %d) refused",
		    r->r_link->rl_peer, r->r_h.h_id, status);
		return -1;
	}
	if (status < 100 || status > 599) {
		log_warn("%s: request %u: status %d refused: not 100-599",
		    r->r_link->rl_peer, r->r_h.h_id, status);
		return -1;
	}
	if (ctype != NULL && hdr_value_bad(ctype))
		bad = "Content-Type";
	else if (reason != NULL && hdr_value_bad(reason))
		bad = "Status";
	if (bad != NULL) {
		log_warn("%s: request %u: %s with a control character refused",
		    r->r_link->rl_peer, r->r_h.h_id, bad);
		return -1;
	}
	if (reason == NULL || *reason == '\0')
		reason = req_status_text(status);
	/* RFC 9110 8.6, 15.2, 15.3.5, 15.4.5: no length, and no body. */
	if (status < 200 || status == 204 || status == 304) {
		content_length = -1;
		nobody = 1;
	}
	if (ctype != NULL && h->b_len > 0)
		hdr_drop(h, "Content-Type");
	/* By hand: snprintf was a tenth of the daemon's own time a /hello. */
	if (HDR_PUT("Status: ") == -1 ||
	    hdr_num(buf, sizeof(buf) - 2, &n, status) == -1 ||
	    HDR_PUT(" ") == -1 || HDR_PUT(reason) == -1 ||
	    HDR_PUT("\r\n") == -1 ||
	    (ctype != NULL && (HDR_PUT("Content-Type: ") == -1 ||
	    HDR_PUT(ctype) == -1 || HDR_PUT("\r\n") == -1)) ||
	    (content_length >= 0 && (HDR_PUT("Content-Length: ") == -1 ||
	    hdr_num(buf, sizeof(buf) - 2, &n, content_length) == -1 ||
	    HDR_PUT("\r\n") == -1))) {
		log_warn("%s: request %u: status line and Content-Type above "
		    "%zu bytes refused", r->r_link->rl_peer, r->r_h.h_id,
		    sizeof(buf) - 2);
		return -1;
	}
	(void)req_set_out(r, OUT_HEADER);
	r->r_h.h_status = status;
	r->r_nobody = nobody;
	r->r_clen_out = nobody ? -1 : content_length;
	if (tlen > 0 && req_body_writable(r, tlen) != 1)
		tlen = 0;	/* no body (HEAD) */
	if (h->b_len == 0 && tlen == 0) {
		memcpy(buf + n, "\r\n", 2);
		n += 2;
		return req_out(r, fcgi_out_stdout_copy(&r->r_link->rl_out,
		    r->r_h.h_id, buf, n));
	}
	/* The added lines go after the engine's, in one record. */
	if (req_buf_reserve(h, h->b_len + n + 2 + tlen) == -1)
		return req_out(r, -1);
	memmove(h->b_p + n, h->b_p, h->b_len);
	memcpy(h->b_p, buf, n);
	memcpy(h->b_p + n + h->b_len, "\r\n", 2);
	h->b_len += n + 2;
	if (tlen > 0)
		memcpy(h->b_p + h->b_len, tail, tlen);
	h->b_len += tlen;
	return req_out(r, fcgi_out_stdout_copy(&r->r_link->rl_out, r->r_h.h_id,
	    h->b_p, h->b_len));
}

#undef HDR_PUT

/*
 * Whether len body bytes may be queued now: -1 not (before the header,
 * once answered, on a broken stream, past the running producer's share,
 * or past the Content-Length sent: logged, the connection is not kept),
 * 0 yes but dropped (HEAD), 1 yes (counted as sent).
 */
static int
req_body_writable(struct evfcgi_req *r, size_t len)
{
	const struct evfcgi_limits	*lim = r->r_link->rl_env->re_lim;

	if (!req_can_write(r) || r->r_h.h_out != OUT_HEADER)
		return -1;
	/* A producer's call writes about a high mark, then yields. */
	if (r->r_link->rl_prod == r) {
		if (r->r_prod.p_used > 0 && r->r_prod.p_used + len >
		    r->r_h.h_prod_room + lim->high_water)
			return -1;
		r->r_prod.p_used += len;
	}
	if (r->r_nobody)
		return 0;
	/* Past the output cap the answer can only be cut (at its end), and
	   no later write may leave a gap in it. */
	if (r->r_short || (!r->r_admitted && !req_admit(r, len))) {
		r->r_short = 1;
		r->r_h.h_keep = 0;
		return -1;
	}
	if (r->r_clen_out >= 0 && len > (uint64_t)r->r_clen_out - r->r_h.h_sent) {
		if (!r->r_len_bad)
			log_err("%s: request %u: body past its Content-Length "
			    "%lld refused: the connection closes after it",
			    r->r_link->rl_peer, r->r_h.h_id, r->r_clen_out);
		r->r_len_bad = 1;
		r->r_h.h_keep = 0;
		return -1;
	}
	r->r_h.h_sent += len;
	return 1;
}

int
evfcgi_write(struct evfcgi_req *r, const void *data, size_t len)
{
	int	 ok;

	if ((ok = req_body_writable(r, len)) <= 0)
		return ok;
	return req_out(r, fcgi_out_stdout_copy(&r->r_link->rl_out, r->r_h.h_id,
	    data, len));
}

int
evfcgi_write_ref(struct evfcgi_req *r, const void *data, size_t len)
{
	int	 ok;

	if ((ok = req_body_writable(r, len)) <= 0)
		return ok;
	return req_out(r, fcgi_out_stdout_ref(&r->r_link->rl_out, r->r_h.h_id,
	    data, len));
}

/* Who frees what evfcgi_write_ref_free() lent, once its last slice left. */
struct ref_hold {
	void		(*h_fn)(const void *, void *);
	void		*h_arg;
	const void	*h_data;
	size_t		 h_refs;
};

/* One slice (or the writer's own hold) is let go. */
static void
ref_release(const void *data, size_t len, void *extra)
{
	struct ref_hold	*h = extra;

	(void)data;
	(void)len;
	if (--h->h_refs > 0)
		return;
	if (h->h_fn != NULL)
		h->h_fn(h->h_data, h->h_arg);
	free(h);
}

int
evfcgi_write_ref_free(struct evfcgi_req *r, const void *data, size_t len,
    void (*freefn)(const void *, void *), void *arg)
{
	static const uint8_t	 zeros[8];
	struct fcgi_out		*o = &r->r_link->rl_out;
	struct evbuffer		*q;
	struct ref_hold		*h;
	const uint8_t		*p = data;
	uint8_t			 hdr[FCGI_HEADER_LEN], pad;
	size_t			 n;
	int			 ok = 0, rc = 0;

	/* The hold first: a body counted as sent is one that is queued. */
	h = len > 0 ? malloc(sizeof(*h)) : NULL;
	if ((len > 0 && h == NULL) ||
	    (ok = req_body_writable(r, len)) <= 0 || len == 0) {
		free(h);
		if (freefn != NULL)
			freefn(data, arg);
		return (len > 0 && h == NULL) || ok == -1 ? -1 : 0;
	}
	*h = (struct ref_hold){ freefn, arg, data, 1 };
	/*
	 * Framed here: each slice holds h, which frees data after the last.
	 * Queued, never staged: a stage's references have no release.
	 */
	if ((q = fcgi_out_queue(o)) == NULL)
		rc = -1;
	while (len > 0 && rc == 0) {
		n = len < FCGI_MAX_ALIGNED ? len : FCGI_MAX_ALIGNED;
		pad = fcgi_padding(n);
		fcgi_header_encode(hdr, FCGI_STDOUT, r->r_h.h_id, (uint16_t)n, pad);
		h->h_refs++;
		if (fcgi_out_small(o, hdr, sizeof(hdr)) == -1 ||
		    evbuffer_add_reference(q, p, n, ref_release, h) == -1) {
			h->h_refs--;
			rc = -1;
		} else if (pad > 0 && fcgi_out_small(o, zeros, pad) == -1)
			rc = -1;
		p += n;
		len -= n;
	}
	ref_release(data, 0, h);
	return req_out(r, rc);
}

/* Closes the descriptor evfcgi_write_fd() gave r, if any. */
void
req_fd_close(struct evfcgi_req *r)
{
	if (r->r_fdsrc.f_fd >= 0)
		close(r->r_fdsrc.f_fd);
	r->r_fdsrc.f_fd = -1;
}

/*
 * evfcgi_write_fd()'s producer: reads at most one record's worth and room
 * bytes, so a file is held a slice at a time.
 */
static int
req_fd_produce(struct evfcgi_req *r, size_t room, void *arg)
{
	uint8_t	 buf[FCGI_MAX_ALIGNED];
	size_t	 n = sizeof(buf);
	ssize_t	 got;

	(void)arg;
	if (n > room)
		n = room;
	if (n > r->r_fdsrc.f_left)
		n = (size_t)r->r_fdsrc.f_left;
	got = pread(r->r_fdsrc.f_fd, buf, n, (off_t)r->r_fdsrc.f_off);
	if (got == -1 && errno == EINTR)
		return 0;
	if (got <= 0) {
		log_warn("%s: request %u: reading the body's file: %s",
		    r->r_link->rl_peer, r->r_h.h_id, got == 0 ?
		    "it ended early" : strerror(errno));
		req_fd_close(r);
		evfcgi_respond_error(r, 500, NULL);
		return 0;
	}
	if (evfcgi_write(r, buf, (size_t)got) == -1) {
		req_fd_close(r);
		return 0;
	}
	r->r_fdsrc.f_off += (uint64_t)got;
	r->r_fdsrc.f_left -= (uint64_t)got;
	if (r->r_fdsrc.f_left > 0)
		return 0;
	req_fd_close(r);
	return 1;
}

int
evfcgi_write_fd(struct evfcgi_req *r, int fd, uint64_t offset, uint64_t len)
{
	int	 ok;

	if ((ok = req_body_writable(r, 0)) == -1 || !req_held(r) ||
	    r->r_fdsrc.f_fd >= 0 || offset > (uint64_t)INT64_MAX - len) {
		close(fd);
		return -1;
	}
	if (ok == 0 || len == 0) {
		close(fd);
		evfcgi_finish(r);
		return 0;
	}
	r->r_fdsrc.f_fd = fd;
	r->r_fdsrc.f_off = offset;
	r->r_fdsrc.f_left = len;
	evfcgi_produce(r, req_fd_produce, NULL);
	return 0;
}

int
evfcgi_write_buffer(struct evfcgi_req *r, struct evbuffer *src, size_t len)
{
	int	 ok;

	if (!req_held(r) || len > evbuffer_get_length(src) ||
	    (ok = req_body_writable(r, len)) == -1)
		return -1;
	if (ok == 0)
		return evbuffer_drain(src, len);
	return req_out(r, fcgi_out_stdout_move(&r->r_link->rl_out, r->r_h.h_id,
	    src, len));
}

int
evfcgi_produce(struct evfcgi_req *r, evfcgi_producer fn, void *arg)
{
	if (!req_held(r) || r->r_app_locked)
		return -1;
	r->r_prod.p_fn = fn;
	r->r_prod.p_arg = arg;
	r->r_h.h_prod_idle = 0;
	r->r_link->rl_env->re_ops->ro_produce(r, fn != NULL,
	    r->r_link->rl_owner);
	return 0;
}

int
evfcgi_produce_need(struct evfcgi_req *r, size_t nbytes)
{
	if (!req_held(r) || r->r_app_locked)
		return -1;
	r->r_h.h_prod_need = nbytes;
	return 0;
}

void
evfcgi_on_abort(struct evfcgi_req *r, evfcgi_abort_cb fn, void *arg)
{
	r->r_abort = fn;
	r->r_abort_arg = arg;
}

int
evfcgi_finish(struct evfcgi_req *r)
{
	return req_finish(r, 0);
}

/*
 * Ends r: END_REQUEST, or, when its answer is cut (cut, or a body short of
 * its Content-Length), none, and the connection is reset once its output
 * is out (r_keep 0: it takes no new request):
 * an answer that stops must reach the front end's client as an error,
 * never as a complete one (nginx ends a chunked answer cleanly at a
 * FastCGI connection's plain close).  Returns 0, or -1 when the output
 * was broken or the answer cut.
 */
static int
req_finish(struct evfcgi_req *r, int cut)
{
	struct req_link	*l = r->r_link;
	int		 rc = l->rl_broken ? -1 : 0;

	if (!req_answerable(r) || r->r_app_locked)
		return -1;
	req_fd_close(r);
	/*
	 * Finished before any header: an empty answer would reach the front
	 * end as a broken one (nginx: 502, "upstream sent no valid header"),
	 * or as nothing at all.  The engine's own 500 goes instead.
	 */
	if (!cut && r->r_h.h_out == OUT_NONE && !l->rl_broken && req_held(r)) {
		log_warn("%s: request %u: finished with no header: 500 sent",
		    l->rl_peer, r->r_h.h_id);
		(void)req_engine_page(r, 500, "the application sent no answer");
		return -1;
	}
	if (r->r_short)
		cut = 1;	/* logged when its write was refused */
	if (!cut && r->r_h.h_out == OUT_HEADER && r->r_clen_out >= 0 && rc == 0 &&
	    !r->r_nobody && r->r_h.h_sent < (uint64_t)r->r_clen_out) {
		log_err("%s: request %u: body of %llu bytes, Content-Length "
		    "%lld: the answer is cut", l->rl_peer, r->r_h.h_id,
		    (unsigned long long)r->r_h.h_sent, r->r_clen_out);
		cut = 1;
	}
	/*
	 * Refused writes past its Content-Length: the front end has all it
	 * was told of, and the connection is not kept for a next answer.
	 */
	if (!cut && r->r_h.h_out == OUT_HEADER && r->r_clen_out >= 0 && rc == 0 &&
	    r->r_len_bad) {
		r->r_h.h_keep = 0;
		rc = -1;
	}
	if (cut) {
		r->r_h.h_keep = 0;
		rc = -1;
	}
	/* Input still to come (a body) keeps r's slot until it ends. */
	if (req_body_open(r)) {
		r->r_st.s_cb = NULL;
		evbuffer_drain(r->r_body, evbuffer_get_length(r->r_body));
	}
	/* The application's own end, or the engine's answer: none to tell. */
	r->r_h.h_app = 0;
	req_end(r, cut ? END_CUT : END_COMPLETE);
	return rc;
}

void
req_end(struct evfcgi_req *r, enum req_end how)
{
	struct req_link	*l = r->r_link;
	int		 answered = r->r_h.h_out == OUT_ENDED;

	/* Ended first: nothing the callbacks below call can answer r. */
	if (!answered)
		(void)req_set_out(r, OUT_ENDED);
	if (how == END_ABORTED || how == END_LOST)
		req_release_app(r);
	/*
	 * A broken stream gets no more records; a cut answer gets the cut
	 * mark, and then nothing more goes on its connection, which is reset
	 * once the mark is out.
	 */
	switch (how) {
	case END_COMPLETE:
		if (!l->rl_broken)
			(void)req_out(r, fcgi_out_finish(&l->rl_out, r->r_h.h_id));
		break;
	case END_CUT:
		req_link_cut(l);
		break;
	case END_ABORTED:
		if (!answered && !l->rl_broken)
			(void)req_out(r, fcgi_out_end_request(&l->rl_out, r->r_h.h_id,
			    FCGI_REQUEST_COMPLETE));
		return;
	case END_LOST:
		return;
	}
	if (l->rl_env->re_finished != NULL)
		l->rl_env->re_finished(l->rl_env->re_finished_arg, r);
	l->rl_env->re_ops->ro_done(r, l->rl_owner);
}

int
evfcgi_respond(struct evfcgi_req *r, int status, const char *ctype,
    const void *body, size_t len)
{
	int	 rc = 0;
	size_t	 tlen = 0;

	/*
	 * An authorizer's answer in one record: Apache's mod_authnz_fcgi
	 * passes a refusal's body on only as far as it came in the record
	 * that ends the header block.
	 */
	if (r->r_h.h_role == FCGI_AUTHORIZER && len <= AUTH_ONE_RECORD)
		tlen = len;
	/*
	 * The whole answer, or 503 before any of it is queued: header lines
	 * given, the engine's (at most RESP_HEAD_MAX), the body.
	 */
	if (req_can_write(r) && r->r_h.h_out == OUT_NONE && !req_admit(r,
	    r->r_hdrs.b_len + RESP_HEAD_MAX + (r->r_nobody ? 0 : len))) {
		r->r_admitted = 1;
		r->r_hdrs.b_len = 0;
		r->r_link->rl_env->re_st->overloaded++;
		(void)evfcgi_respond_error(r, 503, "output queues are full");
		return -1;
	}
	/* Admitted whole: its body's write is not weighed again. */
	r->r_admitted = 1;
	if (req_head_out(r, status, NULL, ctype, (long long)len, body,
	    tlen) == -1) {
		/*
		 * Refused (logged): the engine's own 500 in its place, not an
		 * empty answer; never the error page maker's, which may be
		 * what was refused.
		 */
		if (req_can_write(r) && r->r_h.h_out == OUT_NONE) {
			r->r_hdrs.b_len = 0;
			(void)req_engine_page(r, 500, NULL);
			return -1;
		}
		rc = -1;
	} else if (tlen == 0 && evfcgi_write(r, body, len) == -1)
		rc = -1;
	if (evfcgi_finish(r) == -1)
		rc = -1;
	return rc;
}

int
evfcgi_respond_error(struct evfcgi_req *r, int status, const char *detail)
{
	int	 n;

	if (r->r_app_locked)
		return -1;
	if (r->r_h.h_out == OUT_HEADER) {
		log_warn("%s: request %u: status %d after the header was sent:"
		    " the answer is cut", r->r_link->rl_peer, r->r_h.h_id,
		    status);
		(void)req_finish(r, 1);
		return -1;
	}
	if (!req_can_write(r)) {
		/* Nothing can go out (a broken stream): it ends all the same. */
		(void)req_finish(r, 0);
		return -1;
	}
	if ((n = req_error_page(r, status, detail)) != -1)
		return n == 0 ? 0 : -1;
	return req_engine_page(r, status, detail);
}

/*
 * Answers status with the engine's own text/plain page, detail after the
 * reason phrase.  Returns as evfcgi_respond().
 */
static int
req_engine_page(struct evfcgi_req *r, int status, const char *detail)
{
	char	 body[256];
	int	 n;

	n = snprintf(body, sizeof(body), "%d %s%s%s\n", status,
	    req_status_text(status), detail != NULL ? ": " : "",
	    detail != NULL ? detail : "");
	if (n < 0 || (size_t)n >= sizeof(body))
		n = (int)strlen(body);
	return evfcgi_respond(r, status, "text/plain", body, (size_t)n);
}

int
req_error_page(struct evfcgi_req *r, int status, const char *detail)
{
	const struct req_env	*env = r->r_link->rl_env;
	const char		*ctype = "text/plain", *why = NULL;
	char			 page[EVFCGI_ERROR_PAGE_MAX];
	int			 n;

	if (env->re_errpage == NULL || !req_can_write(r) ||
	    r->r_h.h_out != OUT_NONE)
		return -1;
	/* The maker reads r; whatever it calls to answer r is refused. */
	r->r_app_locked = 1;
	n = env->re_errpage(r, status, detail, &ctype, page, sizeof(page),
	    env->re_errpage_arg);
	r->r_app_locked = 0;
	if (n < 0)
		return -1;
	if ((size_t)n > sizeof(page)) {
		log_warn("%s: request %u: error page of %d bytes refused: the "
		    "engine's is sent", r->r_link->rl_peer, r->r_h.h_id, n);
		return -1;
	}
	if (ctype == NULL || *ctype == '\0')
		why = "no Content-Type";
	else if (strlen(ctype) > ERRPAGE_CTYPE_MAX)
		why = "a Content-Type above 256 bytes";
	else if (hdr_value_bad(ctype))
		why = "a control character in the Content-Type";
	if (why != NULL) {
		log_warn("%s: request %u: error page refused (%s): the "
		    "engine's is sent", r->r_link->rl_peer, r->r_h.h_id, why);
		return -1;
	}
	return evfcgi_respond(r, status, ctype, page, (size_t)n) == 0 ? 0 : 1;
}
