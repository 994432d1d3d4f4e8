# evfcgid: hand-written Makefile; ./configure writes config.mk (from config.mk.in).
# A fresh clone needs no manual step: config.mk is made on demand, after
# scripts/install-deps has installed the Debian packages that are missing.

include config.mk
-include config.local.mk

WARN = -Wall -Wextra -Wshadow -Wstrict-prototypes -Wmissing-prototypes \
       -Wpointer-arith -Wsign-compare
ALL_CFLAGS = -std=c11 -D_GNU_SOURCE -I. -Isrc $(WARN) $(CFLAGS) $(LIBEVENT_CFLAGS)
SAN = -fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=all

LIB_SRCS = src/fcgi_proto.c src/log.c src/conn.c src/server.c
LIB_OBJS = $(LIB_SRCS:.c=.o)
DAEMON_OBJS = src/app.o src/main.o
HEADERS = $(wildcard src/*.h) config.h

# tools/*.c are programs, except the modules they share.
TOOL_LIB_SRCS = tools/toolutil.c tools/http_parse.c
TOOL_LIB_OBJS = $(TOOL_LIB_SRCS:.c=.o)
TOOL_HEADERS = $(wildcard tools/*.h)
TOOL_SRCS = $(filter-out $(TOOL_LIB_SRCS),$(wildcard tools/*.c))
TOOLS = $(TOOL_SRCS:.c=)
CHECK_SRCS = $(wildcard tests/check_*.c)
CHECKS = $(patsubst tests/%.c,tests/bin/%,$(CHECK_SRCS))
CHECKS_ASAN = $(CHECKS:=.asan)

all: src/evfcgid src/libevfcgi.a $(TOOLS) tests/bin/freeport

config.mk: configure.ac config.mk.in .deps-done
	autoreconf -fi
	./configure

.deps-done: scripts/install-deps
	sh scripts/install-deps
	touch $@

deps:
	sh scripts/install-deps

%.o: %.c $(HEADERS)
	$(CC) $(CPPFLAGS) $(ALL_CFLAGS) -c -o $@ $<

$(TOOL_LIB_OBJS): $(TOOL_HEADERS)

src/libevfcgi.a: $(LIB_OBJS)
	rm -f $@
	ar rcs $@ $(LIB_OBJS)

src/evfcgid: $(DAEMON_OBJS) src/libevfcgi.a
	$(CC) $(LDFLAGS) -o $@ $(DAEMON_OBJS) src/libevfcgi.a $(LIBEVENT_LIBS)

# The tools share the codec and tools/toolutil.c, tools/http_parse.c;
# blocking_fcgid is the libfcgi control group and uses none of them.
tools/blocking_fcgid: tools/blocking_fcgid.c $(HEADERS)
	$(CC) $(CPPFLAGS) $(ALL_CFLAGS) -pthread -o $@ $< $(LDFLAGS) $(FCGI_LIBS) -pthread
tools/%: tools/%.c src/fcgi_proto.o $(TOOL_LIB_OBJS) $(HEADERS) $(TOOL_HEADERS)
	$(CC) $(CPPFLAGS) $(ALL_CFLAGS) -o $@ $< src/fcgi_proto.o $(TOOL_LIB_OBJS) \
		$(LDFLAGS) $(LIBEVENT_LIBS) -lm

tests/bin/freeport: tests/freeport.c
	@mkdir -p tests/bin
	$(CC) $(CPPFLAGS) $(ALL_CFLAGS) -o $@ $<

# Each Check suite links the engine and the demo routes, plus the sources
# in CHECK_EXTRA set for it below; built twice, the second time with
# AddressSanitizer and UndefinedBehaviorSanitizer.
CHECK_EXTRA =
tests/bin/check_http_parse tests/bin/check_http_parse.asan: \
	CHECK_EXTRA = tools/http_parse.c
tests/bin/check_http_parse tests/bin/check_http_parse.asan: \
	tools/http_parse.c $(TOOL_HEADERS)

tests/bin/check_%: tests/check_%.c $(LIB_SRCS) src/app.c $(HEADERS) tests/guard.h
	@mkdir -p tests/bin
	$(CC) $(CPPFLAGS) $(ALL_CFLAGS) $(CHECK_CFLAGS) -o $@ $< $(CHECK_EXTRA) \
		$(LIB_SRCS) src/app.c $(LDFLAGS) $(LIBEVENT_LIBS) $(CHECK_LIBS)
tests/bin/check_%.asan: tests/check_%.c $(LIB_SRCS) src/app.c $(HEADERS) tests/guard.h
	@mkdir -p tests/bin
	$(CC) $(CPPFLAGS) $(ALL_CFLAGS) -O1 -g $(SAN) $(CHECK_CFLAGS) -o $@ $< $(CHECK_EXTRA) \
		$(LIB_SRCS) src/app.c $(LDFLAGS) $(SAN) $(LIBEVENT_LIBS) $(CHECK_LIBS)

# The fuzz harness runs on its seed corpus in every `make check` (gcc,
# sanitizers, no libFuzzer); `make fuzz` runs the real fuzzer with clang.
tests/bin/fuzz_replay: fuzz/fuzz_conn.c fuzz/replay.c $(LIB_SRCS) src/app.c $(HEADERS)
	@mkdir -p tests/bin
	$(CC) $(CPPFLAGS) $(ALL_CFLAGS) -O1 -g $(SAN) -o $@ fuzz/fuzz_conn.c fuzz/replay.c \
		$(LIB_SRCS) src/app.c $(LDFLAGS) $(SAN) $(LIBEVENT_LIBS)

fuzz/fuzz_conn: fuzz/fuzz_conn.c $(LIB_SRCS) src/app.c $(HEADERS)
	clang -std=c11 -D_GNU_SOURCE -I. -Isrc -g -O1 -fsanitize=fuzzer,address,undefined \
		$(LIBEVENT_CFLAGS) -o $@ fuzz/fuzz_conn.c $(LIB_SRCS) src/app.c $(LIBEVENT_LIBS)

fuzz: fuzz/fuzz_conn
	mkdir -p fuzz/found
	fuzz/fuzz_conn -max_len=4096 -max_total_time=$${FUZZ_SECONDS:-60} fuzz/found fuzz/corpus

check: all $(CHECKS) $(CHECKS_ASAN) tests/bin/fuzz_replay
	sh tests/run-tests $(CHECKS) $(CHECKS_ASAN)

bench: all
	bash tests/bench-slow-reader

experiment: all
	tools/slow-client-experiment

demo: all
	bash scripts/demo

clean:
	rm -f src/*.o src/*.a src/evfcgid $(TOOLS) $(TOOL_LIB_OBJS) fuzz/fuzz_conn
	rm -rf tests/bin tests/out

distclean: clean
	rm -rf config.mk config.h config.log config.status configure autom4te.cache \
		aclocal.m4 config.h.in .deps-done

.PHONY: all deps check bench experiment demo fuzz clean distclean
