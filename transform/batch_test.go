package transform

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
)

// TestCSVRowsAcrossBatches parses a RECON CSV of more than two batches whose
// text grows from batch to batch (past what the builder reserves from the
// batch before): every row arrives once, in order, with its text, amount and
// line, and a rejected row right after a batch boundary keeps its line.
func TestCSVRowsAcrossBatches(t *testing.T) {
	path := filepath.Join(t.TempDir(), "recon.csv")
	var sb strings.Builder
	sb.WriteString("end_to_end_id,network_payment_id,transaction_id,quote_ts,sent_amount\n")
	n, bad := 2*batchRows+100, batchRows+1 // record bad is the first after the first batch
	for i := 1; i <= n; i++ {
		amount := fmt.Sprintf("%d.5", i)
		if i == bad {
			amount = "1e"
		}
		fmt.Fprintf(&sb, "e2e-%s,p-%d,t-%d,2026-10-01T00:00:00Z,%s\n", strings.Repeat("x", i/batchRows*40), i, i, amount)
	}
	if err := os.WriteFile(path, []byte(sb.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	var got []string
	b := newBuilder(&Recon, func(rec arrow.RecordBatch) error {
		defer rec.Release()
		e2e := rec.Column(Recon.index("end_to_end_id")).(*array.String)
		amt := rec.Column(Recon.index("sent_amount")).(*array.Decimal128)
		line := rec.Column(rec.Schema().NumFields() - 1).(*array.Int64)
		for r := range int(rec.NumRows()) {
			got = append(got, fmt.Sprintf("%d %s %s", line.Value(r), e2e.Value(r), amt.Value(r).ToString(amountScale)))
		}
		return nil
	})
	defer b.release()
	if err := csvRows(path, "recon.csv")(b); err != nil {
		t.Fatal(err)
	}
	if err := b.finish(); err != nil {
		t.Fatal(err)
	}
	if len(got) != n-1 {
		t.Fatalf("%d rows, want %d", len(got), n-1)
	}
	k := 0
	for i := 1; i <= n; i++ {
		if i == bad {
			continue
		}
		want := fmt.Sprintf("%d e2e-%s %d.500000000000", i+1, strings.Repeat("x", i/batchRows*40), i)
		if got[k] != want {
			t.Fatalf("row %d: %q, want %q", k, got[k], want)
		}
		k++
	}
	if len(b.bad) != 1 || b.bad[0].line != int64(bad+1) || !strings.Contains(b.bad[0].reason, "bad decimal in sent_amount") {
		t.Fatalf("quarantined %+v, want line %d with a bad decimal", b.bad, bad+1)
	}
}
