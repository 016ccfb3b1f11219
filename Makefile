GO ?= go

.PHONY: build docs man snapshot release-check test test-browser test-lfs test-mcp lint bench fuzz chaos test-real-agents capture-real-agents

# make build stamps the version (the tag on HEAD, else dev), the commit,
# its date and whether the work tree had changes, as release builds do
# (grub version prints them).
VERSION ?= $(shell git describe --tags --exact-match 2>/dev/null || echo dev)
COMMIT ?= $(shell git rev-parse HEAD 2>/dev/null)
DATE ?= $(shell TZ=UTC git log -1 --format=%cd --date=format-local:%Y-%m-%dT%H:%M:%SZ 2>/dev/null)
MODIFIED ?= $(shell test -n "$$(git status --porcelain 2>/dev/null)" && echo true)
STAMP = -X github.com/grub-dev/grub/internal/cli.Version=$(VERSION) \
	-X github.com/grub-dev/grub/internal/cli.Commit=$(COMMIT) \
	-X github.com/grub-dev/grub/internal/cli.Date=$(DATE) \
	-X github.com/grub-dev/grub/internal/cli.Modified=$(MODIFIED)

build:
	$(GO) build -ldflags "$(STAMP)" -o bin/grub ./cmd/grub

# The command reference, generated from the commands' help: docs/cli/*.md
# (committed; TestCLIDocsUpToDate fails when it is stale) and the man pages
# (man/, not committed; the release archives carry them). MANDIR moves them.
MANDIR ?= man

docs:
	$(GO) run ./internal/cli/gendocs -md docs/cli

man:
	rm -rf $(MANDIR)
	$(GO) run -ldflags "$(STAMP)" ./internal/cli/gendocs -man $(MANDIR)

# Release archives (.goreleaser.yaml): release-check checks the file,
# snapshot builds linux and darwin, amd64 and arm64, into dist/ without
# publishing anything. goreleaser runs through go run at a pinned version.
GORELEASER ?= $(GO) run github.com/goreleaser/goreleaser/v2@v2.15.1

release-check:
	$(GORELEASER) check

snapshot:
	$(GORELEASER) release --snapshot --clean

test: lint
	$(GO) test -race -count=1 ./...

# Render grub report's page in headless Chromium (Debian's package,
# installed when missing; needs root for apt-get). make test runs the same
# test, and skips it with a printed reason where Chromium is absent.
test-browser:
	@command -v chromium >/dev/null 2>&1 || (apt-get update && apt-get install -y chromium)
	GRUB_BROWSER_TEST=1 $(GO) test -count=1 -v -run '^TestReportInBrowser$$' ./internal/report/

# Commit through Git LFS (Debian's git-lfs, installed when missing; needs
# root for apt-get): an LFS-tracked file a turn adds is committed as its
# pointer. make test runs the same test, and skips it with a printed
# reason where git-lfs is absent.
test-lfs:
	@command -v git-lfs >/dev/null 2>&1 || (apt-get update && apt-get install -y git-lfs)
	GRUB_LFS_TEST=1 $(GO) test -race -count=1 -v -run '^TestLFS' ./internal/gitx/

# actionlint checks the CI recipe. It runs through go run at a pinned
# version (from the module cache, else the Go module proxy) rather than as a
# go.mod tool: its dependencies stay out of grub's module graph.
ACTIONLINT ?= $(GO) run github.com/rhysd/actionlint/cmd/actionlint@v1.7.12

lint:
	$(GO) vet ./...
	@out=$$(gofmt -l $$(git ls-files '*.go' 2>/dev/null || find . -name '*.go')); \
	if [ -n "$$out" ]; then echo "gofmt needs to run on:"; echo "$$out"; exit 1; fi
	$(ACTIONLINT) examples/github-actions/grub.yml

# The Go benchmarks, then bench/all.sh: grub against jq and a shell loop,
# ratios side by side (docs/performance.md).
bench:
	$(GO) test -run '^$$' -bench 'ShellHugeOutput|StatusJSON' -benchtime 5x -benchmem ./agent/tools ./internal/cli
	sh bench/all.sh

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
	./prompts:FuzzNeutraliseAndFence \
	./featurelist:FuzzParse \
	./featurelist:FuzzCheckTurnBytes \
	./featurelist:FuzzStrictRead \
	./schemas:FuzzPlainValidList \
	./schemas:FuzzDecodeJSON \
	./harness:FuzzDecodeState \
	./harness:FuzzReadControl \
	./harness:FuzzAcceptedChanges \
	./agent/backend:FuzzParseUsageLines \
	./agent/backend:FuzzParseClaudeResult \
	./agent/backend:FuzzParseClaudeStream \
	./agent/backend:FuzzParseCodexEvents \
	./internal/gitx:FuzzParseTurn \
	./internal/netproxy:FuzzParseAllowlist \
	./internal/netproxy:FuzzParseHost \
	./internal/netproxy:FuzzRequest

fuzz:
	@for t in $(FUZZ_TARGETS); do \
		pkg=$${t%%:*}; name=$${t##*:}; \
		echo "fuzz $$pkg $$name"; \
		$(GO) test -run '^$$' -fuzz "^$$name$$" -fuzztime $(FUZZTIME) $$pkg || exit 1; \
	done

# Run whole tasks with the real Claude Code and Codex CLIs (installed from
# npm into a cache folder by scripts/install-real-agents.sh) against the stub
# model server in internal/agentstub. Not part of `make test`: it needs npm
# once, to install, and takes a minute. Nothing leaves the machine.
REAL_AGENTS_TIMEOUT ?= 15m
test-real-agents:
	@bin=$$(scripts/install-real-agents.sh | tail -n 1) && \
	GRUB_REAL_AGENTS_BIN="$$bin" $(GO) test -tags realagents -count=1 -timeout $(REAL_AGENTS_TIMEOUT) -v -run 'CompletesTask' ./internal/agentstub/

# Check grub mcp with an MCP client nobody here wrote: the official MCP
# Inspector's CLI (@modelcontextprotocol/inspector, pinned in the script),
# installed from npm into a cache folder by scripts/test-mcp.sh on the
# first run. Not part of `make test`: it needs npm once. The agent is
# grub's fake one; nothing else leaves the machine.
test-mcp:
	scripts/test-mcp.sh

# Capture the real programs' output (success, errors, max-turns, stream-json,
# codex events) into agent/backend/testdata/real, the parsers' fixtures.
capture-real-agents:
	@bin=$$(scripts/install-real-agents.sh | tail -n 1) && \
	GRUB_REAL_AGENTS_BIN="$$bin" GRUB_CAPTURE_FIXTURES="$(CURDIR)/agent/backend/testdata/real" \
	$(GO) test -tags realagents -count=1 -timeout $(REAL_AGENTS_TIMEOUT) -v -run 'Capture' ./internal/agentstub/
