/*
 * fuzz_api.c: libFuzzer harness that drives the library's API.  Its input
 * is a script: peer events (FastCGI records of any type, id and order,
 * half-closes, slow reads, resets) and application actions (what the
 * handlers, producers, body and abort callbacks and the error page maker
 * do, now or on a later step).  The engine serves one end of a socketpair
 * (evfcgi_adopt()); the harness plays the web server on the other, builds
 * its records with the project's record writer and parses what comes back
 * with the codec.  After every step it checks the protocol's invariants on
 * what the peer read, and at the end, everything ended and the server
 * freed, that every request the application held was let go, every
 * descriptor closed and every reference freed (LeakSanitizer does the
 * memory).  A violation calls abort(), so that libFuzzer reports it.
 *
 * The script: one step a line, words split by spaces; a word may hold
 * escapes \0 \r \n \s (space) \\ and \xHH.  Numbers are decimal.  Unknown
 * lines are skipped, so that any mutation is a script.
 *
 *   limit NAME N       before the first step: high low reqs connreq
 *                      params body queued input (struct evfcgi_limits)
 *   begin ID [ROLE [FLAGS]]   BEGIN_REQUEST (ROLE 1, FLAGS 1: KEEP_CONN)
 *   nv ID NAME=VALUE...       pairs appended to ID's pending PARAMS bytes
 *   params ID [N]      one PARAMS record: the first N pending bytes (all);
 *                      nothing pending: the empty record that ends them
 *   get ID URI [NAME=VALUE...] [keep=0] [role=R]   a whole request:
 *                      BEGIN, REQUEST_URI, REQUEST_METHOD=GET, the pairs,
 *                      the PARAMS, an empty STDIN
 *   stdin ID [TEXT|#N] a STDIN record: TEXT, or N bytes; none: empty
 *   data ID [TEXT|#N]  the same, FCGI_DATA
 *   abort ID           ABORT_REQUEST
 *   values NAME...     GET_VALUES asking for NAME...
 *   rec TYPE ID [TEXT] a record of any type
 *   bytes TEXT         raw bytes
 *   shut               half-close (SHUT_WR)
 *   read N             read at most N bytes now (the current connection)
 *   hold | auto        stop reading | read all after every step (default)
 *   reset | close      close the peer's end with unread data (the engine
 *                      sees ECONNRESET) or plainly
 *   new                a new connection (the old one closed)
 *   conn N             the steps go to connection N (0-2; opened if
 *                      closed); the others stay as they are
 *   loop [N]           N turns of the loop (1)
 *   drain | deadline   evfcgi_drain(), the drain's deadline now
 *   default [0]        the handler takes every path no route takes
 *                      (0: the engine's 404 again)
 *   errpage M          the error page maker: 0 the engine's, 1 good, 2 CR LF in
 *                      its ctype, 3 an overlong ctype, 4 returns -1,
 *                      5 returns more than size, 6 reads req, 7 empty
 *   app ID ACTIONS     ACTIONS on the request ID the application holds
 *   free               evfcgi_server_free() now, everything open
 *
 * Routes: /r exact, /p/ prefix, /m GET,POST only, /b body capped at 100,
 * /s streamed, and every path for AUTHORIZER and FILTER.  Others get 404.
 * A handler runs the ACTIONS in its request's DO param, then holds the
 * request until an app step, a callback or the engine ends it.  ACTIONS is
 * a string of letters, each with an optional number N:
 *   aN abort callback: 0 lets go, 1 answers the request, 2 finishes it,
 *      3 respond_error, 4 header and write
 *   rN respond 200 with N bytes     RN respond with status N, no body
 *   eN respond_error N (500)        f  finish
 *   hN header 200 text/plain, Content-Length N (none: -1)
 *   HN header status N, no type     cN header with bad ctype N (0-2)
 *   kN header_add name/value N (0-7)
 *   wN write N bytes (copy)   WN write_ref   FN write_ref_free
 *   dN write_fd of a pipe holding N bytes    DN the same, 10 short
 *   mN write_fd of a memfd
 *   pN produce, producer mode N: 0 writes its 3000 bytes as room comes,
 *      1 does nothing, 2 finishes the request itself, 3 writes past its
 *      share once, 4 respond_error, 5 writes 100 bytes and returns 1;
 *      p9 stops the calls (fn NULL)
 *   nN produce_need N         lN body_limit N     oN on_body mode N
 *      (0 takes all, 1 takes nothing, 2 answers at its end, 3 echoes)
 *   q  query params    t  printf    B  body bytes    x  evfcgi_drain
 *
 * Invariants, checked on every record the peer reads: a record for an id
 * only while some BEGIN_REQUEST sent for it has had no END_REQUEST (so at
 * most one END_REQUEST per BEGIN, nothing after it); STDOUT's header
 * block holds at most one Content-Length and the body never passes it,
 * meets it at END_REQUEST (none for HEAD, 1xx, 204, 304); no header line
 * the application could not have asked for (X-Injected); no connection
 * left open past the drain's deadline (an answer owed is cut by a reset
 * before evfcgi_run() returns).  In a handler:
 * evfcgi_param() and evfcgi_method() read every name as evfcgi_param_next()
 * gives it.  Callbacks run only for a request the application holds.
 *
 * FUZZ_SKIP_KNOWN (-D): leaves out what reaches the known bugs of issue
 * 35, to check the rest of the harness; FUZZ_SKIP_ITEMn one of them: 1
 * abort callbacks that answer, 2 bad error page ctypes, 4 connections
 * left open at the drain's deadline, 5 names shorter than 9 bytes on an
 * authorizer, 6 param names or values holding a NUL.
 * FUZZ_API_LOG in the environment: the engine's log on stderr;
 * FUZZ_API_TRACE: each record the peer reads.
 */
#include <sys/mman.h>
#include <sys/socket.h>

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#include <event2/buffer.h>
#include <event2/event.h>

#include "evfcgi.h"
#include "fcgi_out.h"
#include "fcgi_proto.h"
#include "server.h"

#ifdef FUZZ_SKIP_KNOWN
#define FUZZ_SKIP_ITEM1
#define FUZZ_SKIP_ITEM2
#define FUZZ_SKIP_ITEM4
#define FUZZ_SKIP_ITEM5
#define FUZZ_SKIP_ITEM6
#endif

int	LLVMFuzzerTestOneInput(const uint8_t *, size_t);

#define MAX_STEPS	300
#define MAX_LINE	4096
#define MAX_IDS		32		/* ids tracked per connection */
#define MAX_SLOTS	32		/* requests the application holds */
#define MAX_BYTES	(1 << 18)	/* a write, a body, a pipe */
#define MAX_PARAMS	8192		/* pending PARAMS bytes per id */
#define INBUF		(1 << 18)
#define MAX_FD		256		/* descriptors watched for leaks */
#define NPEERS		3		/* connections at once */

