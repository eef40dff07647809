# sluice — GNU make build. `make` builds ./sluice; `make test` runs unit and
# regression tests; `make run` starts sluice on examples/quickstart.cfg.
# Options: SANITIZE=1 (ASan+UBSan), DEBUG=1 (-O0), USE_OPENSSL/USE_PCRE2/
# USE_LUA/USE_ZLIB/USE_SYSTEMD=0 to build without that library.

CC       ?= gcc
VERSION  := $(shell cat VERSION)
PKG      ?= pkg-config

USE_OPENSSL ?= 1
USE_PCRE2   ?= 1
USE_LUA     ?= 1
USE_ZLIB    ?= 1
USE_SYSTEMD ?= 1

# Debian packages: runtime build dependencies, then test-only tools.
DEPS_BUILD := gcc make pkg-config libev-dev libssl-dev libpcre2-dev liblua5.4-dev \
              zlib1g-dev libsystemd-dev
DEPS_TEST  := varnish libcmocka-dev socat python3 procps

CFLAGS_BASE := -std=c11 -D_GNU_SOURCE -Wall -Wextra -Werror -Wshadow \
               -Wno-unused-parameter -Wstrict-prototypes -Wmissing-prototypes \
               -Iinclude -DSLUICE_VERSION='"$(VERSION)"' -pipe -g
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

OPT_PKGS :=
OPT_DEFS :=
ifeq ($(USE_OPENSSL),1)
  OPT_PKGS += openssl
  OPT_DEFS += -DUSE_OPENSSL
endif
ifeq ($(USE_PCRE2),1)
  OPT_PKGS += libpcre2-8
  OPT_DEFS += -DUSE_PCRE2 -DPCRE2_CODE_UNIT_WIDTH=8
endif
ifeq ($(USE_LUA),1)
  OPT_PKGS += lua5.4
  OPT_DEFS += -DUSE_LUA
endif
ifeq ($(USE_ZLIB),1)
  OPT_PKGS += zlib
  OPT_DEFS += -DUSE_ZLIB
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
LDLIBS  += $(LIBEV_LIBS) $(PKG_LIBS) -lm

SRCS := $(sort $(wildcard src/*/*.c))
LIB_SRCS := $(filter-out src/main.c,$(SRCS))
OBJS := $(patsubst src/%.c,$(BUILD)/%.o,$(SRCS) src/main.c)
LIB_OBJS := $(patsubst src/%.c,$(BUILD)/%.o,$(LIB_SRCS))

UNIT_SRCS := $(sort $(wildcard tests/unit/test_*.c))
UNIT_BINS := $(patsubst tests/unit/%.c,$(BUILD)/tests/%,$(UNIT_SRCS))

.PHONY: all deps run test unit reg-tests clean fuzz bench help sluice

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
	@$(CC) $(CFLAGS) -o $@ $< -Wl,--whole-archive $(BUILD)/libsluice.a -Wl,--no-whole-archive $(LDFLAGS) $(LDLIBS) -lcmocka

-include $(OBJS:.o=.d)

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

# Unit tests, then reg-tests; tests/summarize prints the single closing
# line "N passed, N failed" and fails when anything failed.
test: deps
	@$(MAKE) --no-print-directory sluice $(UNIT_BINS)
	@rm -f $(BUILD)/results.txt
	@RESULTS=$(BUILD)/results.txt tests/run-unit $(UNIT_BINS) || true
	@RESULTS=$(BUILD)/results.txt tests/run-reg-tests || true
	@tests/summarize $(BUILD)/results.txt

FUZZ_SRCS := $(sort $(wildcard tests/fuzz/fuzz_*.c))
fuzz:
	@mkdir -p build-fuzz
	@for f in $(FUZZ_SRCS); do n=$$(basename $$f .c); \
	  echo "  FUZZ $$n"; \
	  clang -std=c11 -D_GNU_SOURCE -g -O1 -Iinclude -fsanitize=fuzzer,address,undefined \
	    -DSLUICE_VERSION='"$(VERSION)"' -DSLUICE_BUILD_OPTS='"fuzz"' \
	    -o build-fuzz/$$n $$f $(LIB_SRCS) $(LIBEV_LIBS) -lm || exit 1; \
	done

bench: sluice
	bench/quick

clean:
	rm -rf build build-san build-fuzz sluice
