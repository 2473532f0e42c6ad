package transform

import (
	"cmp"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
)

// TestCSVRowsAcrossBatches parses a RECON CSV of more than two batches whose
// text grows from batch to batch (past what the builder reserves from the
// batch before), split among csvWorkers: every row arrives once (batches in
// any order, so they are sorted by line here) with its text, amount and
// line; the rejected rows, one right after a batch boundary and one with bad
// quoting in another chunk, keep their lines and text, in line order, and
// the counts of the workers add up.
func TestCSVRowsAcrossBatches(t *testing.T) {
	path := filepath.Join(t.TempDir(), "recon.csv")
	var sb strings.Builder
	sb.WriteString("end_to_end_id,network_payment_id,transaction_id,quote_ts,sent_amount\n")
	n, bad, quoted := 2*batchRows+100, batchRows+1, batchRows+3*csvChunkRecords+7 // record bad is the first after the first batch
	for i := 1; i <= n; i++ {
		amount := fmt.Sprintf("%d.5", i)
		switch i {
		case bad:
			amount = "1e"
		case quoted:
			amount = `1"2`
		}
		fmt.Fprintf(&sb, "e2e-%s,p-%d,t-%d,2026-10-01T00:00:00Z,%s\n", strings.Repeat("x", i/batchRows*40), i, i, amount)
	}
	if err := os.WriteFile(path, []byte(sb.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	var (
		mu  sync.Mutex
		got []string
	)
	b := newBuilder(&Recon, func(rec arrow.RecordBatch) error {
		defer rec.Release()
		mu.Lock()
		defer mu.Unlock()
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
	if len(got) != n-2 {
		t.Fatalf("%d rows, want %d", len(got), n-2)
	}
	slices.SortFunc(got, func(a, b string) int {
		var la, lb int
		fmt.Sscan(a, &la)
		fmt.Sscan(b, &lb)
		return cmp.Compare(la, lb)
	})
	k := 0
	for i := 1; i <= n; i++ {
		if i == bad || i == quoted {
			continue
		}
		want := fmt.Sprintf("%d e2e-%s %d.500000000000", i+1, strings.Repeat("x", i/batchRows*40), i)
		if got[k] != want {
			t.Fatalf("row %d: %q, want %q", k, got[k], want)
		}
		k++
	}
	if len(b.bad) != 2 || b.bad[0].line != int64(bad+1) || !strings.Contains(b.bad[0].reason, "bad decimal in sent_amount") ||
		!strings.HasSuffix(b.bad[0].raw, ",1e") {
		t.Fatalf("quarantined %+v, want line %d with a bad decimal first", b.bad, bad+1)
	}
	if q := b.bad[1]; q.line != int64(quoted+1) || !strings.HasPrefix(q.reason, "bad quoting") || !strings.HasSuffix(q.raw, `,1"2`) {
		t.Fatalf("quarantined %+v, want line %d with bad quoting second", q, quoted+1)
	}
	if b.loaded["recon.csv"] != int64(n-2) || b.nbad["recon.csv"] != 2 {
		t.Fatalf("counted %d loaded and %d rejected, want %d and 2", b.loaded["recon.csv"], b.nbad["recon.csv"], n-2)
	}
}
