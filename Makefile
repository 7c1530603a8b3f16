# ckpt: five small filters over one library.  See README.
PREFIX ?= /usr/local
DESTDIR ?=
CC ?= cc
CFLAGS ?= -O2 -g
PKGS = jansson libarchive libxxhash snappy rocksdb libcurl zlib libzstd
WARN = -std=c11 -D_GNU_SOURCE -Wall -Wextra -Werror -Wshadow -Wstrict-prototypes \
       -Wmissing-prototypes -Wpointer-arith -Wformat=2 -Wvla -Wno-format-truncation
# pkg-config is asked when a recipe runs, so that `make deps` can install it first.
DEP_CFLAGS = $(shell pkg-config --cflags $(PKGS) 2>/dev/null)
DEP_LIBS = $(shell pkg-config --libs $(PKGS) 2>/dev/null || echo -ljansson -larchive -lxxhash -lsnappy -lrocksdb -lcurl -lz -lzstd)

# SANITIZE=1 builds everything with ASan + UBSan into build/san/ (binaries in build/san/bin).
ifeq ($(SANITIZE),1)
VARIANT = san
SANFLAGS = -fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=all
BINDIR = build/san/bin
else
VARIANT = plain
SANFLAGS =
BINDIR = bin
endif
OBJDIR = build/$(VARIANT)/obj
CHECK_FUZZ_SECONDS ?= 15
ALL_CFLAGS = $(WARN) $(CFLAGS) $(SANFLAGS) -pthread -Ilib $(DEP_CFLAGS) -MMD -MP
ALL_LDFLAGS = $(LDFLAGS) $(SANFLAGS) -pthread

