# d4r-splice - plain Makefile.  `make` builds build/d4r-splice.
#
#   make check       every test that needs no GPU, several at a time
#                    (scripts/run-tests: -j from the CPU count, or
#                    D4R_TEST_JOBS=N); one test or a few by name:
#                    scripts/run-tests build cli/t1202 t0301 unit/test_file
#   make check-gpu   the GPU tests (on a machine with the CUDA driver)
#   make bench       throughput and timing figures
#   make asan|ubsan  sanitizer builds (build-asan/, build-ubsan/) and their tests
#   make fuzz        libFuzzer targets (clang)
#   make mutate      break the code on purpose (tests/mutations.txt) in a copy of
#                    the tree; every mutation must make a test fail
#   make format      clang-format the sources
#   make install     PREFIX=/usr/local DESTDIR=: the program, its man page,
#                    recipes/ ptx/ corpus/ in PREFIX/share/d4r-splice (where
#                    the installed program finds them), bash completion
#   make completion  build/d4r-splice.bash, from the option tables
#   make corpus      regenerate corpus/enc4 from its descriptor (needs nvcc)
#   DEVELOPER=1      -Werror and extra warnings

CC        ?= cc
CUDA_HOME ?= $(if $(wildcard /usr/local/cuda/include/cuda.h),/usr/local/cuda,/usr)
PREFIX    ?= /usr/local
SHAREDIR   = $(PREFIX)/share/d4r-splice
COMPDIR    = $(PREFIX)/share/bash-completion/completions
BUILD     ?= build
VERSION   := 0.1.0

OPT       ?= -O2
CFLAGS    ?= $(OPT) -g
WARN      := -Wall -Wextra -Wshadow -Wno-unused-parameter -Wno-missing-field-initializers
ifeq ($(DEVELOPER),1)
WARN      += -Werror -Wstrict-prototypes -Wmissing-prototypes -Wpointer-arith -Wvla -Wformat=2
endif
ALL_CFLAGS = -std=c11 -D_GNU_SOURCE $(WARN) $(CFLAGS) $(SANITIZE) \
             -Isrc -I$(CUDA_HOME)/include -DD4R_VERSION='"$(VERSION)"' \
             -DD4R_CUDA_HOME='"$(CUDA_HOME)"' -MMD -MP
LIBS      := -lpcre2-8 -lcjson -lzstd -llz4 -lpng -ldl -lm -lpthread
TEST_LIBS := -lcmocka

# The injection library's own files (the tap inside PROGRAM, and the only
# file that includes cupti.h) and the library files it carries, built
# position-independent into $(BUILD)/libd4r-capture.so.
CAPTURE_TAP := src/capture/tap.c src/capture/inject.c
CAPTURE_LIB := src/capture/nvinfo.c src/bin/fatbin.c src/bin/objfile.c src/base/base.c \
               src/base/strbuf.c src/base/err.c
CUPTI_INC   ?= $(firstword $(wildcard $(CUDA_HOME)/extras/CUPTI/include \
                 $(CUDA_HOME)/targets/x86_64-linux/include) $(CUDA_HOME)/include)