/* Aborts with the line that found the violation. */
#define CHECK(cond, ...) do {						\
	if (!(cond)) {							\
		fprintf(stderr, "fuzz_api: violation at %s:%d: ",	\
		    __FILE__, __LINE__);				\
		fprintf(stderr, __VA_ARGS__);				\
		fputc('\n', stderr);					\
		abort();						\
	}								\
} while (0)

/* One request id as the peer sees it: what it sent, what came back. */
struct idst {
	uint16_t	 id;
	unsigned	 begins;	/* BEGIN_REQUEST records sent */
	unsigned	 ends;		/* END_REQUEST records read */
	int		 lax;		/* begun again before its END came:
					   whose STDOUT it is, is unclear */
	int		 aborted;	/* ABORT_REQUEST sent: an END_REQUEST
					   may end the body short */
	int		 head;		/* REQUEST_METHOD=HEAD sent */
	int		 params_open;	/* PARAMS not ended since BEGIN */
	uint8_t		 pbuf[MAX_PARAMS];	/* sent PARAMS, for the method */
	size_t		 plen;
	int		 ptrunc;	/* pbuf overflowed: method unknown */
	uint8_t		 pend[MAX_PARAMS];	/* nv pairs not sent yet */
	size_t		 pendlen;
	/* STDOUT since the last END_REQUEST: the header block, the body. */
	int		 hdr_done;
	char		 line[256];
	size_t		 linelen;
	int		 status;
	long long	 clen;		/* -1: none declared */
	int		 nclen;
	unsigned long long body;
};

/* A request the application holds (a handler's, until it lets go). */
struct slot {
	struct evfcgi_req	*req;
	int			 held;
	int			 detached;	/* write_fd: ends unseen */
	int			 abort_mode;
	int			 prod_mode;
	size_t			 prod_left;
	int			 prod_calls;
	int			 body_mode;
	int			 authorizer;
	unsigned		 id;		/* its FUZZ_ID param, 0: none */
};

/* One connection, the web server's end. */
struct peer {
	int			 fd;		/* -1: closed */
	int			 eof;
	int			 cut;		/* the cut mark came: the
						   stream ends there */
	struct evbuffer		*out;		/* to send, not written yet */
	struct evbuffer		*sent;		/* sent, not parsed yet */
	int			 sent_bad;	/* our own stream is malformed */
	size_t			 inlen;
	size_t			 nids;
	uint8_t			 in[INBUF];
	struct idst		 ids[MAX_IDS];
};

/* The whole state of one input. */
struct fz {
	struct event_base	*base;
	struct evfcgi_server	*srv;
	struct evfcgi_limits	 lim;
	struct peer		*p;		/* the one the steps act on */
	int			 autoread;
	int			 freed;
	int			 errpage;
	long			 refs_out;	/* write_ref_free not freed yet */
	int			 fd_floor;	/* lowest free fd at the start */
	int			 fd_top;	/* highest fd made */
	uint8_t			 fd_open[MAX_FD];	/* open at the start */
	/* Not cleared for each input: */
	struct slot		 slots[MAX_SLOTS];
	struct peer		 peers[NPEERS];
};

static struct fz	*fz;
static char		 blob[MAX_BYTES];	/* bytes to write, by reference */
static char		 long_ctype[1300];
static int		 trace;		/* FUZZ_API_TRACE: records read */

static void	run_actions(struct slot *, const char *);
static const char *fd_name(int);

/* Returns the state of id on pe, made if new; NULL when MAX_IDS are
   tracked already. */
static struct idst *
id_get(struct peer *pe, uint16_t id)
{
	size_t	 i;

	for (i = 0; i < pe->nids; i++)
		if (pe->ids[i].id == id)
			return &pe->ids[i];
	if (pe->nids == MAX_IDS)
		return NULL;
	memset(&pe->ids[pe->nids], 0, sizeof(pe->ids[0]));
	pe->ids[pe->nids].id = id;
	pe->ids[pe->nids].clen = -1;
	return &pe->ids[pe->nids++];
}

static void
note_fd(int fd)
{
	if (fd > fz->fd_top)
		fz->fd_top = fd;
}

/* ---- What the peer sends ------------------------------------------ */

/* Reads the method out of the PARAMS the peer sent for st. */
static void
sent_method(struct idst *st)
{
	struct fcgi_nv	 nv;
	ssize_t		 n;
	size_t		 off = 0;

	st->head = 0;
	while ((n = fcgi_nv_parse(st->pbuf + off, st->plen - off, &nv)) > 0) {
		/* As evfcgi.h says every reader reads it: a value up to its
		   first NUL byte ("HEAD\0x" is HEAD). */
		if (nv.name_len == 14 && memcmp(nv.name, "REQUEST_METHOD",
		    14) == 0)
			st->head = nv.value_len >= 4 &&
			    memcmp(nv.value, "HEAD", 4) == 0 &&
			    (nv.value_len == 4 || nv.value[4] == 0);
		off += (size_t)n;
	}
}

/*
 * Parses what the peer sent, as the engine will: counts each id's
 * BEGIN_REQUEST records and keeps its PARAMS for the method.
 */
static void
sent_parse(struct peer *pe)
{
	struct fcgi_record	 rec;
	struct idst		*st;
	ssize_t			 n;
	size_t			 len;
	uint8_t			*p;

	while (!pe->sent_bad && (len = evbuffer_get_length(pe->sent)) > 0) {
		p = evbuffer_pullup(pe->sent, -1);
		if ((n = fcgi_parse(p, len, &rec)) == 0)
			return;
		if (n < 0) {
			pe->sent_bad = 1;
			return;
		}
		if (rec.hdr.request_id != 0 && rec.hdr.type != FCGI_GET_VALUES &&
		    (st = id_get(pe, rec.hdr.request_id)) != NULL) {
			if (rec.hdr.type == FCGI_BEGIN_REQUEST) {
				/* After a cut (no END_REQUEST) the engine may
				   serve the id again: two header blocks. */
				if (st->begins > st->ends)
					st->lax = 1;
				st->begins++;
				st->params_open = 1;
				st->plen = 0;
				st->ptrunc = 0;
				st->head = 0;
			} else if (rec.hdr.type == FCGI_ABORT_REQUEST &&
			    st->begins > st->ends)
				st->aborted = 1;
			else if (rec.hdr.type == FCGI_PARAMS &&
			    st->params_open) {
				if (rec.hdr.content_length == 0) {
					st->params_open = 0;
					if (!st->ptrunc)
						sent_method(st);
				} else if (st->plen + rec.hdr.content_length >
				    sizeof(st->pbuf))
					st->ptrunc = 1;
				else {
					memcpy(st->pbuf + st->plen, rec.content,
					    rec.hdr.content_length);
					st->plen += rec.hdr.content_length;
				}
			}
		}
		evbuffer_drain(pe->sent, (size_t)n);
	}
}

/* Queues bytes for the current peer to send. */
static void
send_bytes(const void *p, size_t len)
{
	if (fz->p->fd == -1)
		return;
	evbuffer_add(fz->p->out, p, len);
	evbuffer_add(fz->p->sent, p, len);
	sent_parse(fz->p);
}

