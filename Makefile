# cachebook: `make run` and `make test` are all a reader needs.
# Everything else is listed by `make help`.

BUILD   ?= build
PRESET  ?= default
CH      ?=
JOBS    ?= $(shell nproc 2>/dev/null || echo 2)
CHAPTERS = $(sort $(notdir $(wildcard chapters/[0-9][0-9]_*)))
PY      := /usr/bin/python3

.PHONY: all deps configure build run test golden book grade handout bench clean help

all: build

help:
	@echo "make run            build, run every chapter against its golden file, print a summary"
	@echo "make run CH=01      build and run chapter 01 with its real (measured) output"
	@echo "make test           build and run the whole test suite (ctest)"
	@echo "make book           build the HTML book into $(BUILD)/book/html"
	@echo "make golden         regenerate every chapters/*/expected.txt (review the diff!)"
	@echo "make grade CH=01    grade the chapter's exercise starter and print the score"
	@echo "make handout CH=01  copy the chapter's exercises without the solution to $(BUILD)/handout"
	@echo "make bench          run the benchmarks (simulator throughput, ...) with --json output"
	@echo "make deps           install the Debian packages the book needs"

deps:
	@bash tools/deps.sh

configure:
	@$(MAKE) --no-print-directory deps
	@test -f $(BUILD)/CMakeCache.txt || cmake --preset $(PRESET) $(if $(shell command -v ninja),-G Ninja,)

build: configure
	cmake --build $(BUILD) -j $(JOBS)

run: build
ifeq ($(CH),)
	@bash tools/golden.sh summary $(BUILD)/bin $(CHAPTERS)
else
	@$(BUILD)/bin/ch$(notdir $(wildcard chapters/$(CH)_*))
endif

test: build
	cd $(BUILD) && ctest --output-on-failure -j $(JOBS)

golden: build
	@bash tools/golden.sh update $(BUILD)/bin $(CHAPTERS)

book: build
	@bash tools/deps.sh --book
	$(PY) book/build.py --build $(BUILD)

grade: build
ifeq ($(CH),)
	@echo "usage: make grade CH=NN" >&2; exit 2
else
	@bash tools/grade.sh $(BUILD) $(CH) starter
endif

handout:
ifeq ($(CH),)
	@echo "usage: make handout CH=NN" >&2; exit 2
else
	@bash tools/handout.sh $(CH) $(BUILD)/handout
endif

bench: build
	@mkdir -p $(BUILD)/bench
	$(BUILD)/bin/bench_cache --json $(BUILD)/bench/cache.json

clean:
	rm -rf $(BUILD)
