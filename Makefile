# evfcgid: hand-written Makefile; ./configure writes config.mk (from config.mk.in).
# config.mk is made on demand.  make builds and installs no package: one
# the build needs that is missing stops it with the apt-get line to run
# (scripts/install-deps --check).  make deps installs what is missing, and
# make check and make demo run it first, so that for them a fresh clone
# needs no manual step.

# clean and distclean need no configuration (a package build cleans a
# fresh tree first).
ifneq ($(filter-out clean distclean,$(or $(MAKECMDGOALS),all)),)
include config.mk
endif
-include config.local.mk

# --- What is built -----------------------------------------------------

WARN = -Wall -Wextra -Wshadow -Wstrict-prototypes -Wmissing-prototypes \
       -Wpointer-arith -Wsign-compare
ALL_CFLAGS = -std=c11 -D_GNU_SOURCE -I. $(INC_all) $(WARN) $(CFLAGS) \
	$(LIBEVENT_CFLAGS)
SAN = -fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=all

# src/ holds four folders, one per layer (src/README): the engine
# (libevfcgi), then the CGI gateway and the demo routes on it, then the
# daemon.  A folder's objects see its own headers and those of the folders
# below it, no others; the tools, the suites and the fuzz harness see all.
# scripts/layers checks the objects' references (tests/test_layers.sh).
INC_engine = -Isrc/engine
INC_cgi = -Isrc/cgi $(INC_engine)
INC_demo = -Isrc/demo $(INC_engine)
INC_daemon = -Isrc/daemon $(INC_cgi) -Isrc/demo
INC_all = $(INC_daemon)
SRC_CFLAGS = -std=c11 -D_GNU_SOURCE -I. $(INC_$(firstword $(subst /, ,$*))) \
	$(WARN) $(CFLAGS) $(LIBEVENT_CFLAGS)

