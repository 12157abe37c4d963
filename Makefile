# acp-agent: `make demo` shows an offline coding task and a reload, `make test` runs the checks CI runs.
GO      ?= go
BIN     := bin/acp-agent
VERSION ?= $(shell git describe --tags --always --dirty 2>/dev/null || echo dev)
LDFLAGS := -s -w -X main.version=$(VERSION)

.PHONY: all build demo test vet fmt-check unit golden bench fuzz clean

all: build

build:
	$(GO) build -trimpath -ldflags '$(LDFLAGS)' -o $(BIN) ./cmd/acp-agent

# The main job, offline: a scripted coding task in a fresh Go project (read,
# plan, an approved edit, the test run), then a restart and session/load.
demo: build
	$(GO) run ./cmd/acp-demo -agent $(BIN)

test: vet fmt-check unit

vet:
	$(GO) vet ./...

fmt-check:
	@out=$$(gofmt -l $$(git ls-files '*.go' 2>/dev/null || find . -name '*.go')); \
	if [ -n "$$out" ]; then echo "not gofmt-formatted:"; echo "$$out"; exit 1; fi

unit:
	$(GO) test -race -count=1 -timeout 10m ./...

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
	rm -rf bin
