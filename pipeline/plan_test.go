package pipeline_test

import (
	"testing"

	"recon/extract/raw"
	"recon/pipeline"
)

// TestPlanRun: a 200-day range plans three report chunks per type and makes
// no request.
func TestPlanRun(t *testing.T) {
	e := newEnv(t, 1)
	w, _ := raw.NewWindow(day0, day0.AddDate(0, 0, 199))
	p, err := pipeline.PlanRun(e.cfg, w)
	if err != nil {
		t.Fatal(err)
	}
	if n := total(e.sb.Requests()); n != 0 {
		t.Errorf("planning made %d requests", n)
	}
	count := map[string]int{}
	for _, c := range p.Calls {
		count[c.What]++
	}
	want := map[string]int{"token": 1, raw.ReportPaymentOps: 3, raw.ReportRecon: 3, raw.ReportFailureConversion: 3,
		"statement": len(e.sb.Accounts())}
	for k, v := range want {
		if count[k] != v {
			t.Errorf("%d calls for %s, want %d (plan %+v)", count[k], k, v, p.Calls)
		}
	}
	if p.Calls[1].Window != (raw.Window{From: day0, To: day0.AddDate(0, 0, 89)}) {
		t.Errorf("first chunk %s, want 90 days", p.Calls[1].Window)
	}
	if p.Statements.From != w.From || len(p.Rules) == 0 {
		t.Errorf("statements %s, rules %v", p.Statements, p.Rules)
	}
}
