/*
 * replay.c: runs the fuzz harness once on each file named on the command
 * line, so that `make check` exercises the harness and its seed corpus
 * under sanitizers without libFuzzer (gcc has none).
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

int	LLVMFuzzerTestOneInput(const uint8_t *, size_t);

int
main(int argc, char **argv)
{
	static uint8_t	 buf[1 << 20];
	FILE		*f;
	size_t		 n;
	int		 i;

	for (i = 1; i < argc; i++) {
		if ((f = fopen(argv[i], "rb")) == NULL) {
			perror(argv[i]);
			return 1;
		}
		n = fread(buf, 1, sizeof(buf), f);
		fclose(f);
		LLVMFuzzerTestOneInput(buf, n);
	}
	printf("replayed %d inputs\n", argc - 1);
	return 0;
}