/* Queues one record, framed by the project's record writer. */
static void
send_rec(uint8_t type, uint16_t id, const void *p, size_t len)
{
	struct fcgi_out	 o = { .fo_queue = NULL };
	struct evbuffer	*b;
	uint8_t		*q;

	if ((b = evbuffer_new()) == NULL)
		abort();
	o.fo_queue = b;
	if (len > FCGI_MAX_CONTENT)
		len = FCGI_MAX_CONTENT;
	if (fcgi_out_record(&o, type, id, p, len) == -1)
		abort();
	q = evbuffer_pullup(b, -1);
	send_bytes(q, evbuffer_get_length(b));
	evbuffer_free(b);
}

/* Each peer writes what waits to its socket, as much as it takes. */
static void
peer_flush(void)
{
	struct peer	*pe;

	for (pe = fz->peers; pe < fz->peers + NPEERS; pe++)
		while (pe->fd != -1 && evbuffer_get_length(pe->out) > 0)
			if (evbuffer_write(pe->out, pe->fd) <= 0)
				break;
}

/* ---- What the peer reads, and the invariants ---------------------- */

/* One header line of id's answer (without its CR LF). */
static void
hdr_line(struct idst *st, const char *l)
{
	CHECK(strncasecmp(l, "X-Injected", 10) != 0,
	    "id %u: an injected header line: %s", st->id, l);
	if (strncasecmp(l, "Status:", 7) == 0)
		st->status = atoi(l + 7);
	else if (strncasecmp(l, "Content-Length:", 15) == 0) {
		st->nclen++;
		CHECK(st->nclen == 1, "id %u: two Content-Length lines",
		    st->id);
		st->clen = atoll(l + 15);
	}
}

/*
 * Whether id's answer may carry no body: HEAD, 1xx, 204, 304.  (A 431
 * refuses PARAMS the engine did not read: it cannot know the method.)
 */
static int
bodyless(const struct idst *st)
{
	return (st->head && st->status != 431) ||
	    (st->status >= 100 && st->status < 200) ||
	    st->status == 204 || st->status == 304;
}

/* STDOUT content for id: the header block line by line, then the body. */
static void
got_stdout(struct idst *st, const uint8_t *p, size_t len)
{
	size_t	 i;

	for (i = 0; i < len && !st->hdr_done; i++) {
		if (p[i] != '\n') {
			if (st->linelen < sizeof(st->line) - 1)
				st->line[st->linelen++] = (char)p[i];
			continue;
		}
		if (st->linelen > 0 && st->line[st->linelen - 1] == '\r')
			st->linelen--;
		st->line[st->linelen] = '\0';
		if (st->linelen == 0)
			st->hdr_done = 1;
		else
			hdr_line(st, st->line);
		st->linelen = 0;
	}
	if (!st->hdr_done)
		return;
	st->body += len - i;
	if (st->lax)
		return;
	if (bodyless(st))
		CHECK(st->body == 0, "id %u: %llu body bytes for a body-less "
		    "answer (status %d, head %d)", st->id, st->body,
		    st->status, st->head);
	else if (st->clen >= 0)
		CHECK(st->body <= (unsigned long long)st->clen, "id %u: %llu "
		    "body bytes past Content-Length %lld", st->id, st->body,
		    st->clen);
}

/* END_REQUEST for id: the body met its length; the next answer begins. */
static void
got_end(struct idst *st, const struct fcgi_record *rec)
{
	uint32_t	 app;
	uint8_t		 ps;

	CHECK(fcgi_end_decode(rec->content, rec->hdr.content_length, &app,
	    &ps) == 0, "id %u: a malformed END_REQUEST", st->id);
	st->ends++;
	if (st->hdr_done && ps == FCGI_REQUEST_COMPLETE && !st->lax &&
	    !st->aborted) {
		if (bodyless(st))
			CHECK(st->head || st->clen < 0, "id %u: status %d "
			    "with a Content-Length", st->id, st->status);
		else if (st->clen >= 0)
			CHECK(st->body == (unsigned long long)st->clen,
			    "id %u: END_REQUEST after %llu of %lld body bytes",
			    st->id, st->body, st->clen);
	}
	st->lax = st->lax && st->begins > st->ends;
	st->aborted = st->aborted && st->begins > st->ends;
	st->hdr_done = 0;
	st->linelen = 0;
	st->status = 0;
	st->clen = -1;
	st->nclen = 0;
	st->body = 0;
}

/* One record pe read. */
static void
got_rec(struct peer *pe, const struct fcgi_record *rec)
{
	struct idst	*st;
	unsigned	 t = rec->hdr.type;

	if (trace)
		fprintf(stderr, "fuzz_api: read %s id %u, %u bytes: %.*s\n",
		    fcgi_type_name(t), rec->hdr.request_id,
		    rec->hdr.content_length, rec->hdr.content_length < 200 ?
		    (int)rec->hdr.content_length : 200, rec->content);
	if (rec->hdr.request_id == 0) {
		CHECK(t == FCGI_GET_VALUES_RESULT || t == FCGI_UNKNOWN_TYPE,
		    "a record of type %u for id 0", t);
		return;
	}
	if (t == FCGI_GET_VALUES_RESULT || t == FCGI_UNKNOWN_TYPE)
		return;	/* answers GET_VALUES or a type sent with an id */
	CHECK(t == FCGI_STDOUT || t == FCGI_STDERR || t == FCGI_END_REQUEST,
	    "a record of type %u from the engine", t);
	if ((st = id_get(pe, rec->hdr.request_id)) == NULL)
		return;
	CHECK(st->ends < st->begins, "id %u: %s with no request open (%u "
	    "BEGIN, %u END)", st->id, fcgi_type_name(t), st->begins,
	    st->ends);
	if (t == FCGI_STDOUT)
		got_stdout(st, rec->content, rec->hdr.content_length);
	else if (t == FCGI_END_REQUEST)
		got_end(st, rec);
}

/*
 * Whether the cut mark (fcgi_out_cut(): a record header of version 0) is
 * at off in what pe read: the engine cut its answers there, and the
 * stream ends.  Sets pe->cut.
 */
static int
cut_mark(struct peer *pe, size_t off)
{
	if (pe->inlen - off < FCGI_HEADER_LEN || pe->in[off] != 0)
		return 0;
	if (trace)
		fprintf(stderr, "fuzz_api: read the cut mark\n");
	pe->cut = 1;
	return 1;
}

