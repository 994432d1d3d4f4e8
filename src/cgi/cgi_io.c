/*
 * cgi_io.c: the bytes between a request and its program.  The body goes
 * to stdin only as fast as the pipe takes it (the rest stays in the
 * request's body buffer, which pauses its connection); stdout is read for
 * the header block, then only by a producer, which the engine calls while
 * the connection's output is below its watermark: a slow client leaves
 * the program blocked in its own write().  Output held while the body
 * still comes is charged to the engine's own cap (--max-queued bytes,
 * apart from the connections' output).  (stderr: cgi_child.c.)  With
 * cgi.c one module, split for length (one node for scripts/layers): it
 * tells the job's owner there that the job is done, failed, redirected,
 * or its clock paused.
 */
#include <sys/types.h>

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <event2/buffer.h>
#include <event2/event.h>

#include "cgi_job.h"
#include "evfcgi.h"
#include "log.h"

#define IO_READ_MIN	4096
/*
 * Per read from stdout, per write to stdin.  Not 64 KiB: libevent gives
 * a chain the power of two that holds its data and its header, so 64 KiB
 * of data read into j_head would take 128 KiB.
 */
#define IO_READ_MAX	(65536 - 128)

static int	io_read_raw(int, size_t, const char **);
static int	io_read(struct evbuffer *, int, size_t);
static void	io_incb(evutil_socket_t, short, void *);
static void	io_outcb(evutil_socket_t, short, void *);
static void	io_head(struct cgi_job *);
static void	io_head_parse(struct cgi_job *);
static int	io_send_head(struct cgi_job *, const char *, size_t,
		    const struct cgi_head *);
static int	io_produce(struct evfcgi_req *, size_t, void *);
static void	io_close_in(struct cgi_job *);
static void	io_release(struct cgi_job *);
static void	io_unhold(struct cgi_job *);

/*
 * Reads at most want (and IO_READ_MAX) bytes of a program's stdout, fd,
 * into the module's scratch, *data: one read(2).  Returns what it did.
 */
static int
io_read_raw(int fd, size_t want, const char **data)
{
	static char	 scratch[IO_READ_MAX];

	*data = scratch;
	return (int)read(fd, scratch,
	    want < sizeof(scratch) ? want : sizeof(scratch));
}

/*
 * io_read_raw() onto the end of dst, copied into a chain no bigger than
 * what it got needs (evbuffer_read reads 4 KiB at a time, after an ioctl,
 * into chains of 8 KiB).
 */
static int
io_read(struct evbuffer *dst, int fd, size_t want)
{
	const char	*data;
	int		 n;

	n = io_read_raw(fd, want, &data);
	if (n > 0 && evbuffer_add(dst, data, (size_t)n) == -1) {
		errno = ENOMEM;
		return -1;
	}
	return n;
}

int
cgi_io_start(struct cgi_job *job, int in, int out)
{
	struct event_base	*base = job->j_cg->cg_base;

	job->j_in = in;
	job->j_out = out;
	if ((job->j_inev = event_new(base, in, EV_WRITE, io_incb,
	    job)) == NULL ||
	    (job->j_outev = event_new(base, out, EV_READ | EV_PERSIST,
	    io_outcb, job)) == NULL) {
		cgi_io_close(job);
		return -1;
	}
	job->j_holding = !job->j_body_done;
	job->j_eof = 0;
	event_add(job->j_outev, NULL);
	cgi_io_feed(job);
	return 0;
}

/* Closes the program's stdin: its body has ended, or it went away. */
static void
io_close_in(struct cgi_job *job)
{
	if (job->j_inev != NULL)
		event_free(job->j_inev);
	job->j_inev = NULL;
	if (job->j_in >= 0)
		close(job->j_in);
	job->j_in = -1;
}

void
cgi_io_close(struct cgi_job *job)
{
	io_close_in(job);
	if (job->j_outev != NULL)
		event_free(job->j_outev);
	job->j_outev = NULL;
	if (job->j_out >= 0)
		close(job->j_out);
	job->j_out = -1;
	job->j_eof = 0;
	io_unhold(job);
	if (job->j_req != NULL && job->j_headed)
		evfcgi_produce(job->j_req, NULL, NULL);
	if (job->j_child != NULL) {
		cgi_child_letgo(job->j_child, job);
		job->j_child = NULL;
	}
}

