package pipeline_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"recon/extract/raw"
	"recon/extract/sandbox"
	"recon/output"
)

// TestWalletHolds runs three times over one database (same seed and clock):
//
//  1. every source answers: the wallet breaks are found, and summary.json
//     lists the limits the rules cannot apply (an unknown type, two
//     initiator matchers);
//  2. no wallet service is configured: the wallet rules are held, which
//     keeps their breaks open and untouched, and the run stays complete;
//  3. the wallet service is configured and its limits route is down: the
//     wallet rules are held again, and the run is incomplete, naming the
//     wallets not pulled.
func TestWalletHolds(t *testing.T) {
	w, _ := raw.NewWindow(day0, day0.AddDate(0, 0, 6))
	first := newEnv(t, 7)
	unconfigured := newEnv(t, 7)
	down := newEnv(t, 7, sandbox.Faults{Down: []string{"GET " + sandbox.WalletPrefix + "/v2/vaults/{vault}/wallets/{wallet}/policy-rules/limits"}})
	unconfigured.cfg.Extract.WalletURL, unconfigured.cfg.Extract.Wallets = "", nil
	for _, e := range []*env{unconfigured, down} {
		e.cfg.DB, e.cfg.ArchiveURL, e.cfg.WorkDir, e.cfg.Now = first.cfg.DB, first.cfg.ArchiveURL, first.cfg.WorkDir, first.cfg.Now
	}
	wallet := func(m map[string]heldRow) map[string]heldRow {
		out := map[string]heldRow{}
		for id, b := range m {
			if strings.HasPrefix(b.Rule, "wallet_") {
				out[id] = b
			}
		}
		return out
	}

	res := first.run(t, w)
	if res.Verdict != output.Complete {
		t.Fatalf("run 1: verdict %s: %v", res.Verdict, res.Reasons)
	}
	before := wallet(breakRows(t, first.cfg.DB))
	if len(before) < 20 {
		t.Fatalf("run 1 found %d wallet breaks", len(before))
	}
	summary := summaryOf(t, first.cfg.ArchiveURL, res.RunID)
	var issues []string
	for _, i := range summary.WalletLimitIssues {
		issues = append(issues, i.Wallet+" "+i.Limit+": "+i.Issue)
	}
	for _, want := range []string{"v-treasury/w-ops lim-week: unknown limit type PER_WEEK",
		"v-custody/w-reserve lim-two-initiators: invalid configuration: 2 initiator matchers"} {
		if !slices.ContainsFunc(issues, func(s string) bool { return strings.HasPrefix(s, want) }) {
			t.Errorf("summary.json wallet_limit_issues %q lacks %q", issues, want)
		}
	}

	for _, run := range []struct {
		e        *env
		complete bool
	}{{unconfigured, true}, {down, false}} {
		res := run.e.run(t, w)
		if got := res.Verdict == output.Complete; got != run.complete {
			t.Errorf("verdict %s, reasons %q; want complete %v", res.Verdict, res.Reasons, run.complete)
		}
		if !run.complete && (!slices.ContainsFunc(res.Reasons, func(r string) bool {
			return strings.HasPrefix(r, "wallet 2026-10-01..2026-10-07 not pulled") && strings.Contains(r, "limits")
		}) || !slices.ContainsFunc(res.Reasons, func(r string) bool { return strings.HasPrefix(r, "rule wallet_limit_breach held for ") })) {
			t.Errorf("reasons %q: want the wallet not pulled and its rules held", res.Reasons)
		}
		after := wallet(breakRows(t, first.cfg.DB))
		if len(after) != len(before) {
			t.Fatalf("%d wallet breaks after, %d before", len(after), len(before))
		}
		for id, b := range after {
			if b != before[id] {
				t.Errorf("held wallet break changed from %+v to %+v", before[id], b)
			}
		}
	}
}

// summaryOf reads summary.json of a run in a local archive.
func summaryOf(t *testing.T, archive, runID string) output.Summary {
	t.Helper()
	matches, _ := filepath.Glob(filepath.Join(archive, "run_date=*", "run_id="+runID, "summary.json"))
	if len(matches) != 1 {
		t.Fatalf("summary.json of %s: %v", runID, matches)
	}
	b, err := os.ReadFile(matches[0])
	if err != nil {
		t.Fatal(err)
	}
	var s output.Summary
	if err := json.Unmarshal(b, &s); err != nil {
		t.Fatal(err)
	}
	return s
}