/* pe reads at most max bytes (0: all there is) and checks each record. */
static void
peer_read(struct peer *pe, size_t max)
{
	struct fcgi_record	 rec;
	size_t			 got = 0, off, want;
	ssize_t			 n;

	while (pe->fd != -1 && !pe->eof && (max == 0 || got < max)) {
		want = INBUF - pe->inlen;
		if (max > 0 && want > max - got)
			want = max - got;
		if (want == 0)
			abort();	/* a record larger than INBUF */
		n = read(pe->fd, pe->in + pe->inlen, want);
		if (n == 0 || (n == -1 && errno != EAGAIN && errno != EINTR))
			pe->eof = 1;
		if (n <= 0)
			break;
		got += (size_t)n;
		pe->inlen += (size_t)n;
		for (off = 0; !cut_mark(pe, off) && (n = fcgi_parse(pe->in +
		    off, pe->inlen - off, &rec)) > 0; off += (size_t)n)
			got_rec(pe, &rec);
		if (pe->cut) {
			/* Nothing after it; what it cut is no answer. */
			pe->inlen = 0;
			pe->eof = 1;
			break;
		}
		CHECK(n == 0, "the engine sent a malformed record");
		memmove(pe->in, pe->in + off, pe->inlen - off);
		pe->inlen -= off;
	}
}

/*
 * One turn of the loop: what is ready runs once.  (EVLOOP_NONBLOCK alone
 * goes on while callbacks keep others active, as a producer called each
 * turn does; a loopexit at once ends it after the first round.)
 */
static void
loop_once(void)
{
	static const struct timeval	 now = { 0, 0 };

	if (fz->freed)
		return;
	event_base_loopexit(fz->base, &now);
	event_base_loop(fz->base, EVLOOP_NONBLOCK);
}

/* The peer writes, the loop turns once, the peer writes and reads. */
static void
turn(void)
{
	struct peer	*pe;

	peer_flush();
	loop_once();
	peer_flush();
	for (pe = fz->peers; pe < fz->peers + NPEERS && fz->autoread; pe++)
		peer_read(pe, 0);
}

/* ---- The application ---------------------------------------------- */

static struct slot *
slot_of(struct evfcgi_req *req)
{
	size_t	 i;

	for (i = 0; i < MAX_SLOTS; i++)
		if (fz->slots[i].held && !fz->slots[i].detached &&
		    fz->slots[i].req == req)
			return &fz->slots[i];
	return NULL;
}

/* The slot held for the request of id on the connection, or NULL. */
static struct slot *
slot_of_id(unsigned id)
{
	size_t	 i;

	for (i = 0; i < MAX_SLOTS; i++)
		if (fz->slots[i].held && !fz->slots[i].detached &&
		    fz->slots[i].id == id)
			return &fz->slots[i];
	return NULL;
}

/* The application lets go of s's request: it is not to be touched. */
static void
release(struct slot *s)
{
	s->held = 0;
	s->req = NULL;
}

static void
on_abort(struct evfcgi_req *req, void *arg)
{
	struct slot	*s = arg;
	int		 mode = s->abort_mode;

	CHECK(s->held && s->req == req, "abort callback for a request the "
	    "application does not hold");
	release(s);
	switch (mode) {
	case 1:
		(void)evfcgi_respond(req, 200, "text/plain", "late\n", 5);
		break;
	case 2:
		(void)evfcgi_finish(req);
		break;
	case 3:
		(void)evfcgi_respond_error(req, 503, "aborted");
		break;
	case 4:
		if (evfcgi_header(req, 200, "text/plain", -1) == 0)
			(void)evfcgi_write(req, "x", 1);
		break;
	}
}

static void
freefn(const void *data, void *arg)
{
	CHECK(arg == fz, "write_ref_free: freefn with a wrong arg");
	free((void *)data);
	fz->refs_out--;
}

static int
producer(struct evfcgi_req *req, size_t room, void *arg)
{
	struct slot	*s = arg;
	size_t		 n;

	CHECK(s->held && s->req == req, "producer for a request the "
	    "application does not hold");
	if (s->prod_calls < 1000)
		s->prod_calls++;
	switch (s->prod_mode) {
	case 1:
		return 0;
	case 2:
		release(s);
		(void)evfcgi_finish(req);
		return 0;
	case 3:
		if (s->prod_calls == 1) {
			/* The engine takes a call's first write whole, of any
			   size (so not a check here); past it, the share holds. */
			n = fz->lim.high_water + 1;
			if (room == 0 || room > MAX_BYTES ||
			    evfcgi_write(req, blob, room) == -1 || !s->held)
				return 0;
			CHECK(evfcgi_write(req, blob, n) == -1,
			    "a write past a producer's share was taken");
			return 0;
		}
		break;
	case 4:
		release(s);
		(void)evfcgi_respond_error(req, 500, "producer");
		return 0;
	case 5:
		(void)evfcgi_write(req, blob, 100);
		release(s);
		return 1;
	}
	n = s->prod_left < room ? s->prod_left : room;
	if (n > 0 && evfcgi_write(req, blob, n) == 0)
		s->prod_left -= n;
	if (!s->held)	/* the write failed and the request died */
		return 0;
	if (s->prod_left == 0) {
		release(s);
		return 1;
	}
	return 0;
}

static void
on_body(struct evfcgi_req *req, struct evbuffer *body, int done, void *arg)
{
	struct slot	*s = arg;

	CHECK(s->held && s->req == req, "body callback for a request the "
	    "application does not hold");
	switch (s->body_mode) {
	case 0:
		evbuffer_drain(body, evbuffer_get_length(body));
		break;
	case 1:
		break;
	case 2:
		evbuffer_drain(body, evbuffer_get_length(body));
		if (done) {
			release(s);
			(void)evfcgi_respond(req, 200, "text/plain", "ok\n", 3);
		}
		break;
	case 3:
		(void)evfcgi_write_buffer(req, body, evbuffer_get_length(body));
		if (done && s->held) {
			release(s);
			(void)evfcgi_finish(req);
		}
		break;
	}
}

/* Hands a pipe or memfd holding n bytes to write_fd for len bytes. */
static void
act_write_fd(struct slot *s, int memfd, size_t n, uint64_t len)
{
	int	 p[2];
	ssize_t	 w;

	if (n > 60000)
		n = 60000;
	if (memfd) {
		if ((p[0] = memfd_create("fuzz_api", MFD_CLOEXEC)) == -1)
			abort();
		p[1] = p[0];
	} else if (pipe2(p, O_CLOEXEC) == -1)
		abort();
	note_fd(p[0]);
	note_fd(p[1]);
	if (n > 0 && (w = write(p[1], blob, n)) != (ssize_t)n)
		abort();
	if (!memfd)
		close(p[1]);
	/* Taken, the request ends unseen, or through its abort callback;
	   refused (no header yet), it is still the application's. */
	s->detached = 1;
	if (evfcgi_write_fd(s->req, p[0], 0, len) == -1 && s->held)
		s->detached = 0;
}

static void
act_header_add(struct slot *s, unsigned n)
{
	static const char *const	 hv[][2] = {
		{ "X-A", "1" },
		{ "Variable-REMOTE_USER", "bob" },
		{ "Variable-USER_ID", "7" },
		{ "Location", "/login" },
		{ "Set-Cookie", "a=1" },
		{ "Bad Name", "x" },
		{ "X-Long-Enough", "a\r\nX-Injected: 1" },
		{ "Content-Length", "5" },
	};

#ifdef FUZZ_SKIP_ITEM5
	/* Issue 35 item 5: an authorizer's names are read 9 bytes in. */
	if (s->authorizer && strlen(hv[n % 8][0]) < 9)
		return;
#endif
	(void)evfcgi_header_add(s->req, hv[n % 8][0], hv[n % 8][1]);
}

