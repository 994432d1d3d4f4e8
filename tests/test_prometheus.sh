#!/bin/bash
# /status?format=prometheus: the Prometheus text exposition format 0.0.4,
# checked by a real parser (promtool check metrics when installed, else
# python3-prometheus-client's, plus the format's rules checked here: HELP
# and TYPE before each family's samples, names, counters in _total, no
# sample twice), with the counts it must show after known events (413,
# 431, 404, a header timeout, bytes sent); behind nginx; and under
# --workers 2, every sample labelled with its worker.
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/http.sh"
source "$(dirname "$0")/frontends.sh"

F=$TOP/tools/fcgi_load
PY=/usr/bin/python3
PROMTOOL=$(command -v promtool)

export PY PROMTOOL
# validate FILE: the exposition in FILE is valid; prints its samples, one
# "name{labels} value" a line, sorted, on stdout.  Says why not on stderr.
validate() {
	if [ -n "$PROMTOOL" ] && ! "$PROMTOOL" check metrics <"$1" >&2; then
		echo "# promtool check metrics failed" >&2
		return 1
	fi
	"$PY" - "$1" <<'PY'
import re, sys
from prometheus_client.parser import text_string_to_metric_families
text = open(sys.argv[1]).read()
name_re = re.compile(r'^[a-zA-Z_:][a-zA-Z0-9_:]*$')
help_seen, type_seen, fams_done, cur = {}, {}, set(), None
for n, line in enumerate(text.split('\n'), 1):
    if line == '':
        if n != text.count('\n') + 1:
            sys.exit('line %d: empty line' % n)
        continue
    if line.startswith('# HELP ') or line.startswith('# TYPE '):
        parts = line.split(' ', 3)
        if len(parts) < 4 or not name_re.match(parts[2]):
            sys.exit('line %d: bad %s line' % (n, parts[1]))
        (help_seen if parts[1] == 'HELP' else type_seen)[parts[2]] = parts[3]
        if parts[2] in fams_done:
            sys.exit('line %d: %s described after its samples' % (n, parts[2]))
        if parts[1] == 'TYPE' and parts[3] not in ('counter', 'gauge', 'histogram', 'summary', 'untyped'):
            sys.exit('line %d: unknown type %s' % (n, parts[3]))
        cur = parts[2]
        continue
    if line.startswith('#'):
        continue
    name = re.match(r'^([a-zA-Z_:][a-zA-Z0-9_:]*)', line)
    if name is None:
        sys.exit('line %d: no metric name' % n)
    name = name.group(1)
    if name != cur or name not in help_seen or name not in type_seen:
        sys.exit('line %d: %s without its own HELP and TYPE just before' % (n, name))
    if type_seen[name] == 'counter' and not name.endswith('_total'):
        sys.exit('line %d: counter %s does not end in _total' % (n, name))
    fams_done.add(name)
out, seen = [], set()
for fam in text_string_to_metric_families(text):
    for s in fam.samples:
        key = s.name + '{' + ','.join('%s="%s"' % kv for kv in sorted(s.labels.items())) + '}'
        if key in seen:
            sys.exit('sample %s twice' % key)
        seen.add(key)
        out.append('%s %d' % (key, s.value))
if not out:
    sys.exit('no samples')
print('\n'.join(sorted(out)))
PY
}

export -f validate

# metric SAMPLES NAME{LABELS}: the value of one sample in validate's output.
metric() { awk -v k="$2" '$1 == k { print $2 }' "$1"; }

# scrape ADDR OUT: /status?format=prometheus over FastCGI; the header block
# in OUT.h, the body in OUT.
scrape() {
	fcgi_req "$1" "/status?format=prometheus" >"$2.all"
	sed '/^\r$/q' "$2.all" >"$2.h"
	body_of <"$2.all" >"$2"
}

if ! "$PY" -c 'import prometheus_client.parser' 2>/dev/null; then
	not_ok "python3-prometheus-client is installed (the parser this test uses)"
	finish
fi
[ -n "$PROMTOOL" ] && echo "# validating with $PROMTOOL too"

start_evfcgid --max-params 32k --max-size 1k --max-body 1k --header-timeout 1
A=127.0.0.1:$EVFCGID_PORT
for i in 1 2 3; do fcgi_hello "$A"; done
fcgi_req "$A" "/size?2000" >/dev/null
fcgi_req "$A" "/size?1000" >/dev/null
fcgi_req "$A" /no/such >/dev/null
head -c 2000 /dev/zero >"$T/body"
fcgi_req "$A" /echo "$T/body" >/dev/null
"$F" -q -n 1 -p "HTTP_X_BIG=$(head -c 40000 /dev/zero | tr '\0' x)" "$A" /hello >/dev/null 2>&1
# A BEGIN_REQUEST and no PARAMS: cut by the 1 s header timeout.
exec 5<>"/dev/tcp/127.0.0.1/$EVFCGID_PORT"
printf '\001\001\000\001\000\010\000\000\000\001\001\000\000\000\000\000' >&5
sleep 1.6
exec 5>&-

scrape "$A" "$T/m1"
ct=$(header_value "$T/m1.h" Content-Type)
check "Content-Type is text/plain; version=0.0.4 ($ct)" \
	bash -c "[[ '$ct' == 'text/plain; version=0.0.4'* ]]"
