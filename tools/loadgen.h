/*
 * loadgen.h: what the two load generators, fcgi_load and http_load, share
 * around their protocols.
 *
 * The run (struct lg_run): one event base, an end after a count of
 * requests or a number of seconds, a time limit that cuts everything off,
 * a progress tick, per-request errors printed up to a cap, status counts
 * and the descriptor budget.  The client slot (struct lg_slot): one
 * non-blocking socket, dialled from a chosen source address if the tool
 * names one, with SO_RCVBUF set before connect(),
 * watched for readiness with a timeout, paused, and redialled once when a
 * kept socket dies under a request.  The pacer (struct lg_pace): a
 * reader's rate limit, held from the first byte.  What a request is, and
 * what is printed at the end, stays with each tool.
 */
#ifndef LOADGEN_H
#define LOADGEN_H

#include <sys/types.h>
#include <sys/socket.h>

#include <stdarg.h>
#include <stdint.h>

#include <event2/event.h>
#include <event2/event_struct.h>

#define LG_RESERVED_FDS	10	/* descriptors never used for connections */
#define LG_ERRORS_SHOWN	20	/* per-request errors printed, unless all */
#define LG_STATUS_MAX	1000	/* status codes counted: 1..999 */
#define LG_PACE_BURST	0.5	/* seconds of reading a pause may save up */
#define LG_PACE_TICK	0.1	/* seconds: the least reading worth a wake */

struct lg_run {
	struct event_base	*lr_base;
	const char		*lr_progname;
	char			*lr_rbuf;	/* one read buffer for all */
	/* Set before lg_run(); zero means none. */
	long long		 lr_count;	/* stop when this many ended */
	double			 lr_seconds;	/* stop, dropping what is in
						   flight */
	double			 lr_limit;	/* cut off (lr_limit_hit) */
	int			 lr_sig_limit;	/* SIGTERM, SIGINT: as lr_limit */
	double			 lr_tick_secs;	/* call lr_tick this often */
	void			(*lr_tick)(void *);
	void			*lr_arg;	/* for lr_tick */
	int			 lr_show_all;	/* print every error */
	const char		*lr_hidden_note; /* said once errors hide */
	/* The run. */
	int			 lr_stopping;
	int			 lr_limit_hit;
	int64_t			 lr_start_us, lr_end_us;
	long long		 lr_started, lr_ended;
	long long		 lr_errors;	/* lg_error() calls */
	long long		 lr_status[LG_STATUS_MAX];
};

/* One connection slot; the tool's struct for a connection holds one. */
struct lg_slot {
	struct lg_run		*ls_run;
	int			 ls_fd;		/* -1: no socket */
	struct event		 ls_ev;		/* readiness plus timeout */
	short			 ls_watch;	/* what ls_ev waits for */
	const struct timeval	*ls_tv;		/* ... and how long */
	struct event		 ls_wake;	/* a pause or a retry is over */
	int			 ls_paused;
	int			 ls_connected;	/* known established */
	const struct sockaddr	*ls_src;	/* dial from here; NULL: the
						   kernel's choice */
	socklen_t		 ls_srclen;
	long long		 ls_done;	/* exchanges ended on this
						   socket (the tool counts) */
	event_callback_fn	 ls_io;
	void			(*ls_woke)(void *);
	void			*ls_arg;
};

/*
 * A rate in bytes a second for readers that each keep a clock: the time
 * until which what they have read has used their line.  The clock starts
 * when the reader does and never lags now by more than a burst, so a quiet
 * peer does not let a reader save up more than LG_PACE_BURST seconds.
 */
struct lg_pace {
	double			 lp_rate;	/* bytes a second, > 0 */
	size_t			 lp_burst;	/* most bytes one read takes */
	size_t			 lp_tick;	/* fewest worth waking for */
	int64_t			 lp_burst_us;	/* lp_burst's time on the line */
};

long long	 lg_fd_budget(void);
int		 lg_init(struct lg_run *, const char *, size_t, const char **);
int		 lg_run(struct lg_run *, void (*)(void *), void *);
void		 lg_free(struct lg_run *);
void		 lg_stop(struct lg_run *);
int		 lg_more(const struct lg_run *);
void		 lg_ended(struct lg_run *);
void		 lg_status(struct lg_run *, int);
void		 lg_error(struct lg_run *, const char *, const char *, ...)
		    __attribute__((format(printf, 3, 4)));
void		 lg_verror(struct lg_run *, const char *, const char *,
		    va_list) __attribute__((format(printf, 3, 0)));
long long	 lg_errors_hidden(const struct lg_run *);

void		 lg_slot_init(struct lg_slot *, struct lg_run *,
		    event_callback_fn, void (*)(void *), void *);
int		 lg_slot_dial(struct lg_slot *, const struct sockaddr *,
		    socklen_t, int, int, const char **);
void		 lg_slot_watch(struct lg_slot *, short,
		    const struct timeval *);
void		 lg_slot_pause(struct lg_slot *, const struct timeval *);
int		 lg_slot_redial(struct lg_slot *);
void		 lg_slot_close(struct lg_slot *);

int		 lg_pace_init(struct lg_pace *, double, size_t);
size_t		 lg_pace_due(const struct lg_pace *, int64_t, int64_t,
		    int64_t *);
int64_t		 lg_pace_spent(const struct lg_pace *, int64_t, int64_t,
		    size_t);

#endif /* LOADGEN_H */
