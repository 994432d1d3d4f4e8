# evfcgid: hand-written Makefile; ./configure writes config.mk (from config.mk.in).
# A fresh clone needs no manual step: config.mk is made on demand, after
# scripts/install-deps has installed the Debian packages that are missing.

include config.mk
-include config.local.mk

WARN = -Wall -Wextra -Wshadow -Wstrict-prototypes -Wmissing-prototypes \
       -Wpointer-arith -Wsign-compare
ALL_CFLAGS = -std=c11 -D_GNU_SOURCE -I. -Isrc $(WARN) $(CFLAGS) $(LIBEVENT_CFLAGS)
SAN = -fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=all
DAEMON_SRCS = src/app.c src/main.c src/options.c
DAEMON_OBJS = $(DAEMON_SRCS:.c=.o)

# The engine is every src/*.c but the demo routes and the command line
# (main, options).
# Each object is compiled once per flavour: plain (src/*.o) and with
# AddressSanitizer and UndefinedBehaviorSanitizer (src/asan/*.o), for the
# Check suites and the fuzz replay.
LIB_SRCS = $(filter-out $(DAEMON_SRCS),$(wildcard src/*.c))
LIB_OBJS = $(LIB_SRCS:.c=.o)
LIB_OBJS_ASAN = $(patsubst src/%.c,src/asan/%.o,$(LIB_SRCS))
HEADERS = $(wildcard src/*.h) config.h

# tools/*.c are programs, except the modules they share (those with a .h).
TOOL_LIB_SRCS = $(patsubst %.h,%.c,$(wildcard tools/*.h))
TOOL_LIB_OBJS = $(TOOL_LIB_SRCS:.c=.o)
TOOL_LIB_OBJS_ASAN = $(patsubst tools/%.c,tools/asan/%.o,$(TOOL_LIB_SRCS))
TOOL_HEADERS = $(wildcard tools/*.h)
TOOL_SRCS = $(filter-out $(TOOL_LIB_SRCS),$(wildcard tools/*.c))
TOOLS = $(TOOL_SRCS:.c=)
CHECK_SRCS = $(wildcard tests/check_*.c)
CHECKS = $(patsubst tests/%.c,tests/bin/%,$(CHECK_SRCS))
CHECKS_ASAN = $(CHECKS:=.asan)

all: src/evfcgid src/libevfcgi.a $(TOOLS) tests/bin/freeport bench/floor

# Made on demand; a rerun keeps the flags the user gave ./configure.
config.mk: configure.ac config.mk.in .deps-done
	autoreconf -fi
	if [ -x config.status ]; then ./config.status --recheck && \
		./config.status; else ./configure; fi

.deps-done: scripts/install-deps
	sh scripts/install-deps
	touch $@

deps:
	sh scripts/install-deps

%.o: %.c $(HEADERS)
	$(CC) $(CPPFLAGS) $(ALL_CFLAGS) -c -o $@ $<

src/asan/%.o: src/%.c $(HEADERS)
	@mkdir -p src/asan
	$(CC) $(CPPFLAGS) $(ALL_CFLAGS) -O1 -g $(SAN) -c -o $@ $<

tools/asan/%.o: tools/%.c $(HEADERS) $(TOOL_HEADERS)
	@mkdir -p tools/asan
	$(CC) $(CPPFLAGS) $(ALL_CFLAGS) -O1 -g $(SAN) -c -o $@ $<

$(TOOL_LIB_OBJS): $(TOOL_HEADERS)

src/libevfcgi.a: $(LIB_OBJS)
	rm -f $@
	ar rcs $@ $(LIB_OBJS)

src/asan/libevfcgi.a: $(LIB_OBJS_ASAN)
	rm -f $@
	ar rcs $@ $(LIB_OBJS_ASAN)

tools/libtools.a: $(TOOL_LIB_OBJS)
	rm -f $@
	ar rcs $@ $(TOOL_LIB_OBJS)

tools/asan/libtools.a: $(TOOL_LIB_OBJS_ASAN)
	rm -f $@
	ar rcs $@ $(TOOL_LIB_OBJS_ASAN)

src/evfcgid: $(DAEMON_OBJS) src/libevfcgi.a
	$(CC) $(LDFLAGS) -o $@ $(DAEMON_OBJS) src/libevfcgi.a $(LIBEVENT_LIBS)

# The tools share the codec, the address parser (src/listen.c) and the
# modules in tools/; blocking_fcgid is the libfcgi control group and uses
# none of them.
tools/blocking_fcgid: tools/blocking_fcgid.c $(HEADERS)
	$(CC) $(CPPFLAGS) $(ALL_CFLAGS) -pthread -o $@ $< $(LDFLAGS) $(FCGI_LIBS) -pthread
tools/%: tools/%.c tools/libtools.a src/libevfcgi.a $(HEADERS) $(TOOL_HEADERS)
	$(CC) $(CPPFLAGS) $(ALL_CFLAGS) -o $@ $< tools/libtools.a \
		src/libevfcgi.a $(LDFLAGS) $(LIBEVENT_LIBS) -lm

# The machine's floor for make bench (bench/README-section.md): a bare
# epoll responder on the codec and the address parser alone, no libevent.
bench/floor: bench/floor.c src/fcgi_proto.o src/listen.o $(HEADERS)
	$(CC) $(CPPFLAGS) $(ALL_CFLAGS) -o $@ bench/floor.c src/fcgi_proto.o \
		src/listen.o $(LDFLAGS)

tests/bin/freeport: tests/freeport.c
	@mkdir -p tests/bin
	$(CC) $(CPPFLAGS) $(ALL_CFLAGS) -o $@ $<

# Each Check suite links the engine, the demo routes and the tools' shared
# modules (the linker takes from the archives what the suite uses); built
# twice, the second time against the sanitizer flavour.
SUITE_LIBS = src/app.o tools/libtools.a src/libevfcgi.a
SUITE_LIBS_ASAN = src/asan/app.o tools/asan/libtools.a src/asan/libevfcgi.a

TEST_HEADERS = $(wildcard tests/*.h)

tests/bin/check_%: tests/check_%.c $(SUITE_LIBS) $(HEADERS) $(TOOL_HEADERS) \
		$(TEST_HEADERS)
	@mkdir -p tests/bin
	$(CC) $(CPPFLAGS) $(ALL_CFLAGS) $(CHECK_CFLAGS) -Itools -o $@ $< \
		$(SUITE_LIBS) $(LDFLAGS) $(LIBEVENT_LIBS) $(CHECK_LIBS)
tests/bin/check_%.asan: tests/check_%.c $(SUITE_LIBS_ASAN) $(HEADERS) \
		$(TOOL_HEADERS) $(TEST_HEADERS)
	@mkdir -p tests/bin
	$(CC) $(CPPFLAGS) $(ALL_CFLAGS) -O1 -g $(SAN) $(CHECK_CFLAGS) -Itools \
		-o $@ $< $(SUITE_LIBS_ASAN) $(LDFLAGS) $(SAN) $(LIBEVENT_LIBS) \
		$(CHECK_LIBS)

# The fuzz harness runs on its seed corpus in every `make check` (gcc,
# sanitizers, no libFuzzer), and then for 45 s under libFuzzer (clang:
# tests/test_fuzz.sh); `make fuzz` runs libFuzzer for FUZZ_SECONDS (60).
tests/bin/fuzz_replay: fuzz/fuzz_conn.c fuzz/replay.c src/asan/app.o \
		src/asan/libevfcgi.a $(HEADERS)
	@mkdir -p tests/bin
	$(CC) $(CPPFLAGS) $(ALL_CFLAGS) -O1 -g $(SAN) -o $@ fuzz/fuzz_conn.c \
		fuzz/replay.c src/asan/app.o src/asan/libevfcgi.a $(LDFLAGS) \
		$(SAN) $(LIBEVENT_LIBS)

fuzz/fuzz_conn: fuzz/fuzz_conn.c $(LIB_SRCS) src/app.c $(HEADERS)
	clang -std=c11 -D_GNU_SOURCE -I. -Isrc -g -O1 -fsanitize=fuzzer,address,undefined \
		$(LIBEVENT_CFLAGS) -o $@ fuzz/fuzz_conn.c $(LIB_SRCS) src/app.c $(LIBEVENT_LIBS)

fuzz: fuzz/fuzz_conn
	mkdir -p fuzz/found
	fuzz/fuzz_conn -max_len=4096 -max_total_time=$${FUZZ_SECONDS:-60} fuzz/found fuzz/corpus

check: all $(CHECKS) $(CHECKS_ASAN) tests/bin/fuzz_replay fuzz/fuzz_conn
	sh tests/run-tests $(CHECKS) $(CHECKS_ASAN)

# The integration smoke under valgrind's memcheck (also part of make check).
valgrind: all
	bash tests/test_valgrind.sh

# Every backend beside the machine's floor (bench/run: about 10 minutes;
# BENCH_ARGS=--quick for a look in two and a half; results in bench/out),
# then the slow-reader claim as a number.  The peers (Go, PHP-FPM) are
# installed here if they can be, and skipped if not.
bench: all
	sh scripts/install-deps bench || \
		echo "bench: the peers could not be installed; they are skipped"
	bash bench/run $(BENCH_ARGS)
	bash tests/bench-slow-reader

experiment: all
	tools/slow-client-experiment

# The long cases, bounded: real 512 B/s clients behind nginx and lighttpd
# reading SOAK_SIZE bytes (1 MiB: about 35 minutes), then libFuzzer for
# 10 minutes.
soak: all fuzz/fuzz_conn
	bash tests/bench-slow-steps --pause 1000 --size $${SOAK_SIZE:-1048576}
	$(MAKE) fuzz FUZZ_SECONDS=600

demo: all
	bash scripts/demo

clean:
	rm -f src/*.o src/*.a src/evfcgid $(TOOLS) tools/*.o tools/*.a \
		fuzz/fuzz_conn bench/floor
	rm -rf src/asan tools/asan tests/bin tests/out bench/out

distclean: clean
	rm -rf config.mk config.h config.log config.status configure autom4te.cache \
		aclocal.m4 config.h.in .deps-done

.PHONY: all deps check valgrind bench experiment soak demo fuzz clean distclean
