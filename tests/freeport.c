/*
 * freeport [N]: prints N (default 1) distinct free TCP ports on 127.0.0.1,
 * one per line.  The kernel picks them; all are held until printed so the
 * N are distinct.  Tests use it to choose their loopback ports.
 */
#include <sys/socket.h>

#include <netinet/in.h>
#include <arpa/inet.h>

#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

int
main(int argc, char **argv)
{
	struct sockaddr_in	 sin;
	socklen_t		 slen;
	int			 fds[64], i, n;

	n = argc > 1 ? atoi(argv[1]) : 1;
	if (n < 1 || n > 64) {
		fprintf(stderr, "usage: freeport [N]   (1 <= N <= 64)\n");
		return 2;
	}
	for (i = 0; i < n; i++) {
		if ((fds[i] = socket(AF_INET, SOCK_STREAM, 0)) == -1) {
			perror("freeport: socket");
			return 1;
		}
		sin = (struct sockaddr_in){ .sin_family = AF_INET };
		sin.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
		slen = sizeof(sin);
		if (bind(fds[i], (struct sockaddr *)&sin, sizeof(sin)) == -1 ||
		    getsockname(fds[i], (struct sockaddr *)&sin, &slen) == -1) {
			perror("freeport: bind");
			return 1;
		}
		printf("%d\n", ntohs(sin.sin_port));
	}
	for (i = 0; i < n; i++)
		close(fds[i]);
	return 0;
}
