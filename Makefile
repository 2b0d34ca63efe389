# cachebook: `make run` and `make test` are all a reader needs.
# Everything else is listed by `make help`.

BUILD   ?= build
PRESET  ?= default
CH      ?=
JOBS    ?= $(shell nproc 2>/dev/null || echo 2)
CHAPTERS = $(sort $(notdir $(wildcard chapters/[0-9][0-9]_*)))
PY      := /usr/bin/python3

.PHONY: flake-ci perf-check all deps configure build run test doctor share check-results golden book book-html book-test serve grade handout grade-all bench flake-check sanitize fuzz clean help quiz practice \
        sanitize-ci fuzz-ci portable-check one-core-check golden-fixtures run-without-cache-sysfs clang-check aarch64-check aarch64-ci \
        format format-check

all: build

help:
	@echo "make run            build, run every chapter against its golden file, print a summary"
	@echo "make run CH=01      build and run chapter 01 with its real (measured) output"
	@echo "make test           build and run the test suite (ctest; the book's tests run in make book)"
	@echo "make perf-check     the performance score's slow-submission test (label perf; CI runs it, make test does not)"
	@echo "make doctor         is this machine fit to measure on? one line per condition, with its fix"
	@echo "make share          every chapter's run on this machine as one bundle in results/ (commit first)"
	@echo "make check-results  what the appendix On other machines shows: each bundle of results/, its chapters"
	@echo "                    valid or stale, each claim held on k of n; fails on a bundle edited by hand"
	@echo "                    (CURRENT=dir: this commit's results, already made)"
	@echo "make book           build the HTML book into $(BUILD)/book/html, then run the book's tests"
	@echo "make book-html      the first half of make book: the site only; make book-test the second, its tests"
	@echo "make golden-fixtures the machine-dependent chapters' golden files under every machine fixture"
	@echo "make run-without-cache-sysfs  make run with /sys/devices/system/cpu/cpu*/cache hidden (root)"
	@echo "make format-check   name the C++ files clang-format 14 would change (exit 1 if any)"
	@echo "make format         rewrite them with clang-format 14 and .clang-format"
	@echo "make clang-check    build with clang++, warnings as errors, and run the deterministic tests"
	@echo "                    (WERROR=ON: warnings are errors in any build; CXX=clang++ picks clang)"
	@echo "make golden         regenerate every chapters/*/expected.txt and 09's expected.quick.txt (review the diff!)"
	@echo "make grade CH=01    grade the chapter's exercise starter (FILE=x.cpp: a submission) and print the score"
	@echo "make handout CH=01  the chapter's exercises for students, $(BUILD)/handout/ch01.tar.gz: builds on"
	@echo "                    its own, \`make grade\` inside it; no solution, no held-back cases"
	@echo "make grade-all CH=01 DIR=subs/  grade every subs/<student>/starter.cpp with the held-back cases:"
	@echo "                    $(BUILD)/grades/ch01.csv and $(BUILD)/grades/ch01/<student>/results.json"
	@echo "                    (grade and grade-all on chapters 05 and 09 also score speed: a model and a measured score)"
	@echo "make quiz CH=02 SEED=word  a quiz on the chapter's cache behaviour in $(BUILD)/quiz/ch02-word/ (quiz.md,"
	@echo "                    answers.md, quiz.xml for Moodle, quiz.json, traces); ROSTER=class.csv: one per id"
	@echo "make practice CH=02 print a fresh quiz with its answers"
	@echo "make bench          run the benchmarks (simulator throughput, ...) with --json output, beside the"
	@echo "                    build's and the chapters' wall and CPU times ($(BUILD)/bench/times.json)"
	@echo "make flake-check    run the timing tests 20 times (RUNS=n) and count each test's verdicts"
	@echo "                    (passed: holds; failed: fails; skipped: inconclusive, with the reason)"
	@echo "make flake-ci       the same, one round (FLAKE_CI_RUNS=n): make test's measured phase on its own"
	@echo "make sanitize       deterministic tests under ASan+UBSan, threaded ones under TSan"
	@echo "make fuzz           build the libFuzzer targets with clang and run each FUZZ_SECONDS (60)"
	@echo "make sanitize-ci    CI's share of make sanitize: unit tests + bad-argument table (ASan, clang), threads (TSan)"
	@echo "make fuzz-ci        build the libFuzzer targets and run ctest -L fuzz (60 s each)"
	@echo "make portable-check plain x86-64 without AVX2 kernels or OpenBLAS, no valgrind/perf on PATH: ctest"
	@echo "make one-core-check the unit tests pinned to one CPU (taskset -c 0): multi-core tests skip"
	@echo "make aarch64-check  cross-compile for 64-bit ARM Linux into build-aarch64, run the unit tests and"
	@echo "                    the golden files under qemu-aarch64 (the timing tests skip and say why)"
	@echo "make aarch64-ci     CI's share of it: unit tests (no timing) and three chapters' golden files"
	@echo "make deps           install the Debian packages the book needs (the aarch64 targets install"
	@echo "                    their own set: bash tools/dev/deps.sh --aarch64, which adds Debian's arm64)"

