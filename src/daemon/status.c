/*
 * status.c: evfcgid's /status: the server's counters and limits as JSON,
 * or with ?format=prometheus in the Prometheus text exposition format.
 * The daemon's own route, on the public evfcgi.h API, apart from the demo
 * routes.
 */
#include <sys/types.h>

#include <inttypes.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <event2/buffer.h>

#include "evfcgi.h"
#include "status.h"

static void	route_status(struct evfcgi_req *, void *);
static void	status_prometheus(struct evfcgi_req *);
static int	query_has(const char *, const char *);

static time_t			status_started;
static uint64_t			status_max_size;

int
status_register(struct evfcgi_server *srv, uint64_t max_size)
{
	status_max_size = max_size;
	status_started = time(NULL);
	return evfcgi_route(srv, "/status", route_status, NULL);
}

/* Whether the query q holds the pair kv ("a=b&c=d" holds "c=d"). */
static int
query_has(const char *q, const char *kv)
{
	size_t	 len = strlen(kv);

	while (q != NULL && *q != '\0') {
		if (strncmp(q, kv, len) == 0 && (q[len] == '&' ||
		    q[len] == '\0'))
			return 1;
		if ((q = strchr(q, '&')) != NULL)
			q++;
	}
	return 0;
}

/*
 * /status as JSON, or with ?format=prometheus in the Prometheus text
 * exposition format.
 */
static void
route_status(struct evfcgi_req *req, void *arg)
{
	const struct evfcgi_limits	*lim;
	struct evfcgi_stats		 st;
	char				 buf[4096];
	int				 n;

	(void)arg;
	if (query_has(evfcgi_query(req), "format=prometheus")) {
		status_prometheus(req);
		return;
	}
	evfcgi_get_stats(evfcgi_req_server(req), &st);
	lim = evfcgi_get_limits(evfcgi_req_server(req));
	n = snprintf(buf, sizeof(buf),
	    "{\"pid\":%d,\"uptime_s\":%lld,"
	    "\"connections\":%" PRIu64 ",\"connections_total\":%" PRIu64 ","
	    "\"requests\":%" PRIu64 ",\"requests_active\":%" PRIu64 ","
	    "\"bytes_queued\":%" PRIu64 ",\"peak_bytes_queued\":%" PRIu64 ","
	    "\"bytes_input\":%" PRIu64 ",\"peak_bytes_input\":%" PRIu64 ","
	    "\"stalled_sockets\":%" PRIu64 ",\"holding_sockets\":%" PRIu64
	    ",\"share_bytes\":%" PRIu64 ",\"lingering\":%" PRIu64 ","
	    "\"overloaded\":%" PRIu64 ","
	    "\"rejected\":%" PRIu64 ",\"aborted\":%" PRIu64 ","
	    "\"closed_on_error\":%" PRIu64 ",\"denied\":%" PRIu64 ","
	    "\"bytes_written\":%" PRIu64 ",\"body_bytes\":%" PRIu64 ","
	    "\"answered\":{\"2xx\":%" PRIu64 ",\"3xx\":%" PRIu64 ","
	    "\"4xx\":%" PRIu64 ",\"5xx\":%" PRIu64 "},"
	    "\"limit_answers\":{\"413\":%" PRIu64 ",\"431\":%" PRIu64 ","
	    "\"503\":%" PRIu64 "},\"timeouts\":{\"header\":%" PRIu64 ","
	    "\"record\":%" PRIu64 ",\"idle\":%" PRIu64 ",\"write\":%" PRIu64
	    "},"
	    "\"limits\":{\"max_conns\":%zu,\"max_reqs\":%zu,"
	    "\"max_conn_requests\":%zu,\"max_params\":%zu,\"max_body\":%zu,"
	    "\"max_size\":%" PRIu64 ",\"high_water\":%zu,\"low_water\":%zu,"
	    "\"max_queued\":%zu,\"share_floor\":%zu,\"max_input\":%zu,\"sndbuf\":%zu,\"header_timeout\":%d,"
	    "\"idle_timeout\":%d,\"write_timeout\":%d,\"drain_timeout\":%d}}\n",
	    (int)getpid(), (long long)(time(NULL) - status_started),
	    st.connections, st.connections_total, st.requests_total,
	    st.requests_active, st.bytes_queued, st.peak_bytes_queued,
	    st.bytes_input, st.peak_bytes_input,
	    st.stalled, st.holding, st.share, st.lingering, st.overloaded, st.rejected, st.aborted,
	    st.closed_on_error, st.denied, st.bytes_written, st.body_bytes,
	    st.answered_2xx, st.answered_3xx, st.answered_4xx, st.answered_5xx,
	    st.status_413, st.status_431, st.status_503, st.timeouts_header,
	    st.timeouts_record, st.timeouts_idle, st.timeouts_write,
	    lim->max_conns, lim->max_reqs,
	    lim->max_conn_requests, lim->max_params, lim->max_body,
	    status_max_size, lim->high_water, lim->low_water, lim->max_queued,
	    lim->share_floor,
	    lim->max_input,
	    lim->sndbuf, lim->header_timeout, lim->idle_timeout,
	    lim->write_timeout, lim->drain_timeout);
	evfcgi_respond(req, 200, "application/json", buf, (size_t)n);
}

