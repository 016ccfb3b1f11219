GO ?= go

.PHONY: build test lint bench fuzz chaos

build:
	$(GO) build -o bin/grub ./cmd/grub

test: lint
	$(GO) test -race -count=1 ./...

lint:
	$(GO) vet ./...
	@out=$$(gofmt -l $$(git ls-files '*.go' 2>/dev/null || find . -name '*.go')); \
	if [ -n "$$out" ]; then echo "gofmt needs to run on:"; echo "$$out"; exit 1; fi

bench:
	$(GO) test -run '^$$' -bench . -benchmem ./...

# Kill grub at every failpoint of a turn and with kill -9 at CHAOS_N random
# moments, resuming it after each kill, and check that every turn has one
# progress-log entry and one commit; then CHAOS_CONCURRENT resumes of one
# task at once (one runs, the others exit 75). Prints the counts. make test
# runs a short version (internal/chaos's defaults).
CHAOS_N ?= 50
CHAOS_CONCURRENT ?= 20

chaos:
	$(GO) test -c -o bin/chaos.test ./internal/chaos
	./bin/chaos.test -test.run '^(TestFailpoints|TestChaos)$$' -test.count=1 \
		-chaos.n=$(CHAOS_N) -chaos.concurrent=$(CHAOS_CONCURRENT) -chaos.features=3 -chaos.at=1,2,3,4

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
	./agent/backend:FuzzParseCodexEvents \
	./internal/gitx:FuzzParseTurn

fuzz:
	@for t in $(FUZZ_TARGETS); do \
		pkg=$${t%%:*}; name=$${t##*:}; \
		echo "fuzz $$pkg $$name"; \
		$(GO) test -run '^$$' -fuzz "^$$name$$" -fuzztime $(FUZZTIME) $$pkg || exit 1; \
	done
