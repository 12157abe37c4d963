# acp-agent: `make demo` shows an offline coding task and a reload, `make test` runs the checks CI runs.
GO      ?= go
BIN     := bin/acp-agent
VERSION ?= $(shell git describe --tags --always --dirty 2>/dev/null || echo dev)
COMMIT  ?= $(shell git rev-parse HEAD 2>/dev/null || echo unknown)
DATE    ?= $(shell git log -1 --format=%cI 2>/dev/null || echo unknown)
LDFLAGS := -s -w -X main.version=$(VERSION) -X main.commit=$(COMMIT) -X main.date=$(DATE)

.PHONY: all build demo test vet fmt-check unit cross wine-test release golden bench fuzz clean

all: build

# Static, as releases are: a binary linked against libc pays for the
# dynamic loader at every start (docs/benchmarks.md, issue 31).
build:
	CGO_ENABLED=0 $(GO) build -trimpath -ldflags '$(LDFLAGS)' -o $(BIN) ./cmd/acp-agent

# The main job, offline: a scripted coding task in a fresh Go project (read,
# plan, an approved edit, the test run), then a restart and session/load.
demo: build
	$(GO) run ./cmd/acp-demo -agent $(BIN)

test: vet fmt-check cross unit wine-test

# With the flags cross builds with (no cgo here: no package uses it), so
# that the packages vet compiles are the linux/amd64 build's, from cache.
vet:
	CGO_ENABLED=0 $(GO) vet -trimpath ./...

fmt-check:
	@out=$$(gofmt -l $$(git ls-files '*.go' 2>/dev/null || find . -name '*.go')); \
	if [ -n "$$out" ]; then echo "not gofmt-formatted:"; echo "$$out"; exit 1; fi

# -timeout bounds a package on a loaded machine (cmd/acp-agent took 19 min
# at load 30 on 2 cores); a hang fails sooner, at the test's own wait
# (waitBudget in cmd/acp-agent: 2 minutes).
unit:
	$(GO) test -race -count=1 -timeout 25m ./...

# Every release target builds, so no change breaks another platform
# unnoticed (docs/platforms.md). -trimpath, as releases build: the release
# test then finds these packages compiled. go vet for Windows and macOS
# compiles the test files too (go build skips them): a test that builds
# only on Linux fails here, in seconds, not under Wine or on a Mac.
TARGETS := linux/amd64 linux/arm64 darwin/amd64 darwin/arm64 windows/amd64 windows/arm64
VET_TARGETS := windows/amd64 darwin/arm64
cross:
	@for t in $(TARGETS); do \
	  echo "go build ./... for $$t"; \
	  GOOS=$${t%/*} GOARCH=$${t#*/} CGO_ENABLED=0 $(GO) build -trimpath ./... || exit 1; \
	done
	@for t in $(VET_TARGETS); do \
	  echo "go vet ./... for $$t"; \
	  GOOS=$${t%/*} GOARCH=$${t#*/} CGO_ENABLED=0 $(GO) vet -trimpath ./... || exit 1; \
	done

# The Windows test binaries under Wine, where Wine is set up (.ci/run
# does: source .ci/wine/setup.sh).
wine-test:
	@if [ -n "$$WINE" ]; then .ci/wine/test.sh; \
	else echo "wine-test: skipped (no Wine; source .ci/wine/setup.sh to run it)"; fi

# Release files for VERSION=x.y.z in dist/: six reproducible archives,
# SHA256SUMS, agent.json and icon.svg (docs/releasing.md).
release:
	@case "$(VERSION)" in [0-9]*.[0-9]*.[0-9]*) ;; *) echo "make release VERSION=x.y.z"; exit 2;; esac
	rm -rf dist
	$(GO) run ./cmd/release -version $(VERSION) -out dist

# Rewrite golden files from the current encoders (review the diff!).
golden:
	$(GO) test ./acp -run Golden -update

# Benchmarks whose numbers are recorded in docs/benchmarks.md.
bench: build
	$(GO) test -run '^$$' -bench . -benchmem -count 1 -timeout 30m ./...

fuzz:
	$(GO) test -run '^$$' -fuzz FuzzCheckMessage -fuzztime 60s ./acp
	$(GO) test -run '^$$' -fuzz FuzzParser -fuzztime 60s ./agent/structured

# The session store's kill -9 durability loop at 1000 runs (`make test` runs 200).
.PHONY: stress
stress:
	$(GO) test -race -count=1 -timeout 30m -run TestKill9 ./persistence/ -args -kill9.runs=1000

clean:
	rm -rf bin dist
