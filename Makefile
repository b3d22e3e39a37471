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
# Go 1.26's simd/archsimd (experimental) gives the slotted C_MP its AVX2 min-plus kernel
# (dp/minplus_simd.go, chosen at run time on CPUs with AVX2); a build without the experiment
# uses the generic loop, with the same values: `make test` tests both.
export GOEXPERIMENT := simd

.PHONY: all setup python build test test-pure bench bench-peers demo fmt vet clean

all: build

setup:
	@bash scripts/setup.sh

# The Python side: .venv/ with torch, torchvision and memsched_torch (python/); minutes and
# about 5.5 GB the first time, instant afterwards. Only the tests and the PyTorch tools need it.
python: setup
	@bash scripts/setup.sh python

build: setup
	$(GO) build -tags "$(TAGS)" -o bin/memsched ./cmd/memsched

# The pure-Go packages must build without cgo; then everything is tested with both backends,
# and the CLI once more without them (where each command must do without the MILP backends:
# `go test ./...` on a bare machine failed 8 of its tests until then).
# (pytest first, so that the Go test summary is the last thing printed. The Python tests run from
# the project environment .venv that setup installs, against the bin/memsched just built.)
test: setup python
	CGO_ENABLED=0 $(GO) build $(PURE)
	CGO_ENABLED=0 $(GO) vet $(PURE)
	$(GO) vet -tags "$(TAGS)" ./...
	$(GO) build -tags "$(TAGS)" -o bin/memsched ./cmd/memsched
	@if [ "$${MEMSCHED_NO_VENV:-0}" = 1 ]; then echo "test: MEMSCHED_NO_VENV=1: the Python tests are not run"; \
	else set -x; MEMSCHED_BIN=$(ROOT)/bin/memsched .venv/bin/python -m pytest -q python/tests; fi
	$(GO) test -tags "$(TAGS)" -count=1 ./...
	GOEXPERIMENT= $(GO) test -count=1 -run 'MinPlus|Pruned|Parallel' ./dp/
	GOEXPERIMENT= CGO_ENABLED=0 $(GO) test -count=1 ./internal/cli/

# Tests without any C library (what `go test ./...` does on a bare machine).
test-pure:
	GOEXPERIMENT= CGO_ENABLED=0 $(GO) test -count=1 ./...

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
