package rules_test

import (
	"testing"

	"recon/extract/raw"
	"recon/rules"
)

const sweepHeader = "payment_id,payment_state,created_at,executed_at,modified_at,labels,sender_address,receiver_address,quote_amount,quote_currency,source_file\n"

// TestSweepBreakResolvesWhenLabelRemoved: payment_stale's label sweep finds
// a payment whatever its date; the break keeps its id over runs of other
// windows, is left alone by a run whose sweep failed (the rule is held), and
// is resolved by the first run whose sweep no longer finds the label, though
// its day is outside that run's window. A pending sweep item is cleared the
// same way.
func TestSweepBreakResolvesWhenLabelRemoved(t *testing.T) {
	db := newDB(t)
	var stale []rules.Rule
	for _, r := range builtin(t) {
		if r.ID == "payment_stale" {
			stale = append(stale, r)
		}
	}
	sweep := func(rows string) {
		t.Helper()
		exec(t, db, `DELETE FROM payment_label_sweep`)
		fixture(t, db, map[string]string{"payment_label_sweep": sweepHeader + rows})
	}
	const old = "p-old,FAILED,2026-08-10T09:00:00Z,2026-08-10T09:03:00Z,2026-08-12T10:00:00Z,[OUTBOUND_TRANSFER_FAILED_IRRECOVERABLY],acme_usd@rn.us.ny.acme,solpagos_mxn@rn.mx.cdmx.solpagos,700.00,USD,payment_labels/x.json\n"
	const fresh = "p-fresh,EXECUTED,2026-09-20T09:00:00Z,2026-10-01T23:00:00Z,2026-10-01T23:05:00Z,[OUTBOUND_TRANSFER_FAILED_RECOVERABLY],acme_usd@rn.us.ny.acme,solpagos_mxn@rn.mx.cdmx.solpagos,100.00,USD,payment_labels/y.json\n"
	one := func(d int) raw.Window { return raw.Window{From: day(d), To: day(d)} }
	count := func(q string) (n int) {
		t.Helper()
		if err := db.QueryRow(q).Scan(&n); err != nil {
			t.Fatal(err)
		}
		return n
	}
	const key = "payment_stale p-old"

	sweep(old + fresh)
	apply(t, db, stale, rules.Run{ID: "r1", Window: one(0), AsOf: day(1)})
	if b := breaksByKey(t, db)[key]; b.Status != "new" || b.ID != stableID("payment_stale", "p-old") || b.Severity != "P1" {
		t.Fatalf("run 1: %+v", b)
	}
	if n := count(`SELECT count(*) FROM pending_items WHERE break_key = 'p-fresh' AND sweep`); n != 1 {
		t.Fatalf("run 1: %d sweep pending items for p-fresh, want 1", n)
	}

	sweep(old) // p-fresh's label was removed: its pending item goes, though its day is not this window's
	apply(t, db, stale, rules.Run{ID: "r2", Window: one(3), AsOf: day(4)})
	if b := breaksByKey(t, db)[key]; b.Status != "persisting" || b.LastSeen != "r2" {
		t.Fatalf("run 2, still labelled: %+v", b)
	}
	if n := count(`SELECT count(*) FROM pending_items`); n != 0 {
		t.Fatalf("run 2: %d pending items, want none", n)
	}

	sweep("") // the sweep failed: what is loaded cannot be trusted, the rule is held
	res := apply(t, db, stale, rules.Run{ID: "r3", Window: one(5), AsOf: day(6),
		Gaps: []rules.Gap{{Table: "payment_label_sweep", Window: one(5)}}})
	if len(res.Held) != 1 {
		t.Fatalf("run 3 holds %+v, want payment_stale", res.Held)
	}
	if b := breaksByKey(t, db)[key]; b.Status != "persisting" || b.LastSeen != "r2" || b.Resolved != "" {
		t.Fatalf("run 3, sweep failed: %+v", b)
	}

	apply(t, db, stale, rules.Run{ID: "r4", Window: one(7), AsOf: day(8)}) // the label was removed
	if b := breaksByKey(t, db)[key]; b.Status != "resolved" || b.Resolved != "r4" {
		t.Fatalf("run 4, label removed: %+v", b)
	}
}