static void
act_bad_ctype(struct slot *s, unsigned n)
{
	static const char *const	 ct[] = {
		"text/html\r\nX-Injected: 1", "text/\x01", "",
	};

	(void)evfcgi_header(s->req, 200, ct[n % 3], -1);
}

/* Reads the query and the body the way applications do. */
static void
act_read(struct slot *s, char a)
{
	const char	*name, *value;
	size_t		 i = 0, len;

	if (a == 'q')
		while (evfcgi_query_next(s->req, &i, &name, &value) == 1)
			;
	else if (a == 'B')
		(void)evfcgi_body_bytes(s->req, &len);
	else
		(void)evfcgi_printf(s->req, "%s %s\n", evfcgi_path(s->req),
		    evfcgi_path_rest(s->req));
}

/* Runs one action; returns 0, or -1 when s's request was let go. */
static int
act(struct slot *s, char a, unsigned n, int has_n)
{
	struct evfcgi_req	*req = s->req;
	void			*ref;
	size_t			 len = n < MAX_BYTES ? n : MAX_BYTES;

	switch (a) {
	case 'a':
		s->abort_mode = (int)(n % 5);
#ifdef FUZZ_SKIP_ITEM1
		s->abort_mode = 0;		/* issue 35 item 1 */
#endif
		break;
	case 'r':
		release(s);
		(void)evfcgi_respond(req, 200, "text/plain", blob,
		    has_n ? len : 5);
		break;
	case 'R':
		release(s);
		(void)evfcgi_respond(req, (int)n, "text/plain", NULL, 0);
		break;
	case 'e':
		release(s);
		(void)evfcgi_respond_error(req, has_n ? (int)n : 500, "fuzz");
		break;
	case 'f':
		release(s);
		(void)evfcgi_finish(req);
		break;
	case 'h':
		(void)evfcgi_header(req, 200, "text/plain",
		    has_n ? (long long)n : -1);
		break;
	case 'H':
		(void)evfcgi_header(req, (int)n, NULL, -1);
		break;
	case 'c':
		act_bad_ctype(s, n);
		break;
	case 'k':
		act_header_add(s, n);
		break;
	case 'w':
		(void)evfcgi_write(req, blob, len);
		break;
	case 'W':
		(void)evfcgi_write_ref(req, blob, len);
		break;
	case 'F':
		if ((ref = malloc(len + 1)) == NULL)
			abort();
		memset(ref, 'F', len + 1);
		fz->refs_out++;
		(void)evfcgi_write_ref_free(req, ref, len, freefn, fz);
		break;
	case 'd':
	case 'D':
	case 'm':
		act_write_fd(s, a == 'm', len, a == 'D' ? len + 10 : len);
		break;
	case 'p':
		s->prod_mode = (int)(n % 10);
		s->prod_left = 3000;
		s->prod_calls = 0;
		(void)evfcgi_produce(req, n == 9 ? NULL : producer, s);
		break;
	case 'n':
		(void)evfcgi_produce_need(req, len);
		break;
	case 'l':
		(void)evfcgi_body_limit(req, n);
		break;
	case 'o':
		s->body_mode = (int)(n % 4);
		(void)evfcgi_on_body(req, on_body, s);
		break;
	case 'x':
		evfcgi_drain(fz->srv);
		break;
	case 'q':
	case 'B':
	case 't':
		act_read(s, a);
		break;
	}
	return s->held && !s->detached ? 0 : -1;
}

/* Runs a string of actions on s while the application holds it. */
static void
run_actions(struct slot *s, const char *acts)
{
	char		 copy[64], *p;
	unsigned long	 n;
	char		 a;
	int		 has_n;

	/* acts may be the request's own param: it dies with the request. */
	snprintf(copy, sizeof(copy), "%s", acts);
	for (p = copy; *p != '\0' && s->held && !s->detached; ) {
		a = *p++;
		has_n = *p >= '0' && *p <= '9';
		n = strtoul(p, &p, 10);
		if (act(s, a, (unsigned)(n > 1000000 ? 1000000 : n),
		    has_n) == -1)
			break;
	}
}

/*
 * evfcgi_param().  FUZZ_SKIP_KNOWN: not on a request without params
 * (request.c: r_pv NULL + 0, undefined behaviour that UBSan reports).
 */
static const char *
param(struct evfcgi_req *req, const char *name)
{
#ifdef FUZZ_SKIP_KNOWN
	const char	*n, *v;
	size_t		 i = 0;

	if (evfcgi_param_next(req, &i, &n, &v) == 0)
		return NULL;
#endif
	return evfcgi_param(req, name);
}

/*
 * Item 6's invariant: every name evfcgi_param_next() gives reads, through
 * evfcgi_param(), as the last pair of that name; the method likewise.
 */
static void
check_params(struct evfcgi_req *req)
{
	const char	*name, *value, *n2, *v2, *last, *method = "";
	size_t		 i = 0, j;

	while (evfcgi_param_next(req, &i, &name, &value) == 1 && i <= 64) {
		last = value;
		for (j = i; evfcgi_param_next(req, &j, &n2, &v2) == 1; )
			if (strcmp(n2, name) == 0)
				last = v2;
		value = param(req, name);
		CHECK(value != NULL && strcmp(value, last) == 0, "param %s "
		    "reads \"%s\", its last pair says \"%s\"", name,
		    value != NULL ? value : "(null)", last);
		if (strcmp(name, "REQUEST_METHOD") == 0)
			method = last;
	}
	if (i <= 64)
		CHECK(strcmp(evfcgi_method(req), method) == 0, "method \"%s\","
		    " its last pair says \"%s\"", evfcgi_method(req), method);
}

static void
handler(struct evfcgi_req *req, void *arg)
{
	struct slot	*s = NULL;
	const char	*acts;
	size_t		 i;

	(void)arg;
	check_params(req);
	for (i = 0; i < MAX_SLOTS && s == NULL; i++)
		if (!fz->slots[i].held)
			s = &fz->slots[i];
	if (s == NULL) {
		(void)evfcgi_respond_error(req, 503, "no slot");
		return;
	}
	CHECK(slot_of(req) == NULL, "a handler for a request held already");
	memset(s, 0, sizeof(*s));
	s->req = req;
	s->held = 1;
	if ((acts = param(req, "FUZZ_ID")) != NULL)
		s->id = (unsigned)atoi(acts);
	s->authorizer = evfcgi_role(req) == EVFCGI_AUTHORIZER;
	evfcgi_on_abort(req, on_abort, s);
	if ((acts = param(req, "DO")) != NULL)
		run_actions(s, acts);
}

