package transform_test

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"recon/extract/raw"
	"recon/transform"
)

// TestUnreadableFileKeepsItsSlice: a raw file that cannot be parsed at all
// (a CSV header the table does not know, a JSON report or page cut short, a
// statement page or balances snapshot that is not JSON) does not fail the
// load: its slice keeps the rows an earlier load gave, Stats.Unreadable names
// the file and its slice, and every other slice loads. A file missing from
// the disk is not the file's fault: it still fails the load.
func TestUnreadableFileKeepsItsSlice(t *testing.T) {
	src := "../testdata/load/sources"
	files, err := raw.ReadIndex(src)
	if err != nil {
		t.Fatal(err)
	}
	db := newDB(t)
	load(t, db, src)
	counts := func() map[string]int {
		t.Helper()
		out := map[string]int{}
		for _, tb := range tables {
			out[tb.name] = count(t, db, "SELECT count(*) FROM "+tb.name)
		}
		return out
	}
	before := counts()

	// extract is the sources' folder with the file path's body replaced.
	extract := func(path, format, body string) []rawFile {
		var out []rawFile
		for _, f := range files {
			b := readTestdata(t, "sources/"+f.Path)
			if f.Path == path {
				b = []byte(body)
				if format != "" {
					f.Format = format
				}
			}
			out = append(out, rawFile{f, b})
		}
		return out
	}
	page := string(readTestdata(t, "sources/statements/acme_usd@rn.us.ny.acme/2026-10-01_2026-10-01_p0001.json"))
	header := strings.SplitAfter(string(readTestdata(t, "sources/reports/recon.csv")), "\n")[0]
	for _, c := range []struct {
		name, path, format, body string
		slice                    int // files in the slice left as it was
		maxRows, maxMiB          int // what a builder quarantines before its file is unreadable (0: as built)
	}{
		{"CSV report without a header the table knows", "reports/recon.csv", "", "\xff\xfe garbage\n1,2,3\n", 1, 0, 0},
		{"JSON report cut short", "reports/recon.csv", raw.FormatJSON, `[{"network_payment_id": "x"}, {"network_`, 1, 0, 0},
		{"payments page that is an HTML error", "payments/2026-10-01_2026-10-01_p0001.json", "", "<html>502 Bad Gateway</html>", 2, 0, 0},
		{"statement page cut short", "statements/acme_usd@rn.us.ny.acme/2026-10-01_2026-10-01_p0001.json", "", page[:len(page)/2], 2, 0, 0},
		{"balances snapshot that is not JSON", "balances/balances.json", "", "{", 1, 0, 0},
		{"transfers page that is not a page", "transfers/p0000.json", "", `"content"`, 1, 0, 0},
		{"liquidations page whose results are not a list", "liquidations/7d0f4c1e-2b1a-4c55-9e0e-1f1b2a3c4d02.json", "", `{"results": 5}`, 2, 0, 0},
		{"CSV report with more rows rejected than a builder keeps", "reports/recon.csv", "", header + strings.Repeat("x,y\n", 4), 1, 3, 64},
		{"payments page with more payments rejected than a builder keeps", "payments/2026-10-01_2026-10-01_p0001.json", "",
			`{"first": false, "last": true, "number": 1, "numberOfElements": 4, "size": 2, "totalElements": 6, "totalPages": 2,
			"content": [{"payment_state": "COMPLETED"}, {"payment_state": "COMPLETED"}, {"payment_state": "COMPLETED"}, {"payment_state": "COMPLETED"}]}`, 2, 3, 64},
		{"payments page whose payments rejected weigh more than a builder keeps", "payments/2026-10-01_2026-10-01_p0001.json", "",
			`{"first": false, "last": true, "number": 1, "numberOfElements": 5, "size": 2, "totalElements": 7, "totalPages": 2,
			"content": [` + strings.Repeat(`{"internal_id": "`+strings.Repeat("x", 300_000)+`"}, `, 4) + `{"internal_id": "x"}]}`, 2, 100, 1},
	} {
		t.Run(c.name, func(t *testing.T) {
			if c.maxRows > 0 {
				transform.SetMaxRejected(t, c.maxRows, c.maxMiB)
			}
			dir := writeExtract(t, extract(c.path, c.format, c.body)...)
			st := load(t, db, dir)
			if len(st.Unreadable) != 1 || st.Unreadable[0].File != c.path || len(st.Unreadable[0].Slice) != c.slice ||
				st.Unreadable[0].Reason == "" {
				t.Fatalf("unreadable %+v, want %s in a slice of %d", st.Unreadable, c.path, c.slice)
			}
			if want := fmt.Sprintf("more than %d rows or %d MiB rejected", c.maxRows, c.maxMiB); c.maxRows > 0 && !strings.Contains(st.Unreadable[0].Reason, want) {
				t.Errorf("reason %q, want %q", st.Unreadable[0].Reason, want)
			}
			for _, f := range st.Files {
				if f.File.Path == c.path {
					t.Errorf("%s counted as loaded: %+v", c.path, f)
				}
			}
			if diff := cmp.Diff(before, counts()); diff != "" {
				t.Errorf("rows per table (-before +after):\n%s", diff)
			}
		})
	}

	// As many rows rejected as a builder keeps: the file loads, those rows quarantined.
	t.Run("CSV report with as many rows rejected as a builder keeps", func(t *testing.T) {
		transform.SetMaxRejected(t, 3, 64)
		st := load(t, db, writeExtract(t, extract("reports/recon.csv", "", header+strings.Repeat("x,y\n", 3))...))
		if len(st.Unreadable) != 0 {
			t.Fatalf("unreadable %+v, want none", st.Unreadable)
		}
		if n := count(t, db, "SELECT count(*) FROM quarantine WHERE source_file = 'reports/recon.csv'"); n != 3 {
			t.Errorf("%d rows of reports/recon.csv quarantined, want 3", n)
		}
	})

	dir := writeExtract(t, extract("", "", "")...)
	if err := os.Remove(filepath.Join(dir, "reports/recon.csv")); err != nil {
		t.Fatal(err)
	}
	_, err = transform.NewLoader(db, dir, "r-test", nil).Load(t.Context(), files)
	if err == nil || errors.Is(err, transform.ErrUnreadable) {
		t.Errorf("load with a file missing from the disk: %v, want an error that is not ErrUnreadable", err)
	}
}
