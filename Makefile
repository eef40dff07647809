# sluice — GNU make build. `make` builds ./sluice; `make test` runs unit and
# regression tests; `make run` starts sluice on examples/quickstart.cfg;
# `make install` (DESTDIR, PREFIX, ...) and `make deb` install or package it.
# Options: SANITIZE=1 (ASan+UBSan), DEBUG=1 (-O0), USE_OPENSSL/USE_PCRE2/
# USE_SYSTEMD=0 / USE_ZLIB=0 / USE_LUA=0 to build without that library
# (USE_ZLIB: HTTP compression; USE_LUA: Lua 5.4 scripting).

CC       ?= gcc
VERSION  := $(shell cat VERSION)
PKG      ?= pkg-config
# `show info` Release_date: the last commit's date, else VERSION's mtime.
RELDATE  := $(shell git log -1 --format=%cd --date=format:%Y/%m/%d 2>/dev/null || date -u -r VERSION +%Y/%m/%d)

USE_OPENSSL ?= 1
USE_PCRE2   ?= 1
USE_LUA     ?= 1
USE_ZLIB    ?= 1
USE_SYSTEMD ?= 1

# Debian packages: runtime build dependencies, then test-only tools.
DEPS_BUILD := gcc make pkg-config libev-dev libssl-dev libpcre2-dev \
              libsystemd-dev libcrypt-dev zlib1g-dev libnghttp2-dev liblua5.4-dev \
              libc-ares-dev
DEPS_TEST  := varnish libcmocka-dev socat python3 procps \
              dpkg-dev groff-base man-db systemd curl nghttp2-client python3-h2 python3-grpcio python3-dnslib haproxy \
              php-fpm

CFLAGS_BASE := -std=c11 -D_GNU_SOURCE -Wall -Wextra -Werror -Wshadow \
               -Wno-unused-parameter -Wstrict-prototypes -Wmissing-prototypes \
               -Iinclude -DSLUICE_VERSION='"$(VERSION)"' \
               -DSLUICE_RELEASE_DATE='"$(RELDATE)"' -pipe -g
ifeq ($(DEBUG),1)
  OPT := -O0
else
  OPT := -O2
endif

BUILD := build
ifeq ($(SANITIZE),1)
  OPT   := -O1 -fno-omit-frame-pointer
  SANF  := -fsanitize=address,undefined -fno-sanitize-recover=undefined
  BUILD := build-san
endif

# libev ships no .pc file on Debian; fall back to plain -lev.
LIBEV_LIBS   := $(shell $(PKG) --libs libev 2>/dev/null || echo -lev)
LIBEV_CFLAGS := $(shell $(PKG) --cflags libev 2>/dev/null)

# HTTP/2 framing and HPACK (libnghttp2) and the DNS client of `resolvers`
# sections (c-ares): always built.
OPT_PKGS := libnghttp2 libcares
OPT_DEFS :=
ifeq ($(USE_OPENSSL),1)
  OPT_PKGS += openssl
  OPT_DEFS += -DUSE_OPENSSL
endif
ifeq ($(USE_PCRE2),1)
  OPT_PKGS += libpcre2-8
  OPT_DEFS += -DUSE_PCRE2 -DPCRE2_CODE_UNIT_WIDTH=8
endif
ifeq ($(USE_ZLIB),1)
  OPT_PKGS += zlib
  OPT_DEFS += -DUSE_ZLIB
endif
ifeq ($(USE_LUA),1)
  OPT_PKGS += lua5.4
  OPT_DEFS += -DUSE_LUA
endif
ifeq ($(USE_SYSTEMD),1)
  OPT_PKGS += libsystemd
  OPT_DEFS += -DUSE_SYSTEMD
endif
PKG_CFLAGS := $(if $(strip $(OPT_PKGS)),$(shell $(PKG) --cflags $(OPT_PKGS) 2>/dev/null))
PKG_LIBS   := $(if $(strip $(OPT_PKGS)),$(shell $(PKG) --libs $(OPT_PKGS) 2>/dev/null))