LIB_SRC = $(sort $(wildcard lib/*.c lib/*/*.c lib/*/*/*.c))
LIB_OBJ = $(LIB_SRC:%.c=$(OBJDIR)/%.o)
LIB = $(OBJDIR)/libckpt.a
CLI_OBJ = $(OBJDIR)/bin/cli.o
PROG_SRC = $(sort $(wildcard bin/ckpt-*.c))
PROGS = $(PROG_SRC:bin/%.c=$(BINDIR)/%)
MAN = $(sort $(wildcard man/*.[157]))

.SECONDARY:
.PHONY: all deps check test lint symbols layers demo install uninstall clean bench fuzz
.PHONY: flink-fixtures flink-test s3proxy
.DEFAULT_GOAL := all

all: $(PROGS)

$(OBJDIR)/%.o: %.c
	@mkdir -p $(dir $@)
	@echo "  CC $<"
	@$(CC) $(ALL_CFLAGS) -c -o $@ $<

$(LIB): $(LIB_OBJ)
	@rm -f $@
	@$(AR) rcs $@ $^

$(BINDIR)/%: $(OBJDIR)/bin/%.o $(CLI_OBJ) $(LIB)
	@mkdir -p $(dir $@)
	@echo "  LD $@"
	@$(CC) $(ALL_LDFLAGS) -o $@ $(filter %.o,$^) $(LIB) $(DEP_LIBS) -lm

# ckpt-inspect's summary for a person (the table, the skew and its plot) is a file of its own.
INSPECT_OBJ = $(OBJDIR)/bin/inspect-summary.o $(OBJDIR)/bin/inspect-shards.o $(OBJDIR)/bin/inspect-offsets.o
$(BINDIR)/ckpt-inspect: $(INSPECT_OBJ)

# lib/base/hash.c hashes large inputs through libxxhash's run-time choice of SSE2, AVX2 or AVX-512 when
# the library has it (Debian's does); asked when hash.c is compiled.
XXH_DISPATCH = $(shell printf 'char XXH3_64bits_update_dispatch(void);\nint main(void) { return !XXH3_64bits_update_dispatch; }\n' | \
	$(CC) -x c -o /dev/null - $(DEP_LIBS) 2>/dev/null && echo -DCKPT_XXH_DISPATCH)
$(OBJDIR)/lib/base/hash.o: ALL_CFLAGS += $(XXH_DISPATCH)

# The library's own files may include the layer headers (lib/LAYER/LAYER.h); programs may not.
$(LIB_OBJ): ALL_CFLAGS += -DCKPT_LIBRARY

-include $(LIB_OBJ:.o=.d) $(PROG_SRC:bin/%.c=$(OBJDIR)/bin/%.d) $(CLI_OBJ:.o=.d) $(INSPECT_OBJ:.o=.d)

# Install what a fresh Debian machine lacks; apt-get runs only when something is missing.
deps:
	@sh .ci/deps

# The test command of the README: build, run every test, lint every man page;
# then (unless SANITIZE=1 asked for that suite alone) the same suite under
# ASan + UBSan with leak checking, and each fuzz target briefly.
check: deps
	@$(MAKE) --no-print-directory all
	@$(MAKE) --no-print-directory symbols layers test lint
ifneq ($(SANITIZE),1)
	@echo "== the suite again under ASan + UBSan"
	@$(MAKE) --no-print-directory SANITIZE=1 all test
	@if grep -q '^fuzz-smoke:' Makefile; then echo "== each fuzz target briefly"; \
		$(MAKE) --no-print-directory fuzz-smoke FUZZ_SECONDS=$(CHECK_FUZZ_SECONDS); fi
endif
	@echo "== against real Flink (t/flink)"
	@$(MAKE) --no-print-directory flink-test

test: all
	@CKPT_BIN=$(CURDIR)/$(BINDIR) sh t/run

# Every external symbol of the library starts with ckpt_, so that it cannot clash with a program's.
# What AddressSanitizer adds for a global variable NAME (its ODR indicator: gcc's __odr_asan.NAME,
# clang's __odr_asan_gen_NAME) is judged by NAME.  SYMBOLS_OBJ: other objects to check (t/symbols.bats).
SYMBOLS_OBJ ?= $(LIB_OBJ)
symbols: $(SYMBOLS_OBJ)
	@bad=$$(nm -g --defined-only $(SYMBOLS_OBJ) | \
		awk 'NF == 3 { s = $$3; sub(/^__odr_asan(\.|_gen_)/, "", s); if (s !~ /^ckpt_/) print s }' | sort -u); \
	if [ -n "$$bad" ]; then echo "libckpt exports symbols without the ckpt_ prefix:" $$bad >&2; exit 1; fi; \
	echo "symbols: every external symbol of libckpt starts with ckpt_"

# The layers of lib/ (lib/README): every #include and every call between folders goes down.
layers: $(LIB_OBJ)
	@sh .ci/layers $(LIB_OBJ)

# Issue 15: real Flink jobs write checkpoints, savepoints, REST responses and event logs with
# sidecars of what Flink says about them (t/flink/README); t/flink/*.bats check ckpt against them.
flink-fixtures:
	@sh t/flink/run.sh

flink-test: flink-fixtures
	@CKPT_BIN=$(CURDIR)/$(BINDIR) sh t/flink/test.sh

# The S3 server t/s3.bats starts (s3proxy from Maven Central, into ~/.m2; .ci/deps does it too).
s3proxy:
	@sh .ci/deps s3proxy

lint:
	@if [ -n "$(MAN)" ]; then mandoc -Tlint -Wwarning $(MAN) && echo "mandoc: $(words $(MAN)) pages clean"; fi

demo: deps
	@$(MAKE) --no-print-directory all
	@sh examples/demo.sh

bench:
	@sh .ci/deps bench
	@$(MAKE) --no-print-directory all
	@for b in t/bench/*.sh; do bash $$b || exit 1; done

install: all
	install -d $(DESTDIR)$(PREFIX)/bin $(DESTDIR)$(PREFIX)/share/man/man1 \
		$(DESTDIR)$(PREFIX)/share/man/man5 $(DESTDIR)$(PREFIX)/share/man/man7
	install -m 755 $(PROGS) $(DESTDIR)$(PREFIX)/bin
	for m in $(MAN); do s=$${m##*.}; install -m 644 $$m $(DESTDIR)$(PREFIX)/share/man/man$$s; done

uninstall:
	for p in $(PROGS); do rm -f $(DESTDIR)$(PREFIX)/bin/$${p##*/}; done
	for m in $(MAN); do s=$${m##*.}; rm -f $(DESTDIR)$(PREFIX)/share/man/man$$s/$${m##*/}; done

clean:
	rm -rf build $(PROGS)

# ---- fuzzing (issue 9): libFuzzer targets t/fuzz/fuzz_*.c, built with clang
# against the library sources into build/fuzz/.  `make fuzz` builds them;
# `make fuzz-smoke` runs each FUZZ_SECONDS from its seed corpus and fails on
# any crash, leak or timeout.  Warnings are not errors here: clang's set differs.
# The targets are white-box tests: they may use the internal API (-DCKPT_LIBRARY).
FUZZ_CC ?= clang
FUZZ_SECONDS ?= 20
FUZZ_DIR = build/fuzz
FUZZ_CFLAGS = -std=c11 -D_GNU_SOURCE -DCKPT_LIBRARY -g -O1 -fno-omit-frame-pointer -pthread -Ilib $(DEP_CFLAGS) \
	      -fsanitize=address,undefined -fno-sanitize-recover=undefined -MMD -MP
FUZZ_SRC = $(sort $(wildcard t/fuzz/fuzz_*.c))
FUZZ_BINS = $(FUZZ_SRC:t/fuzz/%.c=$(FUZZ_DIR)/%)
FUZZ_LIB_OBJ = $(LIB_SRC:%.c=$(FUZZ_DIR)/obj/%.o)
.PHONY: fuzz-deps fuzz-smoke

fuzz-deps:
	@sh .ci/deps fuzz

fuzz: fuzz-deps
	@$(MAKE) --no-print-directory $(FUZZ_BINS)

$(FUZZ_DIR)/obj/%.o: %.c
	@mkdir -p $(dir $@)
	@echo "  FUZZCC $<"
	@$(FUZZ_CC) $(FUZZ_CFLAGS) -fsanitize=fuzzer-no-link -c -o $@ $<

$(FUZZ_DIR)/libckpt.a: $(FUZZ_LIB_OBJ)
	@rm -f $@
	@$(AR) rcs $@ $^

$(FUZZ_DIR)/fuzz_%: $(FUZZ_DIR)/obj/t/fuzz/fuzz_%.o $(FUZZ_DIR)/obj/t/fuzz/util.o $(FUZZ_DIR)/libckpt.a
	@echo "  FUZZLD $@"
	@$(FUZZ_CC) -fsanitize=fuzzer,address,undefined -pthread -o $@ $^ $(DEP_LIBS) -lm

-include $(FUZZ_LIB_OBJ:.o=.d) $(FUZZ_SRC:t/fuzz/%.c=$(FUZZ_DIR)/obj/t/fuzz/%.d) $(FUZZ_DIR)/obj/t/fuzz/util.d

fuzz-smoke: fuzz
	@FUZZ_SECONDS=$(FUZZ_SECONDS) sh t/fuzz/smoke.sh $(FUZZ_BINS)