/*
 * Gives back to the engine's cap what job's output held; those waiting
 * for room read on, next turn (job's caller may be inside one of them).
 */
static void
io_unhold(struct cgi_job *job)
{
	struct cgi	*cg = job->j_cg;

	if (job->j_holdwait) {
		TAILQ_REMOVE(&cg->cg_holdq, job, j_holdentry);
		job->j_holdwait = 0;
	}
	if (job->j_held == 0)
		return;
	cg->cg_held -= job->j_held;
	job->j_held = 0;
	if (!TAILQ_EMPTY(&cg->cg_holdq) && cg->cg_held < cg->cg_held_cap)
		event_active(cg->cg_holdev, EV_TIMEOUT, 0);
}

void
cgi_io_holdcb(evutil_socket_t fd, short what, void *arg)
{
	struct cgi	*cg = arg;
	struct cgi_job	*job;

	(void)fd;
	(void)what;
	/* Each reads what room there is, or waits again. */
	while (cg->cg_held < cg->cg_held_cap &&
	    (job = TAILQ_FIRST(&cg->cg_holdq)) != NULL) {
		TAILQ_REMOVE(&cg->cg_holdq, job, j_holdentry);
		job->j_holdwait = 0;
		if (job->j_out >= 0 && job->j_holding && !job->j_eof)
			event_add(job->j_outev, NULL);
	}
}

void
cgi_io_feed(struct cgi_job *job)
{
	struct evbuffer	*body = job->j_body;
	int		 n;

	if (body == NULL || !job->j_started || job->j_inev == NULL) {
		/* Nobody reads it (any more): let the connection go on. */
		if (body != NULL && (job->j_discard || (job->j_started &&
		    job->j_inev == NULL)))
			evbuffer_drain(body, evbuffer_get_length(body));
		return;
	}
	if (evbuffer_get_length(body) > 0) {
		n = evbuffer_write_atmost(body, job->j_in, IO_READ_MAX);
		if (n == -1 && errno != EAGAIN && errno != EINTR) {
			/* It exited, or closed its stdin: no more body. */
			log_debug("cgi %s: its stdin: %s", job->j_name,
			    strerror(errno));
			io_close_in(job);
			evbuffer_drain(body, evbuffer_get_length(body));
			return;
		}
		if (evbuffer_get_length(body) > 0) {
			event_add(job->j_inev, NULL);
			return;
		}
	}
	if (job->j_body_done)
		io_close_in(job);
}

/* The body has ended: what was held goes out (job may be freed). */
static void
io_release(struct cgi_job *job)
{
	if (!job->j_holding || !job->j_body_done || job->j_out < 0)
		return;
	job->j_holding = 0;
	io_unhold(job);
	/* It may have stopped on a cap: the header may be still to come. */
	if (!job->j_eof)
		event_add(job->j_outev, NULL);
	if (!job->j_headed)
		io_head_parse(job);
}

/* The program's stdin has room again. */
static void
io_incb(evutil_socket_t fd, short what, void *arg)
{
	(void)fd;
	(void)what;
	cgi_io_feed(arg);
}

void
cgi_io_bodycb(struct evfcgi_req *req, struct evbuffer *body, int done,
    void *arg)
{
	struct cgi_job	*job = arg;

	(void)req;
	job->j_body = body;
	if (done)
		job->j_body_done = 1;
	cgi_io_feed(job);
	/* The web server has sent it all, whatever the program took. */
	if (done)
		io_release(job);
}

/*
 * stdout is readable: the header block is gathered (bounded); after it,
 * reading is the producer's, called as the connection has room.
 */
static void
io_outcb(evutil_socket_t fd, short what, void *arg)
{
	struct cgi_job	*job = arg;

	(void)fd;
	(void)what;
	if (!job->j_headed) {
		io_head(job);
		return;
	}
	event_del(job->j_outev);
	/* Resumed by the producer: at once if the connection has room. */
	cgi_job_clock_pause(job);
	evfcgi_produce(job->j_req, io_produce, job);
}

/*
 * Reads some of the header block; acts on it once it is whole.  While the
 * request body has not ended, all output is held instead (up to c_hold,
 * and while the engine's cap for all held output has room; then the
 * program waits): nginx stops sending a request body once it
 * has passed a response's header on, so a program that answers while it
 * reads would never get the rest.
 */