deps:
	@bash tools/dev/deps.sh
	@bash tools/dev/deps.sh --fuzz

# The chapters and the tests need only the base packages; clang and its tools (make deps,
# --fuzz) are for the sanitizer, fuzz and format targets, which install them themselves.
configure:
	@bash tools/dev/deps.sh
	@test -f $(BUILD)/CMakeCache.txt || cmake --preset $(PRESET) $(if $(shell command -v ninja),-G Ninja,) \
	  $(if $(WERROR),-DCACHEBOOK_WARNINGS_AS_ERRORS=$(WERROR),)

build: configure
	cmake --build $(BUILD) -j $(JOBS)

# make run builds only the chapter programs (and what they link and run); the tests, the
# graders and the fuzz targets are built by the targets that run them. The machine's profile is
# measured once (profile.hpp): the first chapter that prices a claim writes it to
# $(BUILD)/profile/, the others read it; a chapter run alone takes a short probe of its own.
RUN_CHAPTERS = $(if $(CH),$(notdir $(wildcard chapters/$(CH)_*)),$(CHAPTERS))
run: configure
	@if [ -n "$(CH)" ] && [ -z "$(RUN_CHAPTERS)" ]; then echo "make run: no chapter $(CH) (CH takes two digits: $(patsubst %,%,$(foreach c,$(CHAPTERS),$(firstword $(subst _, ,$(c))))))" >&2; exit 2; fi
	cmake --build $(BUILD) -j $(JOBS) --target $(addprefix ch,$(RUN_CHAPTERS))
ifeq ($(CH),)
	@rm -rf $(BUILD)/profile
	@CACHEBOOK_PROFILE_DIR=$(abspath $(BUILD))/profile bash tools/dev/golden.sh summary $(BUILD)/bin $(CHAPTERS)
else
	@$(BUILD)/bin/ch$(RUN_CHAPTERS)
endif

# The measured tests run alone, after the rest, once each: every measured claim is decided by
# the book's rule (common/include/cachebook/claim.hpp), with a control that measures this
# machine's noise in the same run; a machine too busy to tell makes the test skip with that
# reason, never pass. That phase is a flake check of TIMING_RUNS runs (1): the table of each
# test's verdicts, the output of any failed run, exit 1 on any fails. `make flake-check` counts
# verdicts over twenty runs.
TIMING_RUNS ?= 1
test: build
	cd $(BUILD) && ctest --output-on-failure -j $(JOBS) -LE 'timing|book|perf'
	@bash tools/dev/flake_check.sh $(BUILD) $(TIMING_RUNS) 1

# The performance score's slow-submission test (label perf): it builds two handout kits and
# times a slow submission beside the reference, alone, for three to four minutes; .ci/run runs
# it after make test, which leaves it out.
perf-check: build
	cd $(BUILD) && ctest --output-on-failure -L perf

# Is this machine fit to measure on? One line per condition, what it does to the chapters'
# measurements and the command that fixes it (exit 0 whatever it finds).
doctor: configure
	@cmake --build $(BUILD) -j $(JOBS) --target doctor >/dev/null
	@$(BUILD)/bin/doctor

# One sealed bundle of every chapter's run on this machine, in results/ or SHARE_OUT (commit
# first: a bundle names its commit); make check-results holds every bundle there against this
# commit and reports what the appendix On other machines shows.
share: configure
	cmake --build $(BUILD) -j $(JOBS) --target doctor $(addprefix ch,$(CHAPTERS))
	$(PY) tools/reader/share.py --build $(BUILD) $(if $(SHARE_OUT),--out $(SHARE_OUT),)