BUILD_OPTS := $(strip $(patsubst -DUSE_%,USE_%=1,$(filter -DUSE_%,$(OPT_DEFS))) $(if $(SANF),SANITIZE=1))
CFLAGS  += $(CFLAGS_BASE) $(OPT) $(SANF) $(OPT_DEFS) $(LIBEV_CFLAGS) $(PKG_CFLAGS) \
           -DSLUICE_BUILD_OPTS='"$(BUILD_OPTS)"'
LDFLAGS += $(SANF)
LDLIBS  += $(LIBEV_LIBS) $(PKG_LIBS) -lcrypt -lm

SRCS := $(sort $(wildcard src/*/*.c))
LIB_SRCS := $(filter-out src/main.c,$(SRCS))
OBJS := $(patsubst src/%.c,$(BUILD)/%.o,$(SRCS) src/main.c)
LIB_OBJS := $(patsubst src/%.c,$(BUILD)/%.o,$(LIB_SRCS))

UNIT_SRCS := $(sort $(wildcard tests/unit/test_*.c))
UNIT_BINS := $(patsubst tests/unit/%.c,$(BUILD)/tests/%,$(UNIT_SRCS))

.PHONY: all deps deps-clients deps-scaleout run test unit reg-tests test-clients clean fuzz bench help sluice \
        bench-deps bench-all install uninstall deb

all: sluice

# ./sluice is the binary of the last build kind (plain or SANITIZE=1).
sluice: $(BUILD)/sluice
	@cmp -s $< $@ || { cp $< $@.tmp && mv -f $@.tmp $@; }

$(BUILD)/sluice: $(OBJS)
	@echo "  LD  $@"
	@$(CC) $(LDFLAGS) -o $@ $^ $(LDLIBS)

$(BUILD)/%.o: src/%.c
	@mkdir -p $(dir $@)
	@echo "  CC  $<"
	@$(CC) $(CFLAGS) -MMD -MP -c -o $@ $<

$(BUILD)/libsluice.a: $(LIB_OBJS)
	@rm -f $@ && ar rcs $@ $^

$(BUILD)/tests/%: tests/unit/%.c $(BUILD)/libsluice.a
	@mkdir -p $(dir $@)
	@echo "  CC  $@"
	@$(CC) $(CFLAGS) -MMD -MP -MF $@.d -o $@ $< -Wl,--whole-archive $(BUILD)/libsluice.a -Wl,--no-whole-archive $(LDFLAGS) $(LDLIBS) -lcmocka

-include $(OBJS:.o=.d) $(UNIT_BINS:=.d)

# Install what is missing: apt-get as root, else print the command and fail.
deps:
	@missing=""; for p in $(DEPS_BUILD) $(DEPS_TEST); do \
	  dpkg-query -W -f='$${Status}' $$p 2>/dev/null | grep -q 'ok installed' || missing="$$missing $$p"; \
	done; \
	if [ -z "$$missing" ]; then exit 0; fi; \
	if [ "$$(id -u)" = 0 ]; then \
	  echo "deps: installing$$missing"; \
	  (apt-get install -y -q $$missing >/dev/null 2>&1 || \
	   (apt-get update -q >/dev/null && DEBIAN_FRONTEND=noninteractive apt-get install -y -q $$missing)) || exit 1; \
	else \
	  echo "deps: missing Debian packages; run:"; \
	  echo "  sudo apt-get install -y$$missing"; exit 1; \
	fi

run: deps sluice
	./sluice -d -f examples/quickstart.cfg

unit: $(UNIT_BINS)
	@tests/run-unit $(UNIT_BINS)

reg-tests: sluice
	@tests/run-reg-tests

# The clients HAProxy operators run (socat, prometheus-haproxy-exporter, hatop,
# promtool) and headless Chromium on the stats page. Heavy and optional:
# `make deps-clients` tries to install them and never fails; a client that
# could not be installed is reported as SKIP by the checks.
DEPS_CLIENTS := hatop prometheus-haproxy-exporter prometheus chromium python3-h2 python3-grpcio

# $(call install_missing,TARGET,PACKAGES,WHAT IF NOT): installs, as root,
# those of PACKAGES that dpkg does not list as installed; never fails.
define install_missing
	@missing=""; for p in $(2); do \
	  dpkg-query -W -f='$${Status}' $$p 2>/dev/null | grep -q 'ok installed' || missing="$$missing $$p"; \
	done; \
	if [ -n "$$missing" ] && [ "$$(id -u)" = 0 ]; then \
	  echo "$(1): installing$$missing"; \
	  DEBIAN_FRONTEND=noninteractive apt-get install -y -q $$missing >/dev/null 2>&1 || \
	    echo "$(1): could not install$$missing: $(3)"; \
	fi; true
endef

deps-clients:
	$(call install_missing,deps-clients,$(DEPS_CLIENTS),their checks will SKIP)

# What tests/scaleout/run builds the recipe of doc/scale-out.md with (best
# effort, like deps-clients: without them it SKIPs).
DEPS_SCALEOUT := nftables conntrack keepalived

deps-scaleout:
	$(call install_missing,deps-scaleout,$(DEPS_SCALEOUT),tests/scaleout/run will SKIP)

test-clients: sluice
	@tests/clients/run
	@tests/clients/stats_page_chromium

# Runs the client checks of `make test` (plain build only: they test
# protocol compatibility, not memory safety), recording PASS/FAIL.
define run_clients
	@if [ "$(SANITIZE)" != 1 ]; then \
	  for c in tests/clients/run tests/clients/stats_page_chromium; do \
	    if timeout 180 $$c; then echo "PASS clients:$$(basename $$c)" >> $(BUILD)/results.txt; \
	    else echo "FAIL clients:$$(basename $$c)" >> $(BUILD)/results.txt; fi; \
	  done; \
	fi
endef

# One script suite of make test (tests/run-suite): it records its own
# PASS/FAIL lines; a crash, a timeout, an exit 1 without a recorded failure
# or nothing recorded is one more FAIL. $(call suite,NAME,SECONDS,SCRIPT)
suite = @RESULTS=$(BUILD)/results.txt SLUICE=$(CURDIR)/$(BUILD)/sluice tests/run-suite $(1) $(2) $(3)

# The TLS checks (curl, openssl s_client against ./sluice; tests/tls/run,
# tests/tls/options for the options and runtime commands, tests/tls/globals
# for the global keywords): also under
# SANITIZE=1, where they report sanitizer findings. They record their own
# PASS/FAIL lines; a crash or a timeout of the script is one more FAIL.
define run_tls
	$(call suite,tls,300,tests/tls/run)
	$(call suite,tlsopt,400,tests/tls/options)
	$(call suite,tlsglob,400,tests/tls/globals)
endef

# The HTTP/2 checks (tests/h2/run, Debian's /usr/bin/python3 with
# python3-h2; curl, h2load, nginx): also under SANITIZE=1. Same contract as
# run_tls.
define run_h2
	$(call suite,h2,300,tests/h2/run)
endef

# DNS at run time (tests/dns/run, Debian's /usr/bin/python3 with
# python3-dnslib): resolvers sections against DNS servers the script runs,
# servers and server-templates following A/AAAA/SRV answers under load,
# hold rules, hostile answers, do-resolve; also under SANITIZE=1. Same
# contract as run_tls.
define run_dns
	$(call suite,dns,300,tests/dns/run)
endef

# HTTP/2 to servers (tests/h2back/run, with Debian's /usr/bin/python3 for
# python3-h2 and python3-grpcio): gRPC, HTTP/1.1 to HTTP/2 translation,
# multiplexing, hostile servers, ALPN; also under SANITIZE=1. Same contract
# as run_tls.
define run_h2back
	$(call suite,h2back,300,tests/h2back/run)
endef

# FastCGI to servers (tests/fcgi/run): python responders written in the
# test (one of them lying on purpose), and Debian's php-fpm end to end;
# also under SANITIZE=1. Same contract as run_tls.
define run_fcgi
	$(call suite,fcgi,300,tests/fcgi/run)
endef

# The runtime API checks varnishtest cannot express (descriptors run out,
# failed reloads, long pipelined input), a few seconds: also under
# SANITIZE=1. They record their own PASS/FAIL lines; a crash or a timeout of
# the script is one more FAIL.
define run_cli
	$(call suite,cli,120,tests/cli/run)
endef

# Log targets and syslog relays (tests/logging/run: TCP syslog, host names,
# sampling, rings forwarding to servers, log-forward): also under
# SANITIZE=1. Same contract as run_cli.
define run_logging
	@RESULTS=$(BUILD)/results.txt SLUICE=$(CURDIR)/$(BUILD)/sluice timeout 200 tests/logging/run >/dev/null; \
	  rc=$$?; [ $$rc -le 1 ] || echo "FAIL logging:run (exit $$rc)" >> $(BUILD)/results.txt
endef

# HTTP compression checks (streamed bodies inflated with Python's zlib, a
# body cut short): also under SANITIZE=1. Same contract as run_cli.
define run_comp
	$(call suite,comp,200,tests/compression/run)
endef

# Master-worker checks (systemd notify, signals during reloads, crashes,
# the master's descriptors, keep-alive clients across reloads): also under
# SANITIZE=1. Same contract as run_cli.
define run_mworker
	$(call suite,mworker,300,tests/mworker/run)
endef

# Stick-table replication (tests/peers/run): sluice and Debian's haproxy 2.6
# nodes on loopback ports, a Python peer, reloads through the local peer;
# about 15 s. Also under SANITIZE=1. Same contract as run_cli.
define run_peers
	$(call suite,peers,300,tests/peers/run)
endef

# The scale-out recipe (tests/scaleout/run, doc/scale-out.md): network
# namespaces, an nftables director (two with keepalived), three nodes, two
# backends; under a minute. Root, nft, conntrack and ip netns, else SKIP.
# Also under SANITIZE=1. Same contract as run_cli.
define run_scaleout
	$(call suite,scaleout,300,tests/scaleout/run)
endef

# Health checks varnishtest cannot watch (connect rule options, external
# checks, e-mail alerts; tests/checks/run): also under SANITIZE=1. Same
# contract as run_cli.
define run_checks
	$(call suite,checks,200,tests/checks/run)
endef

# SPOE against SPOP agents written in the test (tests/spoe/run): also under
# SANITIZE=1. Same contract as run_checks.
define run_spoe
	$(call suite,spoe,240,tests/spoe/run)
endef

# Installation and the Debian package (tests/pkg/run): make install, the man
# page, the systemd unit, `make deb`; about 15 s. Plain build only.
define run_pkg
	@if [ "$(SANITIZE)" != 1 ]; then \
	  RESULTS=$(BUILD)/results.txt SLUICE=$(CURDIR)/$(BUILD)/sluice tests/run-suite pkg 120 tests/pkg/run; \
	fi
endef

# The benchmark scripts must at least compile (they are not run by `make
# test`: they take minutes and need a quiet machine). compile(), as
# py_compile does, without leaving __pycache__ behind.
BENCH_PY := bench/quick bench/profile bench/run-all bench/size_sweep bench/conn_rate \
            bench/session bench/concurrency bench/latency bench/rules bench/backends \
            bench/multicore bench/tls bench/reload bench/compression bench/cache bench/h2 \
            bench/lua bench/lib/benchlib.py bench/lib/study.py
define check_bench_scripts
	@if python3 -c 'import sys; [compile(open(f).read(), f, "exec") for f in sys.argv[1:]]' \
	    $(BENCH_PY); then echo "PASS bench:scripts-compile" >> $(BUILD)/results.txt; \
	else echo "FAIL bench:scripts-compile" >> $(BUILD)/results.txt; fi
endef

# HAProxy drop-in checks: tests/compare-configs (the corpus of tests/configs
# against Debian's haproxy -c; SKIP without haproxy) and tests/dropin/
# debian-stock (Debian's /etc/haproxy/haproxy.cfg checked and run). Plain
# build only: they compare verdicts, not memory safety.
define run_dropin
	@if [ "$(SANITIZE)" != 1 ]; then \
	  RESULTS=$(BUILD)/results.txt SLUICE=$(CURDIR)/$(BUILD)/sluice timeout 120 tests/compare-configs >/dev/null; \
	  RESULTS=$(BUILD)/results.txt SLUICE=$(CURDIR)/$(BUILD)/sluice timeout 60 tests/dropin/debian-stock >/dev/null; \
	fi; true
endef

# What the HAProxy connection options do on the wire (tests/dropin/connect:
# header case, source addresses, namespaces, SOCKS4, PROXY TLVs...): also
# under SANITIZE=1. Same contract as run_cli.
define run_connect
	$(call suite,dropin-connect,300,tests/dropin/connect)
endef

# Includes must point down the layers (tests/check-layers, doc/design.md).
define check_layers
	@if tests/check-layers; then echo "PASS layers:check-layers" >> $(BUILD)/results.txt; \
	else echo "FAIL layers:check-layers" >> $(BUILD)/results.txt; fi
endef

# Unit tests, then reg-tests; tests/summarize prints the single closing
# line "N passed, N failed" and fails when anything failed.
test: deps deps-clients deps-scaleout
	@$(MAKE) --no-print-directory sluice $(UNIT_BINS)
	@rm -f $(BUILD)/results.txt
	@RESULTS=$(BUILD)/results.txt tests/run-unit $(UNIT_BINS) || true
	@RESULTS=$(BUILD)/results.txt tests/run-reg-tests || true
	$(run_tls)
	$(run_h2)
	$(run_h2back)
	$(run_fcgi)
	$(run_dns)
	$(run_cli)
	$(run_logging)
	$(run_comp)
	$(run_mworker)
	$(run_peers)
	$(run_scaleout)
	$(run_checks)
	$(run_spoe)
	$(run_clients)
	$(run_pkg)
	$(run_dropin)
	$(run_connect)
	$(check_bench_scripts)
	$(check_layers)
	@tests/summarize $(BUILD)/results.txt

# libFuzzer harnesses (tests/fuzz/fuzz_*.c) built with clang, libFuzzer, ASan
# and UBSan into build-fuzz/. The library objects are compiled once, without
# the USE_* options but zlib and Lua (no OpenSSL/PCRE2/systemd), so only
# libev, libnghttp2 and c-ares (always built), zlib (fuzz_proxy compresses
# some responses) and Lua (fuzz_lua) are linked. `make
# fuzz-smoke` runs each harness fuzz_<name> FUZZ_TIME seconds from its seeds tests/fuzz/corpus/<name>/ (read only; new inputs go to
# build-fuzz/corpus/<name>/) with tests/fuzz/<name>.dict if present, and
# fails on any crash, leak, timeout or OOM.
FUZZ_CC     ?= clang
FUZZ_TIME   ?= 20
FUZZ_SRCS   := $(sort $(wildcard tests/fuzz/fuzz_*.c))
FUZZ_BINS   := $(patsubst tests/fuzz/%.c,build-fuzz/%,$(FUZZ_SRCS))
FUZZ_OBJS   := $(patsubst src/%.c,build-fuzz/obj/%.o,$(LIB_SRCS))
FUZZ_CFLAGS := -std=c11 -D_GNU_SOURCE -g -O1 -fno-omit-frame-pointer -Iinclude \
               -DSLUICE_VERSION='"$(VERSION)"' -DSLUICE_BUILD_OPTS='"fuzz"' $(LIBEV_CFLAGS) \
               -DUSE_ZLIB -DUSE_LUA $(shell $(PKG) --cflags lua5.4 libcares 2>/dev/null) \
               -fsanitize=address,undefined -fno-sanitize-recover=undefined

# Re-measures ../shared/haproxy-2.6-surface.tsv against ./sluice (about a
# minute; not part of `make test`): accepted/total per kind, and the rest.
surface: sluice
	@tests/surface

.PHONY: fuzz fuzz-smoke deps-fuzz surface
.SECONDARY: $(FUZZ_OBJS)
fuzz: deps-fuzz
	@$(MAKE) --no-print-directory $(FUZZ_BINS)

# clang and its libFuzzer runtime (Debian 12: libclang-rt-14-dev).
deps-fuzz:
	@$(MAKE) --no-print-directory deps DEPS_TEST="clang libclang-rt-14-dev"


build-fuzz/obj/%.o: src/%.c
	@mkdir -p $(dir $@)
	@echo "  CC  $@"
	@$(FUZZ_CC) $(FUZZ_CFLAGS) -fsanitize=fuzzer-no-link -MMD -MP -c -o $@ $<

build-fuzz/%: tests/fuzz/%.c $(FUZZ_OBJS)
	@echo "  LD  $@"
	@$(FUZZ_CC) $(FUZZ_CFLAGS) -fsanitize=fuzzer -MMD -MP -MF $@.d -o $@ $< $(FUZZ_OBJS) $(LIBEV_LIBS) -lnghttp2 -lcares -lz -llua5.4 -lm

-include $(FUZZ_OBJS:.o=.d) $(FUZZ_BINS:=.d)

fuzz-smoke: fuzz
	@for b in $(FUZZ_BINS); do n=$$(basename $$b); s=$${n#fuzz_}; \
	  mkdir -p build-fuzz/corpus/$$s; \
	  dict=; if [ -f tests/fuzz/$$s.dict ]; then dict=-dict=tests/fuzz/$$s.dict; fi; \
	  seeds=; if [ -d tests/fuzz/corpus/$$s ]; then seeds=tests/fuzz/corpus/$$s; fi; \
	  echo "  FUZZ $$n for $(FUZZ_TIME)s"; \
	  $$b -max_total_time=$(FUZZ_TIME) -timeout=10 -rss_limit_mb=2048 -max_len=8192 \
	    -close_fd_mask=3 -print_final_stats=1 $$dict -artifact_prefix=build-fuzz/$$n- \
	    build-fuzz/corpus/$$s $$seeds > build-fuzz/$$n.log 2>&1 || { \
	    tail -40 build-fuzz/$$n.log; \
	    echo "fuzz-smoke: $$n failed, see build-fuzz/$$n.log and build-fuzz/$$n-*"; exit 1; }; \
	  sed -n 's/^stat::number_of_executed_units: */    executions: /p' build-fuzz/$$n.log; \
	done

# The benchmark studies' own load generator (bench/tools/loadgen.c): plain
# -O2, no sanitizer, whatever the build kind.
bench/tools/loadgen: bench/tools/loadgen.c
	@echo "  CC  $@"
	@$(CC) -std=gnu11 -O2 -Wall -Wextra -Werror -o $@ $<

# The yardsticks and load generators of bench/quick and the studies (best
# effort, like deps-clients: a study whose tool is missing names its package).
BENCH_DEPS := gnuplot-nox httperf wrk nginx haproxy util-linux procps openssl

bench-deps: bench/tools/loadgen
	$(call install_missing,bench-deps,$(BENCH_DEPS),the studies needing them will say so)

# All studies with the settings of bench/run-all (under 20 minutes).
bench-all: sluice bench-deps
	bench/run-all

# The yardsticks and the load generator, only for benchmarks.
bench: sluice
	@$(MAKE) --no-print-directory deps DEPS_TEST="haproxy nginx-light wrk procps util-linux"
	bench/quick

# `make install`: the binary, sluice(1), the systemd unit (its paths
# rewritten to these directories), the sysusers.d entry for the user
# sluice, bash completion, doc/ and the example configurations, and
# SYSCONFDIR/sluice/sluice.cfg unless it exists. DESTDIR prefixes them all.
PREFIX         ?= /usr/local
SBINDIR        ?= $(PREFIX)/sbin
MANDIR         ?= $(PREFIX)/share/man
DOCDIR         ?= $(PREFIX)/share/doc/sluice
SYSCONFDIR     ?= $(if $(filter /usr,$(PREFIX)),/etc,$(PREFIX)/etc)
SYSTEMDUNITDIR ?= $(PREFIX)/lib/systemd/system
SYSUSERSDIR    ?= $(PREFIX)/lib/sysusers.d
BASHCOMPDIR    ?= $(PREFIX)/share/bash-completion/completions
# the binary installed (`make deb` installs its hardened build)
INSTALL_BIN    ?= sluice

install: $(INSTALL_BIN)
	install -d -m 755 $(DESTDIR)$(SBINDIR) $(DESTDIR)$(MANDIR)/man1 \
	  $(DESTDIR)$(DOCDIR)/examples $(DESTDIR)$(SYSCONFDIR)/sluice \
	  $(DESTDIR)$(SYSTEMDUNITDIR) $(DESTDIR)$(SYSUSERSDIR) $(DESTDIR)$(BASHCOMPDIR)
	install -m 755 $(INSTALL_BIN) $(DESTDIR)$(SBINDIR)/sluice
	install -m 644 doc/sluice.1 $(DESTDIR)$(MANDIR)/man1/sluice.1
	sed -e 's|/usr/sbin/sluice|$(SBINDIR)/sluice|g' -e 's|/etc/|$(SYSCONFDIR)/|g' \
	  -e 's|/usr/share/doc/sluice|$(DOCDIR)|g' examples/sluice.service \
	  > $(DESTDIR)$(SYSTEMDUNITDIR)/sluice.service
	chmod 644 $(DESTDIR)$(SYSTEMDUNITDIR)/sluice.service
	install -m 644 examples/sluice.sysusers $(DESTDIR)$(SYSUSERSDIR)/sluice.conf
	install -m 644 pkg/sluice.bash-completion $(DESTDIR)$(BASHCOMPDIR)/sluice
	install -m 644 $(filter-out doc/sluice.1,$(wildcard doc/*)) README.md $(DESTDIR)$(DOCDIR)
	install -m 644 examples/*.cfg $(DESTDIR)$(DOCDIR)/examples
	@if [ -e $(DESTDIR)$(SYSCONFDIR)/sluice/sluice.cfg ]; then \
	  echo "install: keeping the existing $(DESTDIR)$(SYSCONFDIR)/sluice/sluice.cfg"; \
	else \
	  echo "install -m 644 examples/sluice.cfg $(DESTDIR)$(SYSCONFDIR)/sluice/sluice.cfg"; \
	  install -m 644 examples/sluice.cfg $(DESTDIR)$(SYSCONFDIR)/sluice/sluice.cfg; \
	fi

# Removes what `make install` installed, except the configuration.
uninstall:
	rm -f $(DESTDIR)$(SBINDIR)/sluice $(DESTDIR)$(MANDIR)/man1/sluice.1 \
	  $(DESTDIR)$(SYSTEMDUNITDIR)/sluice.service $(DESTDIR)$(SYSUSERSDIR)/sluice.conf \
	  $(DESTDIR)$(BASHCOMPDIR)/sluice
	rm -rf $(DESTDIR)$(DOCDIR)
	@if [ -e $(DESTDIR)$(SYSCONFDIR)/sluice/sluice.cfg ]; then \
	  echo "uninstall: $(DESTDIR)$(SYSCONFDIR)/sluice/ is left in place"; fi

# `make deb`: sluice_<version>_<arch>.deb in DEB_OUT. The binary is built
# in build-deb/ with Debian's hardening flags (dpkg-buildflags), installed
# under build-deb/root with PREFIX=/usr, then pkg/mkdeb packs it. The
# Debian version is VERSION with '-' read as '~' (0.1.0-dev sorts before
# 0.1.0), and revision -1.
DEB_VERSION ?= $(subst -,~,$(VERSION))-1
DEB_ARCH    ?= $(shell dpkg --print-architecture 2>/dev/null || echo amd64)
DEB_OUT     ?= .
DEB_FILE    := $(DEB_OUT)/sluice_$(DEB_VERSION)_$(DEB_ARCH).deb
DEB_UNITDIR ?= $(shell $(PKG) --variable=systemdsystemunitdir systemd 2>/dev/null || echo /lib/systemd/system)

deb:
	@rm -rf build-deb/root
	@export DEB_BUILD_MAINT_OPTIONS=hardening=+all; \
	CFLAGS="$$(dpkg-buildflags --get CFLAGS) $$(dpkg-buildflags --get CPPFLAGS)" \
	LDFLAGS="$$(dpkg-buildflags --get LDFLAGS)" \
	$(MAKE) --no-print-directory BUILD=build-deb INSTALL_BIN=build-deb/sluice \
	  DESTDIR=build-deb/root PREFIX=/usr SYSCONFDIR=/etc SYSTEMDUNITDIR=$(DEB_UNITDIR) \
	  SYSUSERSDIR=/usr/lib/sysusers.d MANDIR=/usr/share/man DOCDIR=/usr/share/doc/sluice \
	  SBINDIR=/usr/sbin BASHCOMPDIR=/usr/share/bash-completion/completions install >/dev/null
	@pkg/mkdeb build-deb/root $(DEB_VERSION) $(DEB_ARCH) $(DEB_FILE)

clean:
	rm -rf build build-san build-fuzz build-deb sluice bench/tools/loadgen sluice_*.deb
