package pipeline_test

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"testing"
	"time"

	"recon/extract/raw"
	"recon/extract/sandbox"
	"recon/pipeline"
)

// BenchmarkCatalogue runs the pipeline over a 7-day sandbox of growing size
// and reports the time of the rules stage (the whole catalogue) and the
// precision and recall of the breaks against the sandbox's truth:
//
//	go test -tags duckdb_arrow ./pipeline/ -run '^$' -bench Catalogue -benchtime 1x
func BenchmarkCatalogue(b *testing.B) {
	for _, perDay := range []int{1_000, 14_286} { // about 7,000 and 100,000 payments
		b.Run(fmt.Sprintf("payments=%d", perDay*7), func(b *testing.B) {
			for range b.N {
				benchRun(b, perDay)
			}
		})
	}
}

func benchRun(b *testing.B, perDay int) {
	b.StopTimer()
	e := newEnvFor(b, sandbox.Config{Seed: 7, Start: day0, Days: 7, PaymentsPerDay: perDay, PendingPolls: -1,
		Now: func() time.Time { return now }})
	sb := e.sb
	start := time.Now()
	e.cfg.Now = func() time.Time { return now.Add(time.Since(start)) } // stage times are real
	e.cfg.Extract.PollInterval = time.Millisecond
	w, _ := raw.NewWindow(day0, day0.AddDate(0, 0, 6))
	b.StartTimer()
	res, err := pipeline.Run(context.Background(), e.cfg, w)
	b.StopTimer()
	if err != nil {
		b.Fatal(err)
	}
	db := openRO(b, e.cfg.DB)
	var rulesSeconds, loadSeconds float64
	if err := db.QueryRow(`SELECT
			max(epoch(finished_at - started_at)) FILTER (WHERE stage = 'rules'),
			max(epoch(finished_at - started_at)) FILTER (WHERE stage = 'load')
		FROM run_stages WHERE run_id = ?`, res.RunID).Scan(&rulesSeconds, &loadSeconds); err != nil {
		b.Fatal(err)
	}
	// Breaks and truth are multisets: several breaks may share a (rule,
	// payment, account) key (a payment's fee legs, quarantined rows).
	truth := map[key]int{}
	for _, t := range sb.Truth().Breaks {
		truth[key{t.RuleID, t.PaymentID, t.Account}]++
	}
	found := map[key]int{}
	for _, k := range openBreaks(b, e.cfg.DB) {
		found[k]++
	}
	type tally struct{ found, hits, injected int }
	perRule := map[string]*tally{}
	rule := func(id string) *tally {
		if perRule[id] == nil {
			perRule[id] = &tally{}
		}
		return perRule[id]
	}
	hits, nTruth, nFound := 0, 0, 0
	for k, n := range truth {
		rule(k.Rule).injected += n
		nTruth += n
	}
	for k, n := range found {
		h := min(n, truth[k])
		rule(k.Rule).found += n
		rule(k.Rule).hits += h
		hits += h
		nFound += n
	}
	for _, id := range slices.Sorted(maps.Keys(perRule)) {
		t := perRule[id]
		b.Logf("%-32s injected %5d found %5d precision %.4f recall %.4f", id, t.injected, t.found,
			float64(t.hits)/float64(t.found), float64(t.hits)/float64(t.injected))
	}
	b.ReportMetric(rulesSeconds, "rules-s")
	b.ReportMetric(loadSeconds, "load-s")
	b.ReportMetric(float64(hits)/float64(nFound), "precision")
	b.ReportMetric(float64(hits)/float64(nTruth), "recall")
	b.ReportMetric(float64(nTruth), "injected")
}
