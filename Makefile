GO ?= go

.PHONY: build test lint bench fuzz

build:
	$(GO) build -o bin/grub ./cmd/grub

test: lint
	$(GO) test -race -count=1 ./...

lint:
	$(GO) vet ./...
	@out=$$(gofmt -l $$(git ls-files '*.go' 2>/dev/null || find . -name '*.go')); \
	if [ -n "$$out" ]; then echo "gofmt needs to run on:"; echo "$$out"; exit 1; fi

# The Go benchmarks, then bench/all.sh: grub against jq and a shell loop,
# ratios side by side (README's performance section).
bench:
	$(GO) test -run '^$$' -bench 'ShellHugeOutput|StatusJSON' -benchtime 5x -benchmem ./agent/tools ./internal/cli
	sh bench/all.sh

# Fuzz every parser of outside input for FUZZTIME each (make test runs the
# seed corpora of these targets as ordinary tests).
FUZZTIME ?= 30s
FUZZ_TARGETS = \
	./loopstate:FuzzParse \
	./featurelist:FuzzParse \
	./featurelist:FuzzCheckTurnBytes \
	./harness:FuzzDecodeState \
	./harness:FuzzReadControl \
	./agent/backend:FuzzParseUsageLines \
	./agent/backend:FuzzParseClaudeResult \
	./agent/backend:FuzzParseClaudeStream \
	./agent/backend:FuzzParseCodexEvents \
	./internal/gitx:FuzzParseTurn

fuzz:
	@for t in $(FUZZ_TARGETS); do \
		pkg=$${t%%:*}; name=$${t##*:}; \
		echo "fuzz $$pkg $$name"; \
		$(GO) test -run '^$$' -fuzz "^$$name$$" -fuzztime $(FUZZTIME) $$pkg || exit 1; \
	done