# CURRENT: this commit's chapter results, if already made (the book build's generated directory);
# otherwise every chapter runs once.
check-results: configure
	@if [ -n "$(CURRENT)" ]; then $(PY) tools/reader/check_results.py --current $(CURRENT); else \
	  cmake --build $(BUILD) -j $(JOBS) --target $(addprefix ch,$(CHAPTERS)) >/dev/null && \
	  $(PY) tools/reader/check_results.py --bin $(BUILD)/bin; fi

golden: build
	@bash tools/dev/golden.sh update $(BUILD)/bin $(CHAPTERS) 09_matmul.quick

# The book's own tests (its pipeline, the typed-number rule, the built site in Chromium) need
# the book's packages, which tools/dev/deps.sh --book installs: they run here, not in make test.
# make book-html and make book-test are its two halves: CI builds the site alone (it may run a
# chapter or time cachesim) and runs the book's tests, which time nothing, beside other work.
book: book-html
	@$(MAKE) --no-print-directory book-test

book-html: build
	@bash tools/dev/deps.sh --book
	$(PY) book/build.py --build $(BUILD) $(BOOK_FLAGS)

book-test:
	cd $(BUILD) && ctest --output-on-failure -j $(JOBS) -L book

# The built book over http on this machine only (search then shows excerpts; from disk it cannot).
PORT ?= 8000
serve:
	@test -f $(BUILD)/book/html/index.html || { echo "no book in $(BUILD)/book/html: run make book first"; exit 1; }
	@echo "The book is at http://127.0.0.1:$(PORT)/book/index.html (Ctrl-C stops the server)"
	$(PY) -m http.server $(PORT) --bind 127.0.0.1 --directory $(BUILD)/book/html

