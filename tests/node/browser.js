// tests/node/browser.js URL DIR FILE1 FILE2: a real browser (Debian's
// chromium, headless, driven by puppeteer-core) uses examples/dropbox at
// URL as a person would: logs in through the form, uploads FILE1 and
// FILE2 through the upload form, and sees both listed.  Prints one line
// per step ("ok - ..." or "not ok - ..."); exits 0 when all passed, 77
// when no browser could be started (the test then says why and skips).
'use strict';
const fs = require('fs');
const path = require('path');
let puppeteer;
try {
	puppeteer = require('puppeteer-core');
} catch (e) {
	console.log('# puppeteer-core is not installed: ' + e.message);
	process.exit(77);
}
const [url, , f1, f2] = process.argv.slice(2);
const exe = ['/usr/bin/chromium', '/usr/bin/chromium-browser']
	.find((p) => fs.existsSync(p));
let failed = 0;
function check(what, cond) {
	console.log((cond ? 'ok - ' : 'not ok - ') + what);
	if (!cond)
		failed++;
}

(async () => {
	let browser;
	try {
		browser = await puppeteer.launch({ executablePath: exe,
		    headless: true, args: ['--no-sandbox',
		    '--disable-dev-shm-usage'] });
	} catch (e) {
		console.log('# no browser: ' + e.message.split('\n')[0]);
		process.exit(77);
	}
	try {
		const page = await browser.newPage();
		page.setDefaultTimeout(30000);
		let r = await page.goto(url + '/');
		check('the browser loads the list (' + r.status() + ')',
		    r.status() === 200);
		await page.type('input[name=password]', 'sesame');
		await Promise.all([page.waitForNavigation(),
		    page.click('form[action="/login"] button')]);
		const cookies = await page.cookies();
		check('logging in through the form sets the session cookie',
		    cookies.some((c) => c.name === 'sid' && c.httpOnly));
		const input = await page.$('input[type=file]');
		await input.uploadFile(f1, f2);
		await Promise.all([page.waitForNavigation(),
		    page.click('form[action="/upload"] button')]);
		check('the upload form comes back to the list', page.url() ===
		    url + '/');
		const names = await page.$$eval('li a', (as) =>
		    as.map((a) => a.textContent));
		check('both files are listed (' + names.join(', ') + ')',
		    names.includes(path.basename(f1)) &&
		    names.includes(path.basename(f2)));
		// Its link, fetched by the page (a navigation would save it).
		const href = await page.$eval('li a[href$="' +
		    encodeURIComponent(path.basename(f2)) + '"]', (a) => a.href);
		const got = await page.evaluate(async (u) =>
		    (await fetch(u)).text(), href);
		check('a listed file downloads as uploaded',
		    got === fs.readFileSync(f2, 'utf8'));
	} catch (e) {
		check('the browser session: ' + e.message.split('\n')[0], false);
	}
	await browser.close();
	process.exit(failed === 0 ? 0 : 1);
})();