static int
error_page(struct evfcgi_req *req, int status, const char *detail,
    const char **ctype, char *buf, size_t size, void *arg)
{
	int	 mode = fz->errpage;

	(void)arg;
	(void)detail;
#ifdef FUZZ_SKIP_ITEM2
	if (mode == 2 || mode == 3)	/* issue 35 item 2 */
		mode = 1;
#endif
	switch (mode) {
	case 0:
		return -1;
	case 2:
		*ctype = "text/html\r\nX-Injected: 1";
		return snprintf(buf, size, "%d\n", status);
	case 3:
		*ctype = long_ctype;
		return snprintf(buf, size, "%d\n", status);
	case 4:
		return -1;
	case 5:
		return (int)size + 1;
	case 6:
		return snprintf(buf, size, "%d %s %s\n", status,
		    evfcgi_path(req), param(req, "DO") != NULL ?
		    "do" : "-");
	case 7:
		return 0;
	}
	*ctype = "text/html";
	return snprintf(buf, size, "<p>%d</p>\n", status);
}

/* ---- The script ---------------------------------------------------- */

/* Decodes the escapes of word w in place; returns its length. */
static size_t
unescape(char *w)
{
	char	*o = w, *p = w;
	char	 h[3] = { 0 };

	while (*p != '\0') {
		if (*p != '\\' || p[1] == '\0') {
			*o++ = *p++;
			continue;
		}
		p++;
		switch (*p) {
		case '0': *o++ = '\0'; p++; break;
		case 'r': *o++ = '\r'; p++; break;
		case 'n': *o++ = '\n'; p++; break;
		case 's': *o++ = ' '; p++; break;
		case 'x':
			if (p[1] != '\0' && p[2] != '\0') {
				h[0] = p[1];
				h[1] = p[2];
				*o++ = (char)strtoul(h, NULL, 16);
				p += 3;
				break;
			}
			/* FALLTHROUGH */
		default:
			*o++ = *p++;
		}
	}
	return (size_t)(o - w);
}

static unsigned long
num(const char *w, unsigned long dflt, unsigned long max)
{
	unsigned long	 n;

	if (w == NULL || *w < '0' || *w > '9')
		return dflt;
	n = strtoul(w, NULL, 10);
	return n > max ? max : n;
}

/* Content from a word: TEXT (escapes decoded) or #N bytes of the blob. */
static size_t
content(char *w, const char **p)
{
	if (w == NULL) {
		*p = "";
		return 0;
	}
	if (w[0] == '#') {
		*p = blob;
		return num(w + 1, 0, FCGI_MAX_CONTENT);
	}
	*p = w;
	return unescape(w);
}

/* Appends the pair "NAME=VALUE" (escapes decoded) to id's pending bytes. */
static void
add_nv(uint16_t id, char *w)
{
	struct idst	*st = id_get(fz->p, id);
	char		*eq;
	size_t		 nl, vl;

	if (st == NULL)
		return;
	if ((eq = strchr(w, '=')) == NULL)
		eq = w + strlen(w);
	else
		*eq++ = '\0';
	nl = unescape(w);
	vl = unescape(eq);
#ifdef FUZZ_SKIP_ITEM6
	/* Issue 35 item 6: a NUL in a name or value reads two ways. */
	if (memchr(w, '\0', nl) != NULL || memchr(eq, '\0', vl) != NULL)
		return;
#endif
	if (fcgi_nv_encode(NULL, 0, w, nl, eq, vl) <= sizeof(st->pend) -
	    st->pendlen)
		st->pendlen += fcgi_nv_encode(st->pend + st->pendlen,
		    sizeof(st->pend) - st->pendlen, w, nl, eq, vl);
}

/* One PARAMS record of the first n pending bytes (SIZE_MAX: all). */
static void
send_params(uint16_t id, size_t n)
{
	struct idst	*st = id_get(fz->p, id);

	if (st == NULL) {
		send_rec(FCGI_PARAMS, id, NULL, 0);
		return;
	}
	if (n > st->pendlen)
		n = st->pendlen;
	send_rec(FCGI_PARAMS, id, st->pend, n);
	memmove(st->pend, st->pend + n, st->pendlen - n);
	st->pendlen -= n;
}

static void
send_begin(uint16_t id, unsigned role, unsigned flags)
{
	uint8_t	 b[16];

	fcgi_begin_encode(b, id, (uint16_t)role, (uint8_t)flags);
	send_bytes(b, sizeof(b));
}

/* get ID URI [NAME=VALUE...]: a whole request of one step. */
static void
step_get(uint16_t id, char **w, int nw)
{
	unsigned	 role = 1, flags = FCGI_KEEP_CONN;
	char		 idbuf[32];
	int		 i;

	for (i = 0; i < nw; i++) {
		if (strncmp(w[i], "keep=", 5) == 0)
			flags = (unsigned)num(w[i] + 5, 1, 255);
		else if (strncmp(w[i], "role=", 5) == 0)
			role = (unsigned)num(w[i] + 5, 1, 65535);
	}
	send_begin(id, role, flags);
	snprintf(idbuf, sizeof(idbuf), "FUZZ_ID=%u", id);
	add_nv(id, idbuf);
	add_nv(id, (char []){ "REQUEST_METHOD=GET" });
	for (i = 0; i < nw; i++) {
		if (i == 0) {
			char	 uri[MAX_LINE + 16];

			snprintf(uri, sizeof(uri), "REQUEST_URI=%s", w[0]);
			add_nv(id, uri);
		} else if (strncmp(w[i], "keep=", 5) != 0 &&
		    strncmp(w[i], "role=", 5) != 0)
			add_nv(id, w[i]);
	}
	send_params(id, SIZE_MAX);
	send_params(id, SIZE_MAX);
	send_rec(FCGI_STDIN, id, NULL, 0);
}

/* pe's end goes: with unread data (a reset) or plainly. */
static void
peer_close(struct peer *pe, int reset)
{
	struct linger	 lg = { 1, 0 };

	if (pe->fd == -1)
		return;
	/* On a socketpair the engine sees ECONNRESET when the peer leaves
	   bytes unread (hold first); SO_LINGER is what a TCP peer does. */
	if (reset)
		setsockopt(pe->fd, SOL_SOCKET, SO_LINGER, &lg, sizeof(lg));
	close(pe->fd);
	pe->fd = -1;
}

/* pe, a new connection: the old one closed, the ids forgotten. */
static void
peer_new(struct peer *pe)
{
	int	 sv[2];

	peer_close(pe, 0);
	if (fz->freed)
		return;
	if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) == -1)
		abort();
	note_fd(sv[0]);
	note_fd(sv[1]);
	if (evfcgi_adopt(fz->srv, sv[0]) == -1)
		abort();
	fcntl(sv[1], F_SETFL, O_NONBLOCK);
	pe->fd = sv[1];
	pe->eof = 0;
	pe->cut = 0;
	pe->inlen = 0;
	pe->nids = 0;
	pe->sent_bad = 0;
	evbuffer_drain(pe->out, evbuffer_get_length(pe->out));
	evbuffer_drain(pe->sent, evbuffer_get_length(pe->sent));
}