/* One metric of /status?format=prometheus without labels of its own. */
struct prom_metric {
	const char	*pm_name;
	const char	*pm_type;
	const char	*pm_help;
	size_t		 pm_off;	/* a uint64_t in evfcgi_stats */
};

/* One labelled member of a family: label value and counter. */
struct prom_member {
	const char	*pr_value;
	size_t		 pr_off;
};

#define ST(f)	offsetof(struct evfcgi_stats, f)

static const struct prom_metric prom_metrics[] = {
	{ "evfcgid_connections", "gauge", "Connections open now.",
	    ST(connections) },
	{ "evfcgid_connections_total", "counter", "Connections accepted.",
	    ST(connections_total) },
	{ "evfcgid_requests_total", "counter",
	    "Requests begun (BEGIN_REQUEST accepted).", ST(requests_total) },
	{ "evfcgid_requests_active", "gauge", "Requests in flight.",
	    ST(requests_active) },
	{ "evfcgid_sent_bytes_total", "counter",
	    "Bytes written to the sockets (FastCGI records, all requests).",
	    ST(bytes_written) },
	{ "evfcgid_body_bytes_total", "counter",
	    "Response body bytes queued by handlers.", ST(body_bytes) },
	{ "evfcgid_queued_bytes", "gauge",
	    "Output waiting in all connections.", ST(bytes_queued) },
	{ "evfcgid_queued_bytes_peak", "gauge",
	    "Most output ever waiting in all connections.",
	    ST(peak_bytes_queued) },
	{ "evfcgid_input_bytes", "gauge",
	    "Request PARAMS and bodies held.", ST(bytes_input) },
	{ "evfcgid_input_bytes_peak", "gauge",
	    "Most request input ever held.", ST(peak_bytes_input) },
	{ "evfcgid_stalled_sockets", "gauge",
	    "Connections with output above the low watermark.",
	    ST(stalled) },
	{ "evfcgid_holding_sockets", "gauge",
	    "Connections holding output the kernel refused, sharing "
	    "max_queued.", ST(holding) },
	{ "evfcgid_share_bytes", "gauge",
	    "Output each of those may hold now.", ST(share) },
	{ "evfcgid_lingering_sockets", "gauge",
	    "Connections closed whose answer's last bytes the kernel still "
	    "holds (shut for writing, kept until sent).", ST(lingering) },
	{ "evfcgid_overloaded_total", "counter",
	    "Requests refused for load: FCGI_OVERLOADED or 503 from the "
	    "engine.", ST(overloaded) },
	{ "evfcgid_rejected_total", "counter",
	    "Requests over a size limit: 413 or 431 from the engine.",
	    ST(rejected) },
	{ "evfcgid_aborted_total", "counter",
	    "Requests aborted by the peer or cut with their connection.",
	    ST(aborted) },
	{ "evfcgid_closed_on_error_total", "counter",
	    "Connections closed for malformed input or a timeout.",
	    ST(closed_on_error) },
	{ "evfcgid_denied_total", "counter",
	    "Connections closed at accept: peer not allowed (--allow).",
	    ST(denied) }
};

static const struct prom_member prom_classes[] = {
	{ "2xx", ST(answered_2xx) }, { "3xx", ST(answered_3xx) },
	{ "4xx", ST(answered_4xx) }, { "5xx", ST(answered_5xx) }
};
static const struct prom_member prom_limits[] = {
	{ "413", ST(status_413) }, { "431", ST(status_431) },
	{ "503", ST(status_503) }
};
static const struct prom_member prom_timeouts[] = {
	{ "header", ST(timeouts_header) }, { "record", ST(timeouts_record) },
	{ "idle", ST(timeouts_idle) }, { "write", ST(timeouts_write) }
};

