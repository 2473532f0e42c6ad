package pipeline_test

import (
	"go/build"
	"slices"
	"testing"
)

// TestProductionImports: the pipeline a run uses does not carry the
// simulated network (the benchmark harness that serves it lives in internal/bench).
func TestProductionImports(t *testing.T) {
	ctx := build.Default
	ctx.BuildTags = append(ctx.BuildTags, "duckdb_arrow")
	p, err := ctx.ImportDir(".", 0)
	if err != nil {
		t.Fatal(err)
	}
	if slices.Contains(p.Imports, "recon/extract/sandbox") {
		t.Errorf("pipeline imports recon/extract/sandbox: %q", p.Imports)
	}
}
