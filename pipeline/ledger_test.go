package pipeline_test

import (
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"recon/output"
	"recon/pipeline"
)

// TestLedger: the typed queries over the run ledger and the breaks of a
// published file agree with what the run reported.
func TestLedger(t *testing.T) {
	e := newEnv(t, 2)
	w := mustWindow(t, 0, 1)
	res := e.run(t, w)
	snap, err := pipeline.OpenPublished(e.cfg.DB)
	if err != nil {
		t.Fatal(err)
	}
	defer snap.Close()
	l, ctx := pipeline.Ledger{DB: snap.DB}, t.Context()

	if open, unhandled, err := l.OpenBreaks(ctx, w); err != nil || open != res.Open || open == 0 || unhandled != res.Unhandled {
		t.Errorf("OpenBreaks = %d, %d, %v; the run counted %d, %d", open, unhandled, err, res.Open, res.Unhandled)
	}
	if has, err := l.Has(ctx, res.RunID); err != nil || !has {
		t.Errorf("Has(%s) = %v, %v", res.RunID, has, err)
	}
	if has, _ := l.Has(ctx, "r-19700101T000000Z"); has {
		t.Error("Has of an unknown run is true")
	}
	if last, err := l.LastComplete(ctx); err != nil || !last.Equal(w.To) {
		t.Errorf("LastComplete = %v, %v, want %v", last, err, w.To)
	}
	if _, ok, err := l.LastSuccess(ctx); err != nil || !ok {
		t.Errorf("LastSuccess: ok %v, %v", ok, err)
	}
	stages, err := l.StageDurations(ctx, res.RunID)
	if err != nil || len(stages) != 6 {
		t.Errorf("StageDurations = %v, %v; want extract, load, rules, report, state, archive", stages, err)
	}
	if ids, err := l.ArchivePending(ctx); err != nil || len(ids) != 0 {
		t.Errorf("ArchivePending = %v, %v", ids, err)
	}

	runs, cols := listed(t)(l.Runs(ctx, 5))
	if len(runs) != 1 || *runs[0][0] != res.RunID || cols[5] != "verdict" || *runs[0][5] != output.Complete {
		t.Errorf("Runs = %v %v", cols, runs)
	}
	var open int64
	for _, c := range mustOpenByRule(t, l) {
		open += c.Open
	}
	all, cols := listed(t)(l.Breaks(ctx, pipeline.BreakFilter{Open: true, All: true}))
	if int64(len(all)) != open || len(cols) != 23 { // with workflow_status, last_reason, last_by
		t.Errorf("Breaks(open, all columns): %d rows, %d columns; %d open by rule", len(all), len(cols), open)
	}
	p2, cols := listed(t)(l.Breaks(ctx, pipeline.BreakFilter{Open: true, Severities: []string{"P2"}, Rules: []string{"ops_missing_in_recon"}}))
	if len(p2) == 0 || len(cols) != 13 {
		t.Fatalf("Breaks(P2 ops_missing_in_recon): %v %v", cols, p2)
	}
	for _, r := range p2 {
		if *r[1] != "ops_missing_in_recon" || *r[2] != "P2" {
			t.Errorf("filtered break %v", r)
		}
	}
}

// listed reads a listing whole: its rows and columns.
func listed(t *testing.T) func(*pipeline.Listing, error) ([][]*string, []string) {
	return func(l *pipeline.Listing, err error) ([][]*string, []string) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
		defer l.Close()
		rows := slices.Collect(l.Rows())
		if err := l.Err(); err != nil {
			t.Fatal(err)
		}
		return rows, l.Cols
	}
}

func mustOpenByRule(t *testing.T, l pipeline.Ledger) []pipeline.OpenCount {
	t.Helper()
	c, err := l.OpenByRule(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// TestLedgerQueriesLiveInOnePlace: outside ledger.go, neither the pipeline
// nor the CLI queries the run ledger or the breaks (the rules and the reports
// do, in their own packages; the bench harness reads its own database).
func TestLedgerQueriesLiveInOnePlace(t *testing.T) {
	sqlOver := regexp.MustCompile(`(?i)\b(FROM|INTO|UPDATE|JOIN)\s+(runs|run_stages|breaks)\b`)
	for _, dir := range []string{".", filepath.Join("..", "cmd", "recon")} {
		files, err := filepath.Glob(filepath.Join(dir, "*.go"))
		if err != nil {
			t.Fatal(err)
		}
		for _, f := range files {
			if strings.HasSuffix(f, "_test.go") || filepath.Base(f) == "ledger.go" || filepath.Base(f) == "bench.go" {
				continue
			}
			b, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			if m := sqlOver.Find(b); m != nil {
				t.Errorf("%s queries %q: put it in pipeline/ledger.go", f, m)
			}
		}
	}
}