static void
io_head(struct cgi_job *job)
{
	const struct cgi_config	*cfg = &job->j_cg->cg_cfg;
	struct cgi		*cg = job->j_cg;
	size_t			 cap, have, want;
	char			 msg[96];
	int			 n;

	have = evbuffer_get_length(job->j_head);
	cap = job->j_holding ? cfg->c_hold : cfg->c_max_header + 1;
	if (have >= cap) {
		/* Held full: the program waits until the body has ended. */
		event_del(job->j_outev);
		return;
	}
	want = cap - have;
	if (job->j_holding) {
		if (cg->cg_held >= cg->cg_held_cap) {
			/* All programs hold the cap's worth: it waits. */
			event_del(job->j_outev);
			if (!job->j_holdwait) {
				TAILQ_INSERT_TAIL(&cg->cg_holdq, job,
				    j_holdentry);
				job->j_holdwait = 1;
			}
			return;
		}
		if (want > cg->cg_held_cap - cg->cg_held)
			want = cg->cg_held_cap - cg->cg_held;
	}
	n = io_read(job->j_head, job->j_out, want);
	if (n == -1 && (errno == EAGAIN || errno == EINTR))
		return;
	if (n == -1) {
		snprintf(msg, sizeof(msg), "reading its output: %s",
		    strerror(errno));
		cgi_job_fail(job, 502, msg);
		return;
	}
	if (n == 0) {
		job->j_eof = 1;
		event_del(job->j_outev);
	}
	if (n > 0 && job->j_holding) {
		cg->cg_held += (size_t)n;
		job->j_held += (size_t)n;
	}
	if (!job->j_holding)
		io_head_parse(job);
}

/*
 * Acts on the output gathered: the header block once it is whole (502
 * when it is bad, too big, or the output ended first), the rest passed
 * on; at the output's end, the response is complete.  job may be freed.
 */
static void
io_head_parse(struct cgi_job *job)
{
	size_t		 max = job->j_cg->cg_cfg.c_max_header, have, look;
	const char	*why, *p;
	struct cgi_head	 h;
	char		 msg[96];
	long		 end;

	have = evbuffer_get_length(job->j_head);
	look = have < max + 1 ? have : max + 1;
	if ((p = (const char *)evbuffer_pullup(job->j_head,
	    (ssize_t)look)) == NULL && look > 0) {
		cgi_job_fail(job, 500, "out of memory");
		return;
	}
	end = look == 0 ? 0 : cgi_header_scan(p, look, &job->j_scanpos, &why);
	if (end == 0 && (look > max || job->j_eof)) {
		if (look > max)
			snprintf(msg, sizeof(msg), "a header block over %zu "
			    "bytes (--cgi-max-header)", max);
		else
			snprintf(msg, sizeof(msg), "%s before a whole header "
			    "block", have == 0 ? "no output" :
			    "its output ended");
		cgi_job_fail(job, 502, msg);
		return;
	}
	if (end == 0)
		return;
	if (end == -1 || cgi_header_read(p, (size_t)end, &h, &why) == -1) {
		snprintf(msg, sizeof(msg), "a bad header: %s", why);
		cgi_job_fail(job, 502, msg);
		return;
	}
	if (h.h_kind == CGI_LOCAL_REDIRECT) {
		cgi_job_redirect(job, h.h_location.f_value,
		    h.h_location.f_valuelen);
		return;
	}
	if (io_send_head(job, p, (size_t)end, &h) == -1)
		return;
	evbuffer_drain(job->j_head, (size_t)end);
	/*
	 * What came after the header block (all a held program wrote while
	 * the body came, up to --cgi-hold) goes as the connection has room:
	 * the producer writes it before it reads the pipe again.  Written in
	 * one call, it could pass the output cap, which refuses it and cuts
	 * the answer (16 held programs at --max-queued 1m).
	 */
	if (evbuffer_get_length(job->j_head) > 0) {
		evfcgi_produce(job->j_req, io_produce, job);
		return;
	}
	if (job->j_eof)
		cgi_job_done(job);
	else
		event_add(job->j_outev, NULL);
}

