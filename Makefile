# recon: build, demo, test. Every install step lives here or in .ci/.
GO      ?= go
TAGS    ?= duckdb_arrow
BIN     ?= bin/recon
PKGS    ?= ./...
TESTFLAGS ?= -count=1 -timeout 20m
VERSITYGW_VERSION ?= v1.8.0
SHOT    ?= summary.png
BENCH_SIZES ?= 100000,1000000
BENCH_JSON  ?= docs/performance.json
BENCH_HISTORY_RUNS     ?= 30
BENCH_HISTORY_PAYMENTS ?= 10000
export CGO_ENABLED := 1

.PHONY: build demo test bench bench-go update-golden fmt vet screenshot

build:
	$(GO) build -tags $(TAGS) -o $(BIN) ./cmd/recon

demo: build
	./$(BIN) demo

# Every test, with a versitygw S3 server on loopback (installed into bin/ on first use).
test: vet
	GO=$(GO) TAGS=$(TAGS) VERSITYGW_VERSION=$(VERSITYGW_VERSION) scripts/s3-integration.sh $(TESTFLAGS) $(PKGS)

# Speed and memory, never part of make test: recon bench generates a sandbox day of each
# size and measures native read_csv, recon's ingest, the rules and recon run end to end, as
# child processes; then the history phase (nightly runs, archive growth).
# BENCH_SIZES=100000 BENCH_HISTORY_RUNS=0 for a quick look (about two minutes).
bench: build
	./$(BIN) bench --sizes "$(BENCH_SIZES)" --history-runs $(BENCH_HISTORY_RUNS) \
		--history-payments $(BENCH_HISTORY_PAYMENTS) --json $(BENCH_JSON)

# The Go benchmarks of the parse and load hot paths (testing.B, -benchmem), on 10k payments.
bench-go:
	$(GO) test -tags $(TAGS) -count=1 -run '^$$' -bench 'Parse$$|Load$$' -benchmem ./transform/

# summary.html of a few sandbox runs, rendered by headless chromium (installed with apt-get if missing).
screenshot: build
	scripts/screenshot.sh $(BIN) $(SHOT)

update-golden:
	$(GO) test -tags $(TAGS) -count=1 ./transform/ ./rules/ -run Golden -update

fmt:
	gofmt -w .

vet:
	@test -z "$$(gofmt -l .)" || { gofmt -l .; echo "gofmt needed: run make fmt"; exit 1; }
	$(GO) vet -tags $(TAGS) $(PKGS)
