/*
 * req_struct.h: the request itself, for the request's own files alone
 * (request.c, response.c, req_data.c, req_state.c, reqdata.c, reply.c,
 * testing.c, and its unit test): every other file reaches a request
 * through request.h's functions and reads it through its head (req_h()).
 */
#ifndef REQ_STRUCT_H
#define REQ_STRUCT_H

#include "request.h"

/* A streamed body's hand-over to its handler (EVFCGI_ROUTE_STREAM). */
struct req_stream {
	evfcgi_body_cb		 s_cb;		/* evfcgi_on_body() */
	void			*s_arg;
	uint64_t		 s_max;		/* evfcgi_body_limit(), 0: none */
	unsigned		 s_told:1;	/* done 1 was handed over */
	unsigned		 s_paused:1;	/* input held: too much waits */
};

/* A filter's DATA stream (req_data.c), beside its STDIN. */
struct req_fdata {
	struct evbuffer		*d_buf;		/* kept in the pool, or NULL */
	size_t			 d_charged;	/* of the global input */
	long long		 d_len;		/* FCGI_DATA_LENGTH, -1: none */
};

/* The output's body from a producer (evfcgi_produce()). */
struct req_prod {
	evfcgi_producer		 p_fn;
	void			*p_arg;
	size_t			 p_used;	/* bytes it wrote so far */
};

/* The output's body from a descriptor (evfcgi_write_fd()), by a producer. */
struct req_fdsrc {
	int			 f_fd;		/* -1: none */
	uint64_t		 f_off;
	uint64_t		 f_left;
};

struct evfcgi_req {
	struct req_head		 r_h;		/* first: req_h() */
	struct req_link		*r_link;
	/*
	 * The application's code runs inside the engine's own ending or
	 * answer of r (its abort callback, the error page maker): every
	 * public call that would answer or end r returns -1 meanwhile.
	 */
	unsigned		 r_app_locked:1;
	unsigned		 r_nobody:1;	/* HEAD: body writes dropped */
	unsigned		 r_is_head:1;	/* REQUEST_METHOD HEAD */
	const char		*r_method;	/* REQUEST_METHOD, once the
							   params are decoded */
	int			 r_reject;	/* status to answer, 0: none */
	size_t			 r_charged_params; /* of the global input */
	size_t			 r_charged_body;	/* cap, held until freed */
	/* Kept when the request goes back to the pool: */
	struct req_buf		 r_raw;		/* raw PARAMS */
	struct req_buf		 r_mem;		/* the pairs, NUL-ended */
	struct req_buf		 r_pathbuf;	/* what r_path points to */
	struct req_buf		 r_hdrs;	/* evfcgi_header_add() lines */
	struct req_buf		 r_typed;	/* the typed data's one block:
						   query, path params, cookies,
						   form (reqdata.c) */
	struct param		*r_pv;		/* parsed, into r_mem */
	size_t			 r_pvcap;
	struct evbuffer		*r_body;
	struct evfcgi_req	*r_next_free;	/* in the pool */
	/* Set afresh for each request: */
	size_t			 r_npv;
	const char		*r_path;
	evfcgi_abort_cb		 r_abort;
	void			*r_abort_arg;
	evfcgi_handler		 r_fn;		/* routed to, at end of PARAMS */
	void			*r_fn_arg;
	size_t			 r_plen;	/* of r_path, the route's part */
	uint64_t		 r_route_max;	/* the route's body cap, 0: none */
	int			 r_typed_made;	/* r_typed holds the block */
	/* Input: its body, buffered or streamed (h_stream), and DATA. */
	uint64_t		 r_body_seen;	/* bytes that came */
	long long		 r_clen;	/* CONTENT_LENGTH, -1: unknown */
	struct req_stream	 r_st;
	struct req_fdata	 r_dat;
	/* Output: the header's, the body's way, and what was queued. */
	long long		 r_clen_out;	/* Content-Length sent, -1 */
	unsigned		 r_len_bad:1;	/* body not as declared: told */
	unsigned		 r_admitted:1;	/* its writes pass the output
						   cap: evfcgi_respond()
						   admitted the whole answer,
						   or its 503 page */
	unsigned		 r_short:1;	/* a body write refused there:
						   the answer is cut */
	struct req_prod		 r_prod;
	struct req_fdsrc	 r_fdsrc;
};

/* The steps each machine has: bit (1 << to) of steps[from] (req_state.c). */
extern const unsigned	req_in_steps[REQ_IN_N], req_out_steps[REQ_OUT_N];

/* Logs the step from r's state to `to` that its machine has not; -1. */
int	req_step_refused(const struct evfcgi_req *r, int out, unsigned to);

/* Logs, at LOG_DEBUG, that r's answer ended. */
void	req_ended_log(const struct evfcgi_req *r);

/*
 * Moves r's input to s, keeping its link's count of each input state.
 * Returns 0, or -1 (logged, r unchanged) when the machine has no such step.
 */
static inline int
req_set_in(struct evfcgi_req *r, enum req_in s)
{
	if ((req_in_steps[r->r_h.h_in] & (1u << s)) == 0)
		return req_step_refused(r, 0, s);
	r->r_link->rl_nin[r->r_h.h_in]--;
	r->r_link->rl_nin[s]++;
	r->r_h.h_in = s;
	return 0;
}

/*
 * Moves r's output to s; at OUT_ENDED r is no longer an active request.
 * Returns 0, or -1 (logged, r unchanged) when the machine has no such step.
 */
static inline int
req_set_out(struct evfcgi_req *r, enum req_out s)
{
	if ((req_out_steps[r->r_h.h_out] & (1u << s)) == 0)
		return req_step_refused(r, 1, s);
	r->r_h.h_out = s;
	if (s == OUT_ENDED) {
		r->r_link->rl_env->re_st->requests_active--;
		req_ended_log(r);
	}
	return 0;
}

#endif /* REQ_STRUCT_H */
