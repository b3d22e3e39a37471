# memsched — build, test and benchmark with the HiGHS and lp_solve backends.
# Every target that needs the C libraries runs scripts/setup.sh first (idempotent, fast when done).

SHELL := /bin/bash
GO ?= go
TAGS := highs lpsolve
ROOT := $(CURDIR)
export PKG_CONFIG_PATH := $(ROOT)/.deps/pkgconfig
export CGO_CFLAGS := -I/usr/include/lpsolve
export CGO_LDFLAGS := -llpsolve55 -lcolamd -ldl -lm
PURE := ./instances/... ./schedule/... ./model/... ./dp/... ./heuristics/... ./verify/... ./lever/...

.PHONY: all setup build test test-pure bench bench-peers demo fmt vet clean

all: build

setup:
	@bash scripts/setup.sh

build: setup
	$(GO) build -tags "$(TAGS)" -o bin/memsched ./cmd/memsched

# The pure-Go packages must build without cgo; then everything is tested with both backends.
# (pytest first, so that the Go test summary is the last thing printed. Where torch is absent its
# module is skipped at collection, which pytest reports with exit status 5: accepted.)
test: setup
	CGO_ENABLED=0 $(GO) build $(PURE)
	CGO_ENABLED=0 $(GO) vet $(PURE)
	$(GO) vet -tags "$(TAGS)" ./...
	python3 -m pytest -q tools || test $$? -eq 5
	$(GO) test -tags "$(TAGS)" -count=1 ./...

# Tests without any C library (what `go test ./...` does on a bare machine).
test-pure:
	CGO_ENABLED=0 $(GO) test -count=1 ./...

bench: setup build
	@mkdir -p out
	set -o pipefail; $(GO) test -tags "$(TAGS)" -run '^$$' -bench . -benchmem -benchtime 3x ./... 2>&1 | tee out/bench.txt
	set -o pipefail; bash scripts/bench-report.sh 2>&1 | tee -a out/bench.txt
	@echo "bench: report written to out/bench.txt"

# memsched's C_MP against rockmate's rotor C solver (fetched from PyPI, its C file built alone);
# minutes, not in CI. Report in out/bench-peers.txt.
bench-peers: build
	@bash scripts/bench-peers.sh

demo: build
	@bash scripts/demo.sh

fmt:
	gofmt -w $$(git ls-files '*.go')

vet:
	$(GO) vet -tags "$(TAGS)" ./...

clean:
	rm -rf bin out
