package pipeline_test

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestOldWindowComparesTheSnapshotInstant: a run over two days a week before
// its now (the balances snapshot is taken at now) pulls the statement tail up
// to the snapshot, so balance_snapshot_mismatch compares the same instant:
// exactly the sandbox's two drifted accounts break, and the near miss (a
// transfer booked a minute after the snapshot) does not.
func TestOldWindowComparesTheSnapshotInstant(t *testing.T) {
	e := newEnv(t, 7)
	w := mustWindow(t, 0, 1) // 2026-10-01..02; now is 2026-10-08 06:00
	res := e.run(t, w)
	var want []key
	for _, b := range e.sb.Truth().Breaks {
		if b.RuleID == "balance_snapshot_mismatch" {
			want = append(want, key{b.RuleID, b.PaymentID, b.Account})
		}
	}
	if len(want) != 2 {
		t.Fatalf("the sandbox injected %d balance_snapshot_mismatch breaks, want 2", len(want))
	}
	got := keys(t, e.cfg.DB, keysFrom+`breaks WHERE rule_id = 'balance_snapshot_mismatch' AND status <> 'resolved'`)
	if diff := cmp.Diff(sortKeys(want), got); diff != "" {
		t.Errorf("balance_snapshot_mismatch on the old window %s (verdict %s %q) (-truth +got):\n%s", w, res.Verdict, res.Reasons, diff)
	}
	tail := 0
	for _, a := range e.cfg.Accounts {
		if n, _ := count(t, e.cfg.DB, `SELECT count(*), '' FROM statements WHERE account = '`+a+`' AND start_datetime = TIMESTAMPTZ '2026-10-08 00:00:00+00'`); n == 1 {
			tail++
		}
	}
	if tail != len(e.cfg.Accounts) {
		t.Errorf("%d of %d accounts have a statement of the snapshot's day", tail, len(e.cfg.Accounts))
	}
}