#undef ST

/* The stats counter at off. */
#define STAT(st, off)	(*(const uint64_t *)(const void *) \
			    ((const char *)(st) + (off)))

/*
 * Appends one labelled family (HELP, TYPE, a sample per member) to b;
 * wl is the worker label ("worker=\"2\"," or "").
 */
static void
prom_family(struct evbuffer *b, const struct evfcgi_stats *st,
    const char *name, const char *help, const char *label, const char *wl,
    const struct prom_member *m, size_t n)
{
	size_t	 i;

	evbuffer_add_printf(b, "# HELP %s %s\n# TYPE %s counter\n", name, help,
	    name);
	for (i = 0; i < n; i++)
		evbuffer_add_printf(b, "%s{%s%s=\"%s\"} %" PRIu64 "\n", name,
		    wl, label, m[i].pr_value, STAT(st, m[i].pr_off));
}

/*
 * /status?format=prometheus: the text exposition format 0.0.4, every
 * sample labelled worker="N" under --workers (each worker counts its
 * own).
 */
static void
status_prometheus(struct evfcgi_req *req)
{
	const struct evfcgi_limits	*lim;
	struct evfcgi_stats		 st;
	struct evbuffer			*b;
	const char			*w = getenv("EVFCGID_WORKER");
	char				 wl[48] = "", one[48] = "";
	size_t				 i, len;

	evfcgi_get_stats(evfcgi_req_server(req), &st);
	lim = evfcgi_get_limits(evfcgi_req_server(req));
	if (w != NULL && strspn(w, "0123456789") == strlen(w) && *w != '\0' &&
	    strlen(w) < 8) {
		snprintf(wl, sizeof(wl), "worker=\"%s\",", w);
		snprintf(one, sizeof(one), "{worker=\"%s\"}", w);
	}
	if ((b = evbuffer_new()) == NULL) {
		evfcgi_respond_error(req, 503, "out of memory");
		return;
	}
	evbuffer_add_printf(b, "# HELP evfcgid_start_time_seconds When the "
	    "process started, in seconds since the epoch.\n# TYPE "
	    "evfcgid_start_time_seconds gauge\nevfcgid_start_time_seconds%s "
	    "%lld\n", one, (long long)status_started);
	for (i = 0; i < sizeof(prom_metrics) / sizeof(prom_metrics[0]); i++)
		evbuffer_add_printf(b, "# HELP %s %s\n# TYPE %s %s\n%s%s %"
		    PRIu64 "\n", prom_metrics[i].pm_name,
		    prom_metrics[i].pm_help, prom_metrics[i].pm_name,
		    prom_metrics[i].pm_type, prom_metrics[i].pm_name, one,
		    STAT(&st, prom_metrics[i].pm_off));
	prom_family(b, &st, "evfcgid_responses_total",
	    "Requests answered, by status class.", "class", wl, prom_classes,
	    sizeof(prom_classes) / sizeof(prom_classes[0]));
	prom_family(b, &st, "evfcgid_limit_answers_total",
	    "Requests answered with a limit's status (413 body or size, 431 "
	    "params, 503 load).", "status", wl, prom_limits,
	    sizeof(prom_limits) / sizeof(prom_limits[0]));
	prom_family(b, &st, "evfcgid_timeouts_total",
	    "Connections closed by a timeout, by kind.", "kind", wl,
	    prom_timeouts, sizeof(prom_timeouts) / sizeof(prom_timeouts[0]));
	evbuffer_add_printf(b, "# HELP evfcgid_max_conns The connection cap "
	    "(--max-conns).\n# TYPE evfcgid_max_conns gauge\n"
	    "evfcgid_max_conns%s %zu\n# HELP evfcgid_max_queued_bytes The "
	    "cap on output queued (--max-queued).\n# TYPE "
	    "evfcgid_max_queued_bytes gauge\nevfcgid_max_queued_bytes%s %zu\n",
	    one, lim->max_conns, one, lim->max_queued);
	len = evbuffer_get_length(b);
	if (evfcgi_header(req, 200, "text/plain; version=0.0.4; charset=utf-8",
	    (long long)len) == 0)
		evfcgi_write_buffer(req, b, len);
	evbuffer_free(b);
	evfcgi_finish(req);
}
