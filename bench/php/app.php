<?php
/*
 * bench/php/app.php: the PHP-FPM peer of make bench, not the product.
 * Answers evfcgid's /hello and /big with the same bodies, type and length
 * (the pool the bench script writes turns off X-Powered-By and the
 * charset PHP would add to text/plain).  The route is REQUEST_URI's path.
 */
$path = strtok($_SERVER['REQUEST_URI'] ?? '', '?');
if ($path === '/hello') {
	$body = "Hello World\n";
} elseif ($path === '/big') {
	/* 96256 bytes: the 64-byte line 1504 times. */
	$body = str_repeat("abcdefghijklmnopqrstuvwxyz0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZ.\n", 1504);
} else {
	http_response_code(404);
	$body = "Not Found\n";
}
header('Content-Type: text/plain');
header('Content-Length: ' . strlen($body));
echo $body;
