// fcgi_client.js: drives evfcgid with the npm package fastcgi-client
// (0.2.0, installed into tests/node/node_modules by scripts/install-deps).
// The client asks FCGI_GET_VALUES first and then multiplexes up to the
// FCGI_MAX_REQS it was told on one connection (FCGI_KEEP_CONN).
//
//   node fcgi_client.js PORT at-once N     N requests issued at once
//   node fcgi_client.js PORT in-flight N K N requests, K in flight
//   node fcgi_client.js PORT no-limits N   N at once, GET_VALUES not asked
//                                          (the client's maxReqs set to N)
//
// Request i asks for /size?L with L = (i * 997) % 4096 (odd ones) or posts
// an 11-byte body to /echo (even ones); every answer's body is checked
// byte for byte.  Prints one line:
//   sent S answered A bad B overloaded O refused R max_reqs M
// (answered: the right body; overloaded: END_REQUEST FCGI_OVERLOADED;
// refused: the client's own refusal above the FCGI_MAX_REQS it was told).
'use strict';

const fastcgi = require('fastcgi-client');

const LINE = 'abcdefghijklmnopqrstuvwxyz0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZ.\n';
const [port, mode, nArg, kArg] = process.argv.slice(2);
const n = Number(nArg);
const k = Number(kArg || n);
const opts = { host: '127.0.0.1', port: Number(port) };

if (mode === 'no-limits') {
	// 0.2.0 takes maxReqs from maxConns (its bug); set both.
	Object.assign(opts, { skipCheckServer: true, mpxsConns: true,
		maxConns: n, maxReqs: n });
}
const client = fastcgi(opts);
const count = { sent: 0, answered: 0, bad: 0, overloaded: 0, refused: 0 };
let started = 0, ended = 0;

client.on('error', (e) => { console.error('client error: ' + e.message); });
client.on('ready', () => {
	for (let i = 0; i < Math.min(k, n); i++)
		next();
});

function expected(i) {
	if (i % 2 === 0)
		return 'request ' + String(i).padStart(3, '0');
	const len = (i * 997) % 4096;
	return LINE.repeat(Math.ceil(len / 64) + 1).slice(0, len);
}

function next() {
	const i = started++;
	const body = i % 2 === 0 ? expected(i) : '';
	const params = {
		REQUEST_METHOD: body ? 'POST' : 'GET',
		REQUEST_URI: body ? '/echo' : '/size?' + expected(i).length,
		SCRIPT_NAME: body ? '/echo' : '/size',
		QUERY_STRING: body ? '' : String(expected(i).length),
		CONTENT_LENGTH: String(body.length),
		SERVER_PROTOCOL: 'HTTP/1.1',
	};
	client.request(params, (err, req) => {
		if (err) {
			if (/concurrency limit/.test(err.message))
				count.refused++;
			else
				count.bad++;
			return done();
		}
		count.sent++;
		const chunks = [];
		req.stdout.on('data', (d) => chunks.push(d));
		req.stdout.on('end', () => {
			const st = req.getExitStatus();
			const out = Buffer.concat(chunks).toString('latin1');
			const sep = out.indexOf('\r\n\r\n');
			if (st instanceof Error && /resource not available/.test(st.message))
				count.overloaded++;
			else if (st === 0 && sep >= 0 &&
			    /^Status: 200/.test(out) &&
			    out.slice(sep + 4) === expected(i))
				count.answered++;
			else {
				count.bad++;
				if (count.bad <= 3)
					console.error('request ' + i + ': ' + st + ' ' +
					    JSON.stringify(out.slice(0, 80)));
			}
			done();
		});
		if (body)
			req.stdin.write(body);
		req.stdin.end();
	});
}

function done() {
	ended++;
	if (started < n && mode === 'in-flight')
		next();
	if (ended === n) {
		console.log('sent ' + count.sent + ' answered ' + count.answered +
		    ' bad ' + count.bad + ' overloaded ' + count.overloaded +
		    ' refused ' + count.refused + ' max_reqs ' + client._maxReqs);
		process.exit(0);
	}
}