LIB_SRC   := $(filter-out $(CAPTURE_TAP),$(sort $(wildcard src/base/*.c src/ptx/*.c \
                               src/ana/*.c src/splice/*.c src/gpu/*.c src/bin/*.c \
                               src/cmd/*.c src/capture/*.c src/replay/*.c src/sample/*.c)))
LIB_OBJ   := $(LIB_SRC:%.c=$(BUILD)/obj/%.o)
MAIN_OBJ  := $(BUILD)/obj/src/main.o
UNIT_SRC  := $(sort $(wildcard tests/unit/test_*.c))
UNIT_BIN  := $(UNIT_SRC:tests/unit/%.c=$(BUILD)/tests/%)
FUZZ_SRC  := $(sort $(wildcard tests/fuzz/fuzz_*.c))

.PHONY: all check check-unit check-cli check-golden check-corpus check-gpu bench \
        asan ubsan fuzz format install uninstall clean corpus deps mutate completion

all: $(BUILD)/d4r-splice $(BUILD)/libd4r-capture.so

$(BUILD)/obj/%.o: %.c
	@mkdir -p $(dir $@)
	$(CC) $(ALL_CFLAGS) -c $< -o $@

$(BUILD)/libd4r.a: $(LIB_OBJ)
	@rm -f $@
	ar rcs $@ $^

$(BUILD)/d4r-splice: $(MAIN_OBJ) $(BUILD)/libd4r.a
	$(CC) $(ALL_CFLAGS) -o $@ $(MAIN_OBJ) -Wl,--whole-archive $(BUILD)/libd4r.a \
	    -Wl,--no-whole-archive $(LIBS)

# The injection library `capture` hands PROGRAM (src/capture/capture.h):
# position-independent objects, everything but its entry points hidden.
CAPTURE_PIC := $(patsubst %.c,$(BUILD)/pic/%.o,$(CAPTURE_TAP) $(CAPTURE_LIB))

$(BUILD)/pic/%.o: %.c
	@mkdir -p $(dir $@)
	$(CC) $(ALL_CFLAGS) -fPIC -fvisibility=hidden -I$(CUPTI_INC) -c $< -o $@

$(BUILD)/libd4r-capture.so: $(CAPTURE_PIC)
	$(CC) $(ALL_CFLAGS) -shared -o $@ $(CAPTURE_PIC) -Wl,--no-undefined -lzstd -llz4 \
	    -ldl -lpthread

$(BUILD)/tests/%: tests/unit/%.c $(BUILD)/libd4r.a
	@mkdir -p $(dir $@)
	$(CC) $(ALL_CFLAGS) -Itests -o $@ $< $(BUILD)/libd4r.a $(TEST_LIBS) $(LIBS)

deps:
	@scripts/bootstrap --check

# Every test that needs no GPU.  The corpus tests read the CUDA toolkit's
# libraries (CUDA_HOME/lib64); they are part of check.
check: all $(UNIT_BIN)
	@scripts/run-tests $(BUILD)

check-unit: all $(UNIT_BIN)
	@scripts/run-tests $(BUILD) unit

check-cli: all
	@scripts/run-tests $(BUILD) cli

check-corpus: all
	@scripts/run-tests $(BUILD) corpus

check-gpu: all
	@scripts/run-tests $(BUILD) gpu

bench: all
	@scripts/bench $(BUILD)

asan:
	$(MAKE) BUILD=build-asan OPT=-O1 SANITIZE="-fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=undefined" check

ubsan:
	$(MAKE) BUILD=build-ubsan OPT=-O1 SANITIZE="-fsanitize=undefined -fno-sanitize-recover=undefined" check-unit check-cli

fuzz:
	@scripts/fuzz $(FUZZ_SECONDS)

# MUTATE="NAME..." runs those mutations only; MUTATE=--all-suites runs unit
# and cli for each.
mutate:
	@scripts/mutate $(MUTATE)

format:
	clang-format -i $$(find src tests -name '*.[ch]')

corpus: all
	scripts/gen-enc4

# The bash completion, generated from the program's option tables.
$(BUILD)/d4r-splice.bash: $(BUILD)/d4r-splice scripts/gen-completion
	scripts/gen-completion $(BUILD)/d4r-splice >$@.tmp && mv $@.tmp $@

completion: $(BUILD)/d4r-splice.bash

# The data folders replace what an earlier install put there, so a recipe
# removed from the repository is not found installed.
install: all $(BUILD)/d4r-splice.bash
	install -d $(DESTDIR)$(PREFIX)/bin $(DESTDIR)$(PREFIX)/share/man/man1 \
	    $(DESTDIR)$(SHAREDIR) $(DESTDIR)$(COMPDIR)
	install -m 755 $(BUILD)/d4r-splice $(DESTDIR)$(PREFIX)/bin/d4r-splice
	install -d $(DESTDIR)$(PREFIX)/lib/d4r-splice
	install -m 755 $(BUILD)/libd4r-capture.so $(DESTDIR)$(PREFIX)/lib/d4r-splice/libd4r-capture.so
	install -m 644 man/d4r-splice.1 $(DESTDIR)$(PREFIX)/share/man/man1/d4r-splice.1
	install -m 644 $(BUILD)/d4r-splice.bash $(DESTDIR)$(COMPDIR)/d4r-splice
	for d in recipes ptx corpus; do \
	    rm -rf $(DESTDIR)$(SHAREDIR)/$$d && cp -R $$d $(DESTDIR)$(SHAREDIR)/$$d && \
	    chmod -R u+w,a+rX $(DESTDIR)$(SHAREDIR)/$$d || exit 1; \
	done

uninstall:
	rm -rf $(DESTDIR)$(PREFIX)/lib/d4r-splice
	rm -f $(DESTDIR)$(PREFIX)/bin/d4r-splice $(DESTDIR)$(PREFIX)/share/man/man1/d4r-splice.1 \
	    $(DESTDIR)$(COMPDIR)/d4r-splice
	rm -rf $(DESTDIR)$(SHAREDIR)

clean:
	rm -rf build build-asan build-ubsan build-fuzz

-include $(LIB_OBJ:.o=.d) $(MAIN_OBJ:.o=.d) $(CAPTURE_PIC:.o=.d)