/*
 * The drain's deadline, now: the engine's timer made active (no public
 * hook: server.h's timer, as libevent would fire it).  Issue 35 item 4:
 * in the turn that ends evfcgi_run(), every connection that still owes
 * an answer is reset, so that an application whose main returns then
 * never delivers a cut answer as whole.
 */
static void
drain_deadline(void)
{
	struct evfcgi_stats	 st;

	if (!evtimer_pending(fz->srv->srv_drain_ev, NULL))
		return;
	/* The deadline cuts; its grace then closes what is left. */
	event_active(fz->srv->srv_drain_ev, EV_TIMEOUT, 1);
	loop_once();
	if (evtimer_pending(fz->srv->srv_drain_ev, NULL)) {
		event_active(fz->srv->srv_drain_ev, EV_TIMEOUT, 1);
		loop_once();
	}
#ifndef FUZZ_SKIP_ITEM4
	evfcgi_get_stats(fz->srv, &st);
	CHECK(st.connections == 0, "the drain's deadline left %llu "
	    "connections open, %llu requests unfinished",
	    (unsigned long long)st.connections,
	    (unsigned long long)st.requests_active);
#else
	(void)st;
#endif
}

/* Runs one step of w[0..nw). */
static void
step(char **w, int nw)
{
	const char	*c;
	size_t		 len;
	uint16_t	 id = (uint16_t)num(nw > 1 ? w[1] : NULL, 1, 65535);
	struct slot	*s;
	int		 i;

	if (fz->freed && strcmp(w[0], "read") != 0)
		return;
	if (strcmp(w[0], "begin") == 0)
		send_begin(id, (unsigned)num(nw > 2 ? w[2] : NULL, 1, 65535),
		    (unsigned)num(nw > 3 ? w[3] : NULL, 1, 255));
	else if (strcmp(w[0], "nv") == 0)
		for (i = 2; i < nw; i++)
			add_nv(id, w[i]);
	else if (strcmp(w[0], "params") == 0)
		send_params(id, num(nw > 2 ? w[2] : NULL, SIZE_MAX, SIZE_MAX));
	else if (strcmp(w[0], "get") == 0 && nw > 2)
		step_get(id, w + 2, nw - 2);
	else if (strcmp(w[0], "stdin") == 0 || strcmp(w[0], "data") == 0) {
		len = content(nw > 2 ? w[2] : NULL, &c);
		send_rec(w[0][0] == 's' ? FCGI_STDIN : FCGI_DATA, id, c, len);
	} else if (strcmp(w[0], "abort") == 0)
		send_rec(FCGI_ABORT_REQUEST, id, NULL, 0);
	else if (strcmp(w[0], "values") == 0) {
		uint8_t	 b[1024];
		size_t	 bl = 0, nl;

		for (i = 1; i < nw; i++) {
			nl = unescape(w[i]);
			if (fcgi_nv_encode(NULL, 0, w[i], nl, "", 0) <=
			    sizeof(b) - bl)
				bl += fcgi_nv_encode(b + bl, sizeof(b) - bl,
				    w[i], nl, "", 0);
		}
		send_rec(FCGI_GET_VALUES, 0, b, bl);
	} else if (strcmp(w[0], "rec") == 0 && nw > 2) {
		len = content(nw > 3 ? w[3] : NULL, &c);
		send_rec((uint8_t)num(w[1], 0, 255),
		    (uint16_t)num(w[2], 0, 65535), c, len);
	} else if (strcmp(w[0], "bytes") == 0 && nw > 1) {
		len = unescape(w[1]);
		send_bytes(w[1], len);
	} else if (strcmp(w[0], "shut") == 0) {
		peer_flush();
		if (fz->p->fd != -1)
			shutdown(fz->p->fd, SHUT_WR);
	} else if (strcmp(w[0], "read") == 0)
		peer_read(fz->p, num(nw > 1 ? w[1] : NULL, 1, INBUF));
	else if (strcmp(w[0], "hold") == 0)
		fz->autoread = 0;
	else if (strcmp(w[0], "auto") == 0)
		fz->autoread = 1;
	else if (strcmp(w[0], "reset") == 0 || strcmp(w[0], "close") == 0)
		peer_close(fz->p, w[0][0] == 'r');
	else if (strcmp(w[0], "new") == 0)
		peer_new(fz->p);
	else if (strcmp(w[0], "conn") == 0) {
		fz->p = &fz->peers[num(nw > 1 ? w[1] : NULL, 0, 99) % NPEERS];
		if (fz->p->fd == -1)
			peer_new(fz->p);
	}
	else if (strcmp(w[0], "loop") == 0)
		for (i = (int)num(nw > 1 ? w[1] : NULL, 1, 50); i > 1; i--)
			turn();
	else if (strcmp(w[0], "drain") == 0)
		evfcgi_drain(fz->srv);
	else if (strcmp(w[0], "deadline") == 0)
		drain_deadline();
	else if (strcmp(w[0], "default") == 0)
		evfcgi_route_default(fz->srv, num(nw > 1 ? w[1] : NULL, 1, 1) ?
		    handler : NULL, NULL);
	else if (strcmp(w[0], "errpage") == 0)
		fz->errpage = (int)num(nw > 1 ? w[1] : NULL, 0, 7);
	else if (strcmp(w[0], "app") == 0 && nw > 2) {
		if ((s = slot_of_id(id)) != NULL)
			run_actions(s, w[2]);
	} else if (strcmp(w[0], "free") == 0) {
		evfcgi_server_free(fz->srv);
		fz->freed = 1;
		fz->srv = NULL;
	}
	turn();
}

/* Splits line into at most max words; returns how many. */
static int
words(char *line, char **w, int max)
{
	int	 n = 0;
	char	*save = NULL, *t;

	for (t = strtok_r(line, " \t\r", &save); t != NULL && n < max;
	    t = strtok_r(NULL, " \t\r", &save))
		w[n++] = t;
	return n;
}

/* limit NAME N: the limits the server is made with. */
static void
set_limit(struct evfcgi_limits *lim, char **w, int nw)
{
	size_t	 n;

	if (nw < 3)
		return;
	n = num(w[2], 0, 1 << 24);
	if (strcmp(w[1], "high") == 0)
		lim->high_water = n;
	else if (strcmp(w[1], "low") == 0)
		lim->low_water = n;
	else if (strcmp(w[1], "reqs") == 0)
		lim->max_reqs = n;
	else if (strcmp(w[1], "connreq") == 0)
		lim->max_conn_requests = n;
	else if (strcmp(w[1], "params") == 0)
		lim->max_params = n;
	else if (strcmp(w[1], "body") == 0)
		lim->max_body = n;
	else if (strcmp(w[1], "queued") == 0)
		lim->max_queued = n;
	else if (strcmp(w[1], "input") == 0)
		lim->max_input = n;
}