cl=$(header_value "$T/m1.h" Content-Length)
check "Content-Length is the body's ($cl)" test "$cl" = "$(stat -c %s "$T/m1")"
if validate "$T/m1" >"$T/s1"; then ok "the exposition is valid ($(wc -l <"$T/s1") samples)"
else not_ok "the exposition is valid"; fi
sed 's/^/#   /' "$T/s1"
# The checks can fail: doctored expositions are refused.
sed '/^# HELP evfcgid_connections /d' "$T/m1" >"$T/bad1"
check "a family without HELP is refused" bash -c "! validate '$T/bad1' >/dev/null 2>&1"
sed 's/^evfcgid_denied_total /evfcgid_denied_total{a="b" /' "$T/m1" >"$T/bad2"
check "a malformed sample is refused" bash -c "! validate '$T/bad2' >/dev/null 2>&1"
sed '/^# TYPE evfcgid_aborted_total/s/counter/gauge/; s/^evfcgid_aborted_total/evfcgid_aborted/; s/^# \(HELP\|TYPE\) evfcgid_aborted_total/# \1 evfcgid_aborted/' "$T/m1" >"$T/bad3"
check "a repeated family (two gauges of one name) is refused" bash -c "sed -n '/evfcgid_aborted/p' '$T/bad3' >>'$T/bad3'; ! validate '$T/bad3' >/dev/null 2>&1"
missing=""
for f in connections connections_total requests_total requests_active sent_bytes_total \
	body_bytes_total queued_bytes queued_bytes_peak stalled_sockets overloaded_total \
	rejected_total aborted_total closed_on_error_total denied_total; do
	[ -n "$(metric "$T/s1" "evfcgid_$f{}")" ] || missing+=" $f"
done
check "every figure of /status is there (missing:${missing:- none})" test -z "$missing"
check "413 answers: 2 (/size over --max-size, a body over --max-body)" \
	test "$(metric "$T/s1" 'evfcgid_limit_answers_total{status="413"}')" = 2
check "431 answers: 1 (params over --max-params)" \
	test "$(metric "$T/s1" 'evfcgid_limit_answers_total{status="431"}')" = 1
check "header timeouts: 1" test "$(metric "$T/s1" 'evfcgid_timeouts_total{kind="header"}')" = 1
check "write timeouts: 0" test "$(metric "$T/s1" 'evfcgid_timeouts_total{kind="write"}')" = 0
check "2xx answers: 4 (3 /hello, /size?1000)" test "$(metric "$T/s1" 'evfcgid_responses_total{class="2xx"}')" = 4
check "4xx answers: 4 (two 413, 431, 404)" test "$(metric "$T/s1" 'evfcgid_responses_total{class="4xx"}')" = 4
check "requests_total counts this scrape too: 10" test "$(metric "$T/s1" 'evfcgid_requests_total{}')" = 10
body=$(metric "$T/s1" 'evfcgid_body_bytes_total{}')
check "body bytes: 3 x 12 + 1000 + the error pages ($body)" test "$body" -gt 1036
sent=$(metric "$T/s1" 'evfcgid_sent_bytes_total{}')
check "bytes sent include the records' headers ($sent > $body)" test "$sent" -gt "$body"
check "rejected_total: 2 (the engine's: a body over --max-body, 431; /size's 413 is the application's)" \
	test "$(metric "$T/s1" 'evfcgid_rejected_total{}')" = 2
check "no worker label without --workers" bash -c "! grep -q 'worker=' '$T/s1'"
scrape "$A" "$T/m2"
validate "$T/m2" >"$T/s2"
check "a second scrape: requests_total 11, 2xx 5 (the first scrape)" \
	test "$(metric "$T/s2" 'evfcgid_requests_total{}') $(metric "$T/s2" 'evfcgid_responses_total{class="2xx"}')" = "11 5"
fcgi_req "$A" "/status?format=json" | body_of >"$T/j"
check "/status?format=json (or anything else) stays JSON" jq_true '.requests == 12' "$T/j"

# Behind nginx, as Prometheus would scrape it.
fport=$(freeport)
if nginx_conf "$T/nginx" "$fport" "$A" && start_nginx "$T/nginx"; then
	code=$(curl -sS -o "$T/n" -D "$T/n.h" -w '%{http_code}' "http://127.0.0.1:$fport/status?format=prometheus")
	ct=$(header_value "$T/n.h" Content-Type)
	check "behind nginx: 200, text/plain; version=0.0.4 ($code, $ct)" \
		bash -c "[ $code = 200 ] && [[ '$ct' == 'text/plain; version=0.0.4'* ]]"
	check "behind nginx: valid" validate "$T/n" >/dev/null
else
	not_ok "nginx starts in front of evfcgid"
fi

# --workers 2: each worker counts its own, and labels every sample with it.
port=$(freeport)
spawn "$EVFCGID" --listen "127.0.0.1:$port" --workers 2 2>"$T/w.log"
wait_port "$port"
seen="" bad=""
for i in $(seq 100); do
	scrape "127.0.0.1:$port" "$T/w"
	validate "$T/w" >"$T/ws" 2>"$T/w.err" || { bad+=" invalid($(head -c 100 "$T/w.err"))"; break; }
	ws=$(grep -o 'worker="[^"]*"' "$T/ws" | sort -u)
	n=$(grep -c . "$T/ws")
	[ "$(grep -c 'worker="' "$T/ws")" -eq "$n" ] || bad+=" unlabelled"
	[ "$(wc -l <<<"$ws")" -eq 1 ] || bad+=" mixed"
	[[ " $seen " == *" $ws "* ]] || seen+=" $ws"
	[ "$(wc -w <<<"$seen")" -ge 2 ] && break
done
check "--workers 2: every sample of a scrape has one worker label (faults:${bad:- none})" test -z "$bad"
check "--workers 2: both workers answer, labelled 1 and 2 (seen:$seen)" \
	test "$(tr ' ' '\n' <<<"$seen" | grep -c .)" -eq 2 -a -n "$(grep -o 'worker="1"' <<<"$seen")" \
	-a -n "$(grep -o 'worker="2"' <<<"$seen")"

finish