# The chapters whose output uses machine facts, under every fixture of tests/fixtures/machine
# (make test runs the quick ones under every fixture, chapters 8 and 9 under one).
MACHINE_CHAPTERS = 01_row_major 02_loop_orders 03_six_orders 04_tiling 05_layout 06_false_sharing 08_cliff 09_matmul
golden-fixtures: build
	@for f in tests/fixtures/machine/*/; do echo "fixture $$f"; \
	  CACHEBOOK_MACHINE=$(CURDIR)/$$f bash tools/dev/golden.sh summary $(BUILD)/bin $(MACHINE_CHAPTERS) || exit 1; done

# The machine as many VMs and containers show it: no cache directories in sysfs (needs root).
# SYSFS_CHAPTERS: the chapters compared (default all). CI runs make run itself under
# without_cache_sysfs.sh, which compares every chapter and keeps the runs for its book build.
SYSFS_CHAPTERS ?= $(CHAPTERS)
run-without-cache-sysfs: build
	@bash tools/dev/without_cache_sysfs.sh bash tools/dev/golden.sh summary $(BUILD)/bin $(SYSFS_CHAPTERS)

# clang, warnings as errors, cheaply: the chapter programs and the unit tests built, the
# deterministic unit tests run and the two quickest chapters checked against their golden
# files; everything else (measured tests, exercises, the other chapters) is g++'s in make test.
clang-check:
	@$(MAKE) --no-print-directory deps
	@test -f build-clang/CMakeCache.txt || CXX=clang++ cmake --preset dev -B build-clang \
	  $(if $(shell command -v ninja),-G Ninja,) >/dev/null
	cmake --build build-clang -j $(JOBS) --target unit_tests $(addprefix ch,$(CHAPTERS))
	build-clang/bin/unit_tests "~[timing]~[threads]~[valgrind]"
	bash tools/dev/golden.sh check build-clang/bin 01_row_major 02_loop_orders

grade: build
ifeq ($(CH),)
	@echo "usage: make grade CH=NN" >&2; exit 2
else
	@bash tools/teaching/grade.sh $(BUILD) $(CH) $(or $(FILE),starter)
endif

handout:
ifeq ($(CH),)
	@echo "usage: make handout CH=NN" >&2; exit 2
else
	@bash tools/teaching/handout.sh $(CH) $(BUILD)/handout
endif

# TIMEOUT: seconds each submission's grader may run (60).
grade-all:
	@if [ -z "$(CH)" ] || [ -z "$(DIR)" ]; then echo "usage: make grade-all CH=NN DIR=submissions/" >&2; exit 2; fi
	@$(PY) tools/teaching/grade_all.py $(CH) $(DIR) --build $(BUILD) --timeout $(or $(TIMEOUT),60)

# Quizzes: every simulated answer is cachesim's, so only the simulator is built.
quiz practice: configure
	@if [ -z "$(CH)" ] || { [ $@ = quiz ] && [ -z "$(SEED)$(ROSTER)" ]; }; then \
	  echo "usage: make quiz CH=NN SEED=word, make quiz CH=NN ROSTER=file.csv, or make practice CH=NN" >&2; exit 2; fi
	@cmake --build $(BUILD) --target cachesim >/dev/null
	@$(PY) tools/teaching/quiz.py $(CH) --build $(BUILD) $(if $(filter practice,$@),--practice,$(if $(ROSTER),--roster '$(ROSTER)',--seed '$(SEED)'))

# Beside the ratios, bench/times.json: the build's and every chapter's wall and CPU time on this
# run (tools/dev/bench_times.py), so that a slow day shows as a slow day. The chapters' runs are
# kept (tools/dev/chapter_runs.py): chapter 9's is the one scored against the targets, and make
# book shows them all.
bench: configure
	@mkdir -p $(BUILD)/bench
	@rm -f $(BUILD)/bench/times.json
	$(PY) tools/dev/bench_times.py build $(BUILD) $(JOBS) $(BUILD)/bench/times.json all bench_cache bench_ch09
	$(PY) tools/dev/bench_times.py chapters $(BUILD) $(BUILD)/bench/times.json $(CHAPTERS)
	$(BUILD)/bin/bench_cache --json $(BUILD)/bench/cache.json
	$(BUILD)/bin/bench_cachesim --json $(BUILD)/bench/cachesim.json
	cp $(BUILD)/runs/09_matmul/results.json $(BUILD)/bench/ch09_matmul.json
	$(PY) tools/dev/ch09_goals.py $(BUILD)/bench/ch09_matmul.json $(BUILD)/bench/ch09_goals.json  # step 6 against OpenBLAS: the targets
	$(BUILD)/bin/bench_ch09 --json $(BUILD)/bench/ch09_kernels.json  # the same, kernel against kernel: 15 alternating runs, CPU time
	bash tools/dev/bench_ch08.sh $(BUILD)/bin 10 $(BUILD)/bench/ch08
	@$(PY) tools/dev/bench_times.py print $(BUILD)/bench/times.json

# TESTS=REGEX: only the measured tests whose names match (ctest -R).
flake-check: build
	@FLAKE_TESTS='$(TESTS)' bash tools/dev/flake_check.sh $(BUILD) $(or $(RUNS),20) $(or $(ATTEMPTS),1)

# CI's short schedule of it: one round of single attempts, the round make test's measured phase
# runs, so that CI counts the verdicts without running the measured tests twice (make test in CI
# is this); fails on any "fails" verdict (a skip is an inconclusive verdict, with its reason).
# FLAKE_CI_RUNS: more rounds where CI has the time.
flake-ci: build
	@bash tools/dev/flake_check.sh $(BUILD) $(or $(FLAKE_CI_RUNS),1) 1

# The deterministic tests under AddressSanitizer + UBSan; the threaded chapters under ThreadSanitizer.
# (The asan preset, g++, turns off -Wmaybe-uninitialized, which ASan's instrumentation sets off
# inside <regex>; preset asan-clang, CI's, needs no such exception.)
sanitize:
	@$(MAKE) --no-print-directory deps
	cmake --preset asan $(if $(shell command -v ninja),-G Ninja,) >/dev/null
	cmake --build build-asan -j $(JOBS)
	cd build-asan && ctest --output-on-failure -j $(JOBS) -LE 'timing|book|valgrind'
	cmake --preset tsan $(if $(shell command -v ninja),-G Ninja,) >/dev/null
	cmake --build build-tsan -j $(JOBS)
	cd build-tsan && ctest --output-on-failure -j $(JOBS) -L threads

# CI's part of `make sanitize`, only what fits CI's time (the presets build at -O1 -g1).
# ASan + UBSan, built with clang (preset asan-clang), so that this one build is also CI's clang
# build (make clang-check is the same without the sanitizers): every program, and every test
# but the measured ones, the book's, the exercise graders, valgrind's, the golden files, the
# scripts (label pattern, flake_check: no instrumented code runs in them, and make test has run
# them) and the BLIS case (BLIS, loaded with dlopen, is not instrumented, and LeakSanitizer stops
# with a fatal error on its threads at exit); so the bad-argument table runs every program under ASan. Then
# chapters 1 and 2 against their golden files, as clang builds them.
# TSan: the [threads] cases (chapters 6 and 9, cachesim's reader thread), chapter 6's program,
# and chapter 9's program on small matrices (no OpenBLAS: its threads are not instrumented).
sanitize-ci:
	@$(MAKE) --no-print-directory deps
	cmake --preset asan-clang $(if $(shell command -v ninja),-G Ninja,) >/dev/null
	cmake --build build-asan-clang -j $(JOBS) --target unit_tests fuzz_lackey_replay cachesim bench_cachesim bench_cache bench_ch09 doctor \
	  $(addprefix ch,$(CHAPTERS))
	cd build-asan-clang && ctest --output-on-failure -j $(JOBS) -LE 'timing|book|golden|exercise|valgrind|pattern' \
	  -E '^threads\.ch0|^BLIS, where installed|^flake_check\.'
	bash tools/dev/golden.sh check build-asan-clang/bin 01_row_major 02_loop_orders
	cmake --preset tsan $(if $(shell command -v ninja),-G Ninja,) >/dev/null
	cmake --build build-tsan -j $(JOBS) --target threads_tests ch06_false_sharing ch09_matmul
	build-tsan/bin/threads_tests "[threads]~[timing]"
	build-tsan/bin/ch06_false_sharing --quick >/dev/null
	build-tsan/bin/ch09_matmul --quick --n 96 --no-blas >/dev/null

# libFuzzer targets, built with clang in build-fuzz; FUZZ_SECONDS each (default 60).
fuzz:
	@bash tools/dev/fuzz.sh build-fuzz $(or $(FUZZ_SECONDS),60)

# CI: the fuzz targets as tests (label fuzz, CACHEBOOK_FUZZ_SECONDS each, 60 by default), side by
# side: one core each.
fuzz-ci:
	@bash tools/dev/deps.sh --fuzz
	cmake --preset fuzz $(if $(shell command -v ninja),-G Ninja,) >/dev/null
	cmake --build build-fuzz -j $(JOBS) --target fuzz_cli fuzz_lackey
	cd build-fuzz && ctest -V -j $(JOBS) -L fuzz >fuzz.log 2>&1; rc=$$?; \
	  grep -E '^[0-9]+: (fuzz_|  )|Test +#|tests passed' fuzz.log; exit $$rc

# Portability: plain x86-64 without the AVX2/AVX-512 kernels and without OpenBLAS (preset
# portable), tests run with valgrind and perf absent from PATH; chapters that use them say so.
portable-check:
	@$(MAKE) --no-print-directory deps
	cmake --preset portable $(if $(shell command -v ninja),-G Ninja,) >/dev/null
	cmake --build build-portable -j $(JOBS)
	cd build-portable && PATH=$$(bash ../tools/dev/path_without.sh no-tools valgrind perf) ctest --output-on-failure -j $(JOBS) -LE 'book|timing'
	cd build-portable && PATH=$$(bash ../tools/dev/path_without.sh no-tools valgrind perf) ctest --output-on-failure -L timing

# One CPU: the measured and threaded tests under taskset -c 0; those that need two cores skip
# and say why (the reasons are printed).
one-core-check: build
	cd $(BUILD) && taskset -c 0 ctest -V -L 'timing|threads' >one-core.log 2>&1; rc=$$?; \
	  grep -E 'SKIPPED:|Test +#|tests passed' one-core.log; exit $$rc

# 64-bit ARM Linux, cross-compiled here (preset aarch64: cmake/aarch64-linux-gnu.cmake, warnings
# as errors) and run under qemu-aarch64, user-mode emulation: the unit tests, the [timing] cases
# among them skipping with the reason (an emulator's time is not the CPU's), and the golden
# comparison of the chapters in AARCH64_CHAPTERS (default: all, chapter 9 at --quick: its full
# run at N = 2048 was still in the third of its six sections when ctest's 25-minute limit
# stopped it; AARCH64_CHAPTERS="$(CHAPTERS)" asks for it all the same).
# Built and run: unit_tests and the chapter programs. Left out, to keep the emulated part short
# (all of them run natively in `make test`): the exercise graders, the bad-argument table
# (label cli), cachesim's command line, the short lackey fuzz, the book and valgrind.
AARCH64_CHAPTERS ?= $(filter-out 09_matmul,$(CHAPTERS)) 09_matmul.quick
empty :=
space := $(empty) $(empty)
AARCH64_CONFIGURE = cmake --preset aarch64 $(if $(shell command -v ninja),-G Ninja,) >/dev/null
aarch64-check:
	@bash tools/dev/deps.sh --aarch64
	$(AARCH64_CONFIGURE)
	cmake --build build-aarch64 -j $(JOBS) --target unit_tests $(addprefix ch,$(CHAPTERS))
	file build-aarch64/bin/ch01_row_major
	cd build-aarch64 && ctest --output-on-failure -j $(JOBS) -LE 'book|valgrind|cli|exercise|golden' \
	  -E '^(cachesim|fuzz)\.'
	@case " $(AARCH64_CHAPTERS) " in *" 09_matmul.quick "*) \
	  echo "chapter 9's golden file is compared at --quick (N = 512, expected.quick.txt): at N = 2048"; \
	  echo "  the emulated run outlasts ctest's 25-minute limit; the same code paths run at N = 512,";\
	  echo "  and make test compares both golden files natively";; esac
	cd build-aarch64 && ctest --output-on-failure -L golden -R '^golden\.($(subst .,\.,$(subst $(space),|,$(strip $(AARCH64_CHAPTERS)))))$$'

# CI's share of aarch64-check, sized to add a few minutes to CI: it builds only unit_tests and
# the chapters it checks, runs the unit tests but the [timing] cases (under an emulator those
# can only skip), and compares the golden files of AARCH64_CI_CHAPTERS, deterministic chapters
# that take seconds under qemu. It prints what it leaves out and why.
AARCH64_CI_CHAPTERS = 01_row_major 02_loop_orders 05_layout
aarch64-ci:
	@bash tools/dev/deps.sh --aarch64
	$(AARCH64_CONFIGURE)
	cmake --build build-aarch64 -j $(JOBS) --target unit_tests $(addprefix ch,$(AARCH64_CI_CHAPTERS))
	file build-aarch64/bin/ch01_row_major
	@echo "aarch64-ci leaves out, to keep CI within its time (make aarch64-check runs them):"
	@echo "  the golden files of $(filter-out $(AARCH64_CI_CHAPTERS),$(CHAPTERS)):"
	@echo "    they cost more under qemu than CI's time allows (chapter 3 alone takes about four times the"
	@echo "    CPU of these three together); make test checks all of them natively on every run"
	@echo "  the [timing] cases: they measure the CPU's speed, and under qemu the time is the emulator's"
	@echo "  chapter 6's program as a threads test (not built here; the [threads] unit tests run)"
	@echo "  and what aarch64-check leaves out too: exercise graders, bad-argument table, cachesim's"
	@echo "  command line, lackey fuzz, book, valgrind (all run natively in make test)"
	@echo "  the tests that run no program of this build (label pattern, flake_check.table): Python"
	@echo "    on the sources, the same run make test makes"
	@echo "  chapter 9's 1000 x 1000 exactness shape (CACHEBOOK_SMALL_SHAPES_ONLY=1): minutes of emulated"
	@echo "    arithmetic; the ten other shapes reach every edge of every NEON kernel and of step 6's loops"
	cd build-aarch64 && CACHEBOOK_SMALL_SHAPES_ONLY=1 ctest --output-on-failure -j $(JOBS) \
	  -LE 'book|valgrind|cli|exercise|golden|timing|pattern' -E '^(cachesim|fuzz)\.|^threads\.ch0|^flake_check\.'
	cd build-aarch64 && ctest --output-on-failure -L golden -R '^golden\.($(subst $(space),|,$(AARCH64_CI_CHAPTERS)))$$'

format-check:
	@bash tools/dev/deps.sh --fuzz
	@bash tools/dev/format.sh check

format:
	@bash tools/dev/format.sh fix

clean:
	rm -rf $(BUILD)