/* The server with its routes, on a new base; NULL when lim is refused. */
static struct evfcgi_server *
server_make(void)
{
	struct evfcgi_server	*srv;

	if ((srv = evfcgi_server_new(fz->base, &fz->lim)) == NULL)
		return NULL;
	if (evfcgi_route(srv, "/r", handler, NULL) == -1 ||
	    evfcgi_route_prefix(srv, "/p/", handler, NULL) == -1 ||
	    evfcgi_route_methods(srv, "/m", "GET,POST", handler, NULL) == -1 ||
	    evfcgi_route(srv, "/b", handler, NULL) == -1 ||
	    evfcgi_route_body_limit(srv, "/b", 0, 100) == -1 ||
	    evfcgi_route_ex(srv, "/s", EVFCGI_ROUTE_STREAM, NULL, handler,
	    NULL) == -1 ||
	    evfcgi_route_ex(srv, "/", EVFCGI_ROUTE_PREFIX |
	    EVFCGI_ROUTE_AUTHORIZER, NULL, handler, NULL) == -1 ||
	    evfcgi_route_ex(srv, "/", EVFCGI_ROUTE_PREFIX | EVFCGI_ROUTE_FILTER,
	    NULL, handler, NULL) == -1 ||
	    evfcgi_set_error_page(srv, error_page, NULL) == -1)
		abort();
	return srv;
}

/*
 * The end: the peer reads what is left and goes, the application answers
 * what it still holds (the engine answers a peer that only half-closed,
 * so a request held for ever holds its connection), the connection
 * closes, and then nothing may be held: no request, input, output,
 * descriptor or reference.
 */
static void
finish_all(void)
{
	struct evfcgi_stats	 st;
	struct evfcgi_req	*req;
	int			 i, fd;

	fz->autoread = 1;
	for (i = 0; i < 20 && !fz->freed; i++)
		turn();
	for (i = 0; i < NPEERS; i++)
		peer_close(&fz->peers[i], 0);
	for (i = 0; i < 5 && !fz->freed; i++)
		loop_once();
	for (i = 0; i < MAX_SLOTS && !fz->freed; i++)
		if (fz->slots[i].held && !fz->slots[i].detached) {
			req = fz->slots[i].req;
			release(&fz->slots[i]);
			(void)evfcgi_respond_error(req, 503, "the end");
		}
	for (i = 0; i < 200 && !fz->freed; i++) {
		evfcgi_get_stats(fz->srv, &st);
		if (st.connections == 0 && st.lingering == 0)
			break;
		loop_once();
	}
	if (!fz->freed) {
		evfcgi_get_stats(fz->srv, &st);
		/* A connection that cut an answer waits 100 ms to reset,
		   holding what it held: server_free() lets it go. */
		CHECK(st.connections > 0 ||
		    (st.requests_active == 0 && st.bytes_input == 0),
		    "after the peer went: %llu connections, %llu requests, "
		    "%llu bytes input", (unsigned long long)st.connections,
		    (unsigned long long)st.requests_active,
		    (unsigned long long)st.bytes_input);
		evfcgi_server_free(fz->srv);
	}
	for (i = 0; i < MAX_SLOTS; i++)
		CHECK(!fz->slots[i].held || fz->slots[i].detached, "a request "
		    "the application held was freed without its abort "
		    "callback");
	event_base_free(fz->base);
	CHECK(fz->refs_out == 0, "%ld write_ref_free blocks never freed",
	    fz->refs_out);
	for (fd = fz->fd_floor; fd <= fz->fd_top + 4 && fd < MAX_FD; fd++)
		CHECK(fz->fd_open[fd] || fcntl(fd, F_GETFD) == -1,
		    "descriptor %d left open: %s", fd, fd_name(fd));
}

/* What fd is, for a report. */
static const char *
fd_name(int fd)
{
	static char	 buf[256];
	char		 path[64];
	ssize_t		 n;

	snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
	if ((n = readlink(path, buf, sizeof(buf) - 1)) < 0)
		n = 0;
	buf[n] = '\0';
	return buf;
}

static void
setup_once(void)
{
	static int	 done;

	if (done)
		return;
	done = 1;
	signal(SIGPIPE, SIG_IGN);
	trace = getenv("FUZZ_API_TRACE") != NULL;
	if (getenv("FUZZ_API_LOG") == NULL)
		(void)evfcgi_set_log(NULL, -1, NULL, NULL);
	memset(blob, 'b', sizeof(blob));
	memset(long_ctype, 't', sizeof(long_ctype) - 1);
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t len)
{
	static struct fz	 state;
	char			 line[MAX_LINE + 1], *w[64];
	size_t			 off, n;
	const uint8_t		*nl;
	int			 nw, steps = 0, started = 0, i;

	setup_once();
	fz = &state;
	memset(fz, 0, offsetof(struct fz, slots));
	memset(fz->slots, 0, sizeof(fz->slots));
	for (i = 0; i < NPEERS; i++) {
		fz->peers[i].fd = -1;
		if ((fz->peers[i].out = evbuffer_new()) == NULL ||
		    (fz->peers[i].sent = evbuffer_new()) == NULL)
			abort();
	}
	fz->p = &fz->peers[0];
	fz->autoread = 1;
	if ((fz->fd_floor = open("/dev/null", O_RDONLY | O_CLOEXEC)) == -1)
		abort();
	close(fz->fd_floor);
	fz->fd_top = fz->fd_floor;
	for (n = (size_t)fz->fd_floor; n < MAX_FD; n++)
		fz->fd_open[n] = fcntl((int)n, F_GETFD) != -1;
	evfcgi_limits_default(&fz->lim);
	fz->lim.max_params = 4096;
	fz->lim.max_body = 65536;
	fz->lim.high_water = 16384;
	fz->lim.low_water = 4096;
	fz->lim.max_reqs = 8;
	if ((fz->base = event_base_new()) == NULL)
		abort();
	for (off = 0; off < len && steps < MAX_STEPS; off += n + 1) {
		nl = memchr(data + off, '\n', len - off);
		n = nl != NULL ? (size_t)(nl - (data + off)) : len - off;
		if (n > MAX_LINE || n == 0 || data[off] == '#')
			continue;
		memcpy(line, data + off, n);
		line[n] = '\0';
		if ((nw = words(line, w, 64)) == 0)
			continue;
		if (strcmp(w[0], "limit") == 0) {
			if (!started)
				set_limit(&fz->lim, w, nw);
			continue;
		}
		if (!started) {
			started = 1;
			if ((fz->srv = server_make()) == NULL)
				break;	/* limits refused: nothing to run */
			peer_new(fz->p);
		}
		step(w, nw);
		steps++;
	}
	if (fz->srv != NULL || fz->freed)
		finish_all();
	else
		event_base_free(fz->base);
	for (i = 0; i < NPEERS; i++) {
		evbuffer_free(fz->peers[i].out);
		evbuffer_free(fz->peers[i].sent);
	}
	return 0;
}