ENGINE_SRCS = $(wildcard src/engine/*.c)
CGI_SRCS = $(wildcard src/cgi/*.c)
DEMO_SRCS = $(wildcard src/demo/*.c)
DAEMON_SRCS = $(wildcard src/daemon/*.c)
CGI_OBJS = $(CGI_SRCS:.c=.o)
CGI_OBJS_ASAN = $(patsubst src/%.c,src/asan/%.o,$(CGI_SRCS))
DEMO_OBJS = $(DEMO_SRCS:.c=.o)
DAEMON_OBJS = $(DAEMON_SRCS:.c=.o)

# The engine alone makes the library.
# Each object is compiled once per flavour: plain (src/*/*.o) and with
# AddressSanitizer and UndefinedBehaviorSanitizer (src/asan/*/*.o), for the
# Check suites and the fuzz replay.
LIB_SRCS = $(ENGINE_SRCS)
LIB_OBJS = $(LIB_SRCS:.c=.o)
LIB_OBJS_ASAN = $(patsubst src/%.c,src/asan/%.o,$(LIB_SRCS))
LIB_OBJS_PIC = $(patsubst src/%.c,src/pic/%.o,$(LIB_SRCS))
HEADERS = $(wildcard src/*/*.h) config.h

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

# The shared library: its own ABI version (not the package's), the soname
# carries the major; only evfcgi_* is exported (src/engine/libevfcgi.map).
SO_MAJOR = 1
SO_VERSION = $(SO_MAJOR).0.0
SHLIB = src/libevfcgi.so.$(SO_VERSION)

# Defined before the rules: a prerequisite list is expanded where it is read.
EXAMPLES = examples/json_api examples/static_files examples/sse \
	examples/authorizer examples/dropbox

# --- What you run ------------------------------------------------------
# make builds in place; make check, make install, make demo, make bench,
# make clean.  The build's rules follow, then the checks', then the lab's
# long runs (experiment, hosts, soak, fuzz).

all: src/evfcgid src/libevfcgi.a $(SHLIB) $(TOOLS) tests/bin/freeport \
	bench/floor $(EXAMPLES)

# make check builds with a job per core even when make was given no -j: a
# fresh clone's `make check` compiles every object twice (plain and with
# the sanitizers), which one job makes about twice as long on two cores.
# Its tests get no make flags (a test that runs make, as test_install and
# test_fuzz do, runs it as a user would): tests/test_fuzz.sh builds the
# libFuzzer binary (clang) itself.
ifneq ($(filter check,$(MAKECMDGOALS)),)
MAKEFLAGS += -j$(shell nproc 2>/dev/null || echo 2)
endif
check: deps all $(CHECKS) $(CHECKS_ASAN) tests/bin/fuzz_replay \
		tests/bin/fuzz_api_replay \
		tests/bin/bad_producer tests/bin/export_app
	env -u MAKEFLAGS -u MFLAGS bash tests/run-tests $(CHECKS) $(CHECKS_ASAN)

# The shell tests that belong to the lab ("# check: lab": shaped links,
# minutes each), by the same runner; make check leaves them out.
check-lab: deps all
	env -u MAKEFLAGS -u MFLAGS bash tests/run-tests \
		$$(grep -l '^# check: lab' tests/test_*.sh)

# The Check suites alone, no processes started: debian/rules runs them.
check-unit: $(CHECKS)
	for t in $(CHECKS); do CK_FORK=yes $$t || exit 1; done

demo: deps all
	bash scripts/demo

# Every backend beside the machine's floor (bench/run: about 14 minutes;
# BENCH_ARGS=--quick for a look in two and a half; results in bench/out),
# then what --workers 2 can show here (bench/workers: about a minute), then
# what a request costs, counted (bench/hotpath: system calls, allocations,
# instructions, memory per idle connection; about two minutes), then the
# slow-reader claim as a number, then examples/dropbox beside its Go twin
# (bench/dropbox-twin: about a minute).  The peers (Go, PHP-FPM) and
# strace are installed here if they can be; a peer that is not is skipped.
bench: all
	sh scripts/install-deps bench || \
		echo "bench: the peers could not be installed; they are skipped"
	bash bench/run $(BENCH_ARGS)
	bash bench/workers
	bash bench/hotpath
	bash tests/bench-slow-reader
	bash bench/dropbox-twin

# Installs what the build and the tests need (quiet when all is there).
deps:
	sh scripts/install-deps

# make install [PREFIX=/usr/local] [DESTDIR=stage]; every directory can be
# set on its own (debian/rules sets LIBDIR to the multiarch one).  The
# units' ExecStart follows SBINDIR.
PREFIX = /usr/local
BINDIR = $(PREFIX)/bin
SBINDIR = $(PREFIX)/sbin
LIBDIR = $(PREFIX)/lib
INCLUDEDIR = $(PREFIX)/include
MANDIR = $(PREFIX)/share/man
PKGCONFIGDIR = $(LIBDIR)/pkgconfig
SYSTEMDUNITDIR = $(PREFIX)/lib/systemd/system
INSTALL = install

# The tools a user runs against a server; blocking_fcgid (the control
# group, meant to stall), kept_rounds (make bench's client) and
# slow-client-experiment (needs the source tree) stay in the tree.
INSTALL_TOOLS = http_get http_load fcgi_load http_many
MAN1 = $(INSTALL_TOOLS:%=man/%.1)
MAN3 = man/evfcgi.3
MAN8 = man/evfcgid.8
UNITS = systemd/evfcgid.service systemd/evfcgid.socket

evfcgi.pc: evfcgi.pc.in config.mk
	sed -e 's|@PREFIX@|$(PREFIX)|' -e 's|@LIBDIR@|$(LIBDIR)|' \
		-e 's|@INCLUDEDIR@|$(INCLUDEDIR)|' -e 's|@VERSION@|$(VERSION)|' \
		evfcgi.pc.in >$@

# Always remade: PREFIX and LIBDIR may differ from the last run.
.PHONY: evfcgi.pc

install: src/evfcgid src/libevfcgi.a $(SHLIB) $(TOOLS) evfcgi.pc
	$(INSTALL) -d $(DESTDIR)$(SBINDIR) $(DESTDIR)$(BINDIR) \
		$(DESTDIR)$(LIBDIR) $(DESTDIR)$(INCLUDEDIR) \
		$(DESTDIR)$(PKGCONFIGDIR) $(DESTDIR)$(MANDIR)/man1 \
		$(DESTDIR)$(MANDIR)/man3 $(DESTDIR)$(MANDIR)/man8 \
		$(DESTDIR)$(SYSTEMDUNITDIR)
	$(INSTALL) -m 755 src/evfcgid $(DESTDIR)$(SBINDIR)/evfcgid
	for t in $(INSTALL_TOOLS); do \
		$(INSTALL) -m 755 tools/$$t $(DESTDIR)$(BINDIR)/$$t || exit 1; \
	done
	$(INSTALL) -m 644 src/libevfcgi.a $(DESTDIR)$(LIBDIR)/libevfcgi.a
	$(INSTALL) -m 644 $(SHLIB) $(DESTDIR)$(LIBDIR)/libevfcgi.so.$(SO_VERSION)
	ln -sf libevfcgi.so.$(SO_VERSION) \
		$(DESTDIR)$(LIBDIR)/libevfcgi.so.$(SO_MAJOR)
	ln -sf libevfcgi.so.$(SO_MAJOR) $(DESTDIR)$(LIBDIR)/libevfcgi.so
	$(INSTALL) -m 644 src/engine/evfcgi.h $(DESTDIR)$(INCLUDEDIR)/evfcgi.h
	$(INSTALL) -m 644 evfcgi.pc $(DESTDIR)$(PKGCONFIGDIR)/evfcgi.pc
	$(INSTALL) -m 644 $(MAN1) $(DESTDIR)$(MANDIR)/man1
	$(INSTALL) -m 644 $(MAN3) $(DESTDIR)$(MANDIR)/man3
	$(INSTALL) -m 644 $(MAN8) $(DESTDIR)$(MANDIR)/man8
	for f in $$(sed -n 's/^\.Nm \(evfcgi_[a-z_]*\).*/\1/p' $(MAN3)); do \
		ln -sf evfcgi.3 $(DESTDIR)$(MANDIR)/man3/$$f.3 || exit 1; \
	done
	for u in $(UNITS); do \
		sed 's|/usr/sbin/evfcgid|$(SBINDIR)/evfcgid|' $$u \
			>$(DESTDIR)$(SYSTEMDUNITDIR)/$${u#systemd/} && \
		chmod 644 $(DESTDIR)$(SYSTEMDUNITDIR)/$${u#systemd/} || \
		exit 1; \
	done
	sh scripts/install-ldconfig '$(LIBDIR)' '$(DESTDIR)'

# Removes what install put there (the directories stay).
uninstall:
	rm -f $(DESTDIR)$(SBINDIR)/evfcgid
	for t in $(INSTALL_TOOLS); do rm -f $(DESTDIR)$(BINDIR)/$$t; done
	rm -f $(DESTDIR)$(LIBDIR)/libevfcgi.a \
		$(DESTDIR)$(LIBDIR)/libevfcgi.so.$(SO_VERSION) \
		$(DESTDIR)$(LIBDIR)/libevfcgi.so.$(SO_MAJOR) \
		$(DESTDIR)$(LIBDIR)/libevfcgi.so \
		$(DESTDIR)$(INCLUDEDIR)/evfcgi.h \
		$(DESTDIR)$(PKGCONFIGDIR)/evfcgi.pc
	for m in $(MAN1); do rm -f $(DESTDIR)$(MANDIR)/man1/$${m#man/}; done
	rm -f $(DESTDIR)$(MANDIR)/man3/evfcgi.3 $(DESTDIR)$(MANDIR)/man8/evfcgid.8
	for f in $$(sed -n 's/^\.Nm \(evfcgi_[a-z_]*\).*/\1/p' $(MAN3)); do \
		rm -f $(DESTDIR)$(MANDIR)/man3/$$f.3; \
	done
	for u in $(UNITS); do rm -f $(DESTDIR)$(SYSTEMDUNITDIR)/$${u#systemd/}; done

clean:
	rm -f src/*.o src/*/*.o src/*.a src/libevfcgi.so* src/evfcgid $(TOOLS) \
		tools/*.o tools/*.a fuzz/fuzz_conn fuzz/fuzz_api bench/floor evfcgi.pc \
		$(EXAMPLES)
	rm -f tests/*.o tests/*.a
	rm -rf src/asan src/pic tools/asan tests/asan tests/bin tests/out bench/out

distclean: clean
	rm -rf config.mk config.h config.log config.status configure autom4te.cache \
		aclocal.m4 config.h.in .deps-done

# --- The build ---------------------------------------------------------

# Made on demand; a rerun keeps the flags the user gave ./configure.
config.mk: configure.ac config.mk.in .deps-done
	autoreconf -fi
	if [ -x config.status ]; then ./config.status --recheck && \
		./config.status; else ./configure; fi

.deps-done: scripts/install-deps
	sh scripts/install-deps $(if $(filter check demo deps,$(MAKECMDGOALS)),,--check)
	touch $@

%.o: %.c $(HEADERS)
	$(CC) $(CPPFLAGS) $(ALL_CFLAGS) -c -o $@ $<

# $* is FOLDER/NAME: the folder picks the headers the object may see.
src/%.o: src/%.c $(HEADERS)
	$(CC) $(CPPFLAGS) $(SRC_CFLAGS) -c -o $@ $<

src/asan/%.o: src/%.c $(HEADERS)
	@mkdir -p $(@D)
	$(CC) $(CPPFLAGS) $(SRC_CFLAGS) -O1 -g $(SAN) -c -o $@ $<

src/pic/%.o: src/%.c $(HEADERS)
	@mkdir -p $(@D)
	$(CC) $(CPPFLAGS) $(SRC_CFLAGS) -fPIC -c -o $@ $<

tools/asan/%.o: tools/%.c $(HEADERS) $(TOOL_HEADERS)
	@mkdir -p tools/asan
	$(CC) $(CPPFLAGS) $(ALL_CFLAGS) -O1 -g $(SAN) -c -o $@ $<

$(TOOL_LIB_OBJS): $(TOOL_HEADERS)

# The static library is one object in which only evfcgi_* is global: the
# engine's other names (fatal, log_msg, conn_new ...) are made local, as
# the shared library's version script hides them, so that an application
# may have names of its own.  The daemon, the tools and the suites use
# those names: they link src/libevfcgi-internal.a, the objects as they are.
# A prefix on every internal name would make this step needless, but it
# would rename 119 names at about 950 places; the step is two commands.
OBJCOPY = objcopy
src/libevfcgi.a: $(LIB_OBJS) Makefile
	rm -f $@ src/libevfcgi-all.o
	$(LD) -r -o src/libevfcgi-all.o $(LIB_OBJS)
	$(OBJCOPY) --wildcard --keep-global-symbol='evfcgi_*' \
		src/libevfcgi-all.o src/libevfcgi.o
	ar rcs $@ src/libevfcgi.o

src/libevfcgi-internal.a: $(LIB_OBJS)
	rm -f $@
	ar rcs $@ $(LIB_OBJS)

# -z defs: the library must not lean on symbols of the daemon (app, main).
$(SHLIB): $(LIB_OBJS_PIC) src/engine/libevfcgi.map
	$(CC) -shared -Wl,-soname,libevfcgi.so.$(SO_MAJOR) \
		-Wl,--version-script=src/engine/libevfcgi.map -Wl,-z,defs $(LDFLAGS) \
		-o $@ $(LIB_OBJS_PIC) $(LIBEVENT_LIBS)
	ln -sf libevfcgi.so.$(SO_VERSION) src/libevfcgi.so.$(SO_MAJOR)
	ln -sf libevfcgi.so.$(SO_MAJOR) src/libevfcgi.so

src/asan/libevfcgi.a: $(LIB_OBJS_ASAN)
	rm -f $@
	ar rcs $@ $(LIB_OBJS_ASAN)

# The CGI gateway, for the daemon and the suites.
src/libcgi.a: $(CGI_OBJS)
	rm -f $@
	ar rcs $@ $(CGI_OBJS)

src/asan/libcgi.a: $(CGI_OBJS_ASAN)
	rm -f $@
	ar rcs $@ $(CGI_OBJS_ASAN)

tools/libtools.a: $(TOOL_LIB_OBJS)
	rm -f $@
	ar rcs $@ $(TOOL_LIB_OBJS)

tools/asan/libtools.a: $(TOOL_LIB_OBJS_ASAN)
	rm -f $@
	ar rcs $@ $(TOOL_LIB_OBJS_ASAN)

# The daemon: its own objects, the demo routes, the CGI gateway, the engine.
src/evfcgid: $(DAEMON_OBJS) $(DEMO_OBJS) $(CGI_OBJS) src/libevfcgi-internal.a
	$(CC) $(LDFLAGS) -o $@ $(DAEMON_OBJS) $(DEMO_OBJS) $(CGI_OBJS) \
		src/libevfcgi-internal.a \
		$(LIBEVENT_LIBS)

# The tools share the codec, the address parser (src/engine/listen.c) and the
# modules in tools/; blocking_fcgid is the libfcgi control group and uses
# none of them.
tools/blocking_fcgid: tools/blocking_fcgid.c $(HEADERS)
	$(CC) $(CPPFLAGS) $(ALL_CFLAGS) -pthread -o $@ $< $(LDFLAGS) $(FCGI_LIBS) -pthread
tools/%: tools/%.c tools/libtools.a src/libevfcgi-internal.a $(HEADERS) \
		$(TOOL_HEADERS)
	$(CC) $(CPPFLAGS) $(ALL_CFLAGS) -o $@ $< tools/libtools.a \
		src/libevfcgi-internal.a $(LDFLAGS) $(LIBEVENT_LIBS) -lm

# The machine's floor for make bench (bench/README-section.md): a bare
# epoll responder on the codec and the address parser alone, no libevent.
bench/floor: bench/floor.c src/engine/fcgi_proto.o src/engine/listen.o \
		$(HEADERS)
	$(CC) $(CPPFLAGS) $(ALL_CFLAGS) -o $@ bench/floor.c \
		src/engine/fcgi_proto.o src/engine/listen.o $(LDFLAGS)

# The examples: applications on the library that include only evfcgi.h
# (examples/README); json_api also links jansson (libjansson-dev).
JANSSON_CFLAGS = $(shell pkg-config --cflags jansson 2>/dev/null)
JANSSON_LIBS = $(or $(shell pkg-config --libs jansson 2>/dev/null),-ljansson)

examples/json_api: examples/json_api.c src/libevfcgi.a src/engine/evfcgi.h
	$(CC) $(CPPFLAGS) $(ALL_CFLAGS) $(JANSSON_CFLAGS) -o $@ $< \
		src/libevfcgi.a $(LDFLAGS) $(LIBEVENT_LIBS) $(JANSSON_LIBS)
examples/%: examples/%.c src/libevfcgi.a src/engine/evfcgi.h
	$(CC) $(CPPFLAGS) $(ALL_CFLAGS) -o $@ $< src/libevfcgi.a $(LDFLAGS) \
		$(LIBEVENT_LIBS)

tests/bin/freeport: tests/freeport.c
	@mkdir -p tests/bin
	$(CC) $(CPPFLAGS) $(ALL_CFLAGS) -o $@ $<

# --- The checks --------------------------------------------------------

# An application whose producers misbehave (tests/test_producer.sh).
tests/bin/bad_producer: tests/bad_producer.c src/libevfcgi.a src/engine/evfcgi.h
	@mkdir -p tests/bin
	$(CC) $(CPPFLAGS) $(ALL_CFLAGS) -o $@ $< src/libevfcgi.a $(LDFLAGS) \
		$(LIBEVENT_LIBS)

# An application-shaped producer: a CSV export paged like a database
# cursor (tests/test_idle.sh, tests/test_cut.sh).
tests/bin/export_app: tests/export_app.c src/libevfcgi.a src/engine/evfcgi.h
	@mkdir -p tests/bin
	$(CC) $(CPPFLAGS) $(ALL_CFLAGS) -o $@ $< src/libevfcgi.a $(LDFLAGS) \
		$(LIBEVENT_LIBS)

# Each Check suite links the suites' and the tools' shared modules, the
# engine, the CGI gateway and the demo routes (the linker takes from the
# archives what the suite uses); built twice, the second time against the
# sanitizer flavour.
SUITE_LIBS = tests/libtests.a src/demo/app.o tools/libtools.a src/libcgi.a \
	src/libevfcgi-internal.a
SUITE_LIBS_ASAN = tests/asan/libtests.a src/asan/demo/app.o \
	tools/asan/libtools.a src/asan/libcgi.a src/asan/libevfcgi.a

TEST_HEADERS = $(wildcard tests/*.h)

# tests/*.c with a .h of their own are modules the suites share (the FastCGI
# peer of the socketpair suites), archived as the tools' are, in both flavours.
TEST_LIB_SRCS = $(wildcard $(patsubst %.h,%.c,$(TEST_HEADERS)))
TEST_LIB_OBJS = $(TEST_LIB_SRCS:.c=.o)
TEST_LIB_OBJS_ASAN = $(patsubst tests/%.c,tests/asan/%.o,$(TEST_LIB_SRCS))

$(TEST_LIB_OBJS): tests/%.o: tests/%.c $(HEADERS) $(TEST_HEADERS)
	$(CC) $(CPPFLAGS) $(ALL_CFLAGS) $(CHECK_CFLAGS) -c -o $@ $<
$(TEST_LIB_OBJS_ASAN): tests/asan/%.o: tests/%.c $(HEADERS) $(TEST_HEADERS)
	@mkdir -p tests/asan
	$(CC) $(CPPFLAGS) $(ALL_CFLAGS) -O1 -g $(SAN) $(CHECK_CFLAGS) -c -o $@ $<
tests/libtests.a: $(TEST_LIB_OBJS)
	rm -f $@
	ar rcs $@ $(TEST_LIB_OBJS)
tests/asan/libtests.a: $(TEST_LIB_OBJS_ASAN)
	rm -f $@
	ar rcs $@ $(TEST_LIB_OBJS_ASAN)

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

# The fuzz harness replays its seed corpus in every `make check` (gcc,
# sanitizers, no libFuzzer: tests/test_fuzz_replay.sh).
tests/bin/fuzz_replay: fuzz/fuzz_conn.c fuzz/replay.c src/asan/demo/app.o \
		src/asan/daemon/status.o src/asan/libevfcgi.a $(HEADERS)
	@mkdir -p tests/bin
	$(CC) $(CPPFLAGS) $(ALL_CFLAGS) -O1 -g $(SAN) -o $@ fuzz/fuzz_conn.c \
		fuzz/replay.c src/asan/demo/app.o src/asan/daemon/status.o \
		src/asan/libevfcgi.a $(LDFLAGS) \
		$(SAN) $(LIBEVENT_LIBS)

# The API fuzzer's script corpus, replayed the same way
# (tests/test_fuzz_replay.sh).  FUZZ_API_FLAGS=-DFUZZ_SKIP_KNOWN leaves
# out the actions of the bugs issue 35 lists (fuzz/fuzz_api.c).
tests/bin/fuzz_api_replay: fuzz/fuzz_api.c fuzz/replay.c src/asan/libevfcgi.a \
		$(HEADERS)
	@mkdir -p tests/bin
	$(CC) $(CPPFLAGS) $(ALL_CFLAGS) -O1 -g $(SAN) $(FUZZ_API_FLAGS) \
		-o $@ fuzz/fuzz_api.c fuzz/replay.c src/asan/libevfcgi.a \
		$(LDFLAGS) $(SAN) $(LIBEVENT_LIBS)

# The integration smoke under valgrind's memcheck (also part of make check).
valgrind: all
	bash tests/test_valgrind.sh

# --- The lab -----------------------------------------------------------

experiment: all
	tools/slow-client-experiment

# Three evfcgid hosts in network namespaces behind one nginx (root): a
# kill -9, a restart, a cut link and its return under load, with the old
# and the example's settings, then --workers 3 beside three hosts (about
# five minutes; results in hosts-out, docs/hosts.md).
hosts: all
	tools/multi-host $(HOSTS_ARGS)

# The same cells over kernel-shaped links (network namespaces; root):
# every profile, evfcgid and the blocking control behind nginx.
experiment-links: all
	tools/slow-client-experiment --links --frontends nginx --max-rounds 10 \
		--out experiment-out/links

# The long cases, bounded: real 512 B/s clients behind nginx and lighttpd
# reading SOAK_SIZE bytes (1 MiB: about 35 minutes), 1000 to 10,000 slow
# clients on their own shaped links (about 5 minutes, needs root; the
# committed run is docs/experiment/many/), then libFuzzer for 10 minutes.
soak: all fuzz/fuzz_conn
	bash tests/bench-slow-steps --pause 1000 --size $${SOAK_SIZE:-1048576}
	bash tests/soak-frontends --seconds $${SOAK_FE_SECONDS:-300}
	tools/many-slow-clients --out many-out
	$(MAKE) fuzz FUZZ_SECONDS=600

# libFuzzer (clang, which deps installs: not a package the build needs):
# 20 s in every make check (tests/test_fuzz.sh builds it), FUZZ_SECONDS
# (60) with make fuzz.  Every libFuzzer target links one clang build of
# the engine (fuzz/obj/, fuzz/libevfcgi-fuzz.a): five targets compiled
# it five times, a minute of a make check's processor.  Undefined
# behaviour ends a run (-fno-sanitize-recover), in every target.
FUZZ_CFLAGS = -std=c11 -D_GNU_SOURCE -I. -g -O1 \
	-fsanitize=address,undefined -fno-sanitize-recover=all \
	$(LIBEVENT_CFLAGS)
FUZZ_OBJS = $(patsubst src/%.c,fuzz/obj/%.o,$(LIB_SRCS) $(DEMO_SRCS) \
	src/daemon/status.c)
fuzz/obj/%.o: src/%.c $(HEADERS) | deps
	@mkdir -p $(dir $@)
	clang $(FUZZ_CFLAGS) $(INC_all) -fsanitize=fuzzer-no-link -c -o $@ $<
fuzz/libevfcgi-fuzz.a: $(FUZZ_OBJS)
	rm -f $@
	ar rcs $@ $(FUZZ_OBJS)
FUZZ_LINK = clang $(FUZZ_CFLAGS) $(INC_all) -fsanitize=fuzzer

fuzz/fuzz_conn: fuzz/fuzz_conn.c fuzz/libevfcgi-fuzz.a $(HEADERS) | deps
	$(FUZZ_LINK) -o $@ fuzz/fuzz_conn.c fuzz/libevfcgi-fuzz.a \
		$(LIBEVENT_LIBS)

# The API fuzzer (fuzz/fuzz_api.c): the engine alone, driven by scripts.
fuzz/fuzz_api: fuzz/fuzz_api.c fuzz/libevfcgi-fuzz.a $(HEADERS) | deps
	$(FUZZ_LINK) $(FUZZ_API_FLAGS) -o $@ fuzz/fuzz_api.c \
		fuzz/libevfcgi-fuzz.a $(LIBEVENT_LIBS)

fuzz: fuzz/fuzz_conn fuzz/fuzz_api
	mkdir -p fuzz/found fuzz/found-api
	fuzz/fuzz_conn -max_len=4096 -max_total_time=$${FUZZ_SECONDS:-60} fuzz/found fuzz/corpus
	fuzz/fuzz_api -max_len=4096 -max_total_time=$${FUZZ_SECONDS:-60} \
		-dict=fuzz/api.dict fuzz/found-api fuzz/corpus-api

# The API fuzzer's line coverage of src/engine (clang's coverage mapping,
# a separate build in fuzz/cov/): make fuzz-cov FUZZ_SECONDS=60.
fuzz-cov: deps
	bash fuzz/coverage $${FUZZ_SECONDS:-60}

# The typed-data parsers' targets (multipart, cookie, router), each with
# its seeds in fuzz/corpus-NAME: libFuzzer builds, and gcc builds that
# replay the seeds under the sanitizers; tests/test_fuzz_typed.sh makes
# and runs both in make check.
FUZZ_TYPED = fuzz/fuzz_multipart fuzz/fuzz_cookie fuzz/fuzz_router
$(FUZZ_TYPED): fuzz/fuzz_%: fuzz/fuzz_%.c fuzz/libevfcgi-fuzz.a $(HEADERS) \
		| deps
	$(FUZZ_LINK) -o $@ $< fuzz/libevfcgi-fuzz.a $(LIBEVENT_LIBS)
.PHONY: clean-fuzz-typed
clean: clean-fuzz-typed
clean-fuzz-typed:
	rm -f $(FUZZ_TYPED) fuzz/libevfcgi-fuzz.a
	rm -rf fuzz/obj fuzz/cov
tests/bin/fuzz_replay_%: fuzz/fuzz_%.c fuzz/replay.c src/asan/libevfcgi.a \
		$(HEADERS)
	@mkdir -p tests/bin
	$(CC) $(CPPFLAGS) $(ALL_CFLAGS) -O1 -g $(SAN) -o $@ $< fuzz/replay.c \
		src/asan/libevfcgi.a $(LDFLAGS) $(SAN) $(LIBEVENT_LIBS)

.PHONY: all deps check check-lab check-unit valgrind bench experiment experiment-links hosts soak demo fuzz fuzz-cov install \
	uninstall clean distclean