/*
 * Queues the response's header: h's status (with the program's own
 * reason phrase, if it gave one), Content-Type and Content-Length, the
 * other lines as they came.  Returns 0, or -1 when job failed (freed).
 */
static int
io_send_head(struct cgi_job *job, const char *p, size_t len,
    const struct cgi_head *h)
{
	struct cgi_field	 f;
	char			 sbuf[256], reason[256], *line, *ctype = NULL;
	size_t			 off = 0;

	reason[0] = '\0';
	if (h->h_reason != NULL && h->h_reasonlen < sizeof(reason)) {
		memcpy(reason, h->h_reason, h->h_reasonlen);
		reason[h->h_reasonlen] = '\0';
	} else if (h->h_reason != NULL)
		log_warn("%s: its Status reason phrase is over %zu bytes: the "
		    "standard one is sent", job->j_name, sizeof(reason) - 1);
	while (cgi_header_next(p, len, &off, &f)) {
		if (cgi_field_is(&f, "Status") ||
		    cgi_field_is(&f, "Content-Length"))
			continue;
		line = f.f_namelen + f.f_valuelen + 2 <= sizeof(sbuf) ? sbuf :
		    malloc(f.f_namelen + f.f_valuelen + 2);
		if (line == NULL) {
			free(ctype);
			cgi_job_fail(job, 500, "out of memory");
			return -1;
		}
		memcpy(line, f.f_name, f.f_namelen);
		line[f.f_namelen] = '\0';
		memcpy(line + f.f_namelen + 1, f.f_value, f.f_valuelen);
		line[f.f_namelen + 1 + f.f_valuelen] = '\0';
		if (cgi_field_is(&f, "Content-Type")) {
			ctype = strdup(line + f.f_namelen + 1);
			if (ctype == NULL) {
				if (line != sbuf)
					free(line);
				cgi_job_fail(job, 500,
				    "out of memory");
				return -1;
			}
		} else
			(void)evfcgi_header_add(job->j_req, line,
			    line + f.f_namelen + 1);
		if (line != sbuf)
			free(line);
	}
	if (evfcgi_header_reason(job->j_req, h->h_status, reason, ctype,
	    h->h_clen) == -1) {
		free(ctype);
		cgi_job_fail(job, 502,
		    "its header could not be sent");
		return -1;
	}
	free(ctype);
	job->j_headed = 1;
	return 0;
}

/*
 * The producer: the connection has room for about room bytes; reads that
 * much of stdout.  When the pipe is empty it stops producing and waits
 * for stdout to be readable again.
 */
static int
io_produce(struct evfcgi_req *req, size_t room, void *arg)
{
	struct cgi_job	*job = arg;
	size_t		 want = room, held;
	const char	*data;
	char		 msg[96];
	int		 n;

	cgi_job_clock_resume(job);
	if (want < IO_READ_MIN)
		want = IO_READ_MIN;
	if ((held = evbuffer_get_length(job->j_head)) > 0) {
		/* What came after the header block first (io_head_parse()). */
		(void)evfcgi_write_buffer(req, job->j_head,
		    held < want ? held : want);
		cgi_job_clock_pause(job);
		return 0;
	}
	/*
	 * Copied, not moved: the engine packs a copy into its queue's
	 * chains (or writes it straight out when nothing waits), where a
	 * read's own chain, the power of two above what it got, left a slow
	 * client's queue in blocks of every size from 1 to 64 KiB, and the
	 * heap in holes between them: 20 slow clients of 8 MiB outputs cost
	 * 255 to 330 KiB of RSS each, against a design of 320.
	 */
	n = io_read_raw(job->j_out, want, &data);
	if (n > 0) {
		(void)evfcgi_write(req, data, (size_t)n);
		/* Until the next call, it waits for room: the client's time. */
		cgi_job_clock_pause(job);
		return 0;
	}
	if (n == -1 && (errno == EAGAIN || errno == EINTR)) {
		evfcgi_produce(req, NULL, NULL);
		event_add(job->j_outev, NULL);
		return 0;
	}
	if (n == 0) {
		cgi_job_done(job);
		return 0;
	}
	snprintf(msg, sizeof(msg), "reading its output: %s", strerror(errno));
	cgi_job_fail(job, 502, msg);
	return 0;
}
