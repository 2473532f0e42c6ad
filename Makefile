# recon: build, demo, test. Every install step lives here or in .ci/.
GO      ?= go
TAGS    ?= duckdb_arrow
BIN     ?= bin/recon
PKGS    ?= ./...
TESTFLAGS ?= -count=1 -timeout 20m
export CGO_ENABLED := 1

.PHONY: build demo test bench update-golden fmt vet

build:
	$(GO) build -tags $(TAGS) -o $(BIN) ./cmd/recon

demo: build
	./$(BIN) demo

test: vet
	$(GO) test -tags $(TAGS) $(TESTFLAGS) $(PKGS)

update-golden:
	$(GO) test -tags $(TAGS) -count=1 ./transform/ ./rules/ -run Golden -update

fmt:
	gofmt -w .

vet:
	@test -z "$$(gofmt -l .)" || { gofmt -l .; echo "gofmt needed: run make fmt"; exit 1; }
	$(GO) vet -tags $(TAGS) $(PKGS)
