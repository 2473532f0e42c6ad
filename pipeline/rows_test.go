package pipeline_test

import (
	"bytes"
	"encoding/csv"
	"encoding/json"
	"errors"
	"io"
	"path"
	"testing"

	"recon/output"
)

// fileRows is the manifest's row count of a file as docs/archive.md defines
// it, counted here from the file alone: CSV records after the header (none
// when the CSV cannot be read), elements of a JSON array or of a page's
// content, transactions.content or results; none for other files.
func fileRows(t *testing.T, name string, b []byte) *int64 {
	t.Helper()
	var n int64
	switch path.Ext(name) {
	case ".csv":
		r := csv.NewReader(bytes.NewReader(b))
		r.FieldsPerRecord, r.LazyQuotes = -1, true
		for {
			_, err := r.Read()
			if errors.Is(err, io.EOF) {
				break
			}
			if err != nil {
				return nil
			}
			n++
		}
		n = max(n-1, 0)
	case ".json":
		var list []json.RawMessage
		var page struct {
			Content, Results []json.RawMessage
			Transactions     *struct{ Content []json.RawMessage }
		}
		switch {
		case json.Unmarshal(b, &list) == nil:
			n = int64(len(list))
		case json.Unmarshal(b, &page) != nil:
			return nil
		case page.Content != nil:
			n = int64(len(page.Content))
		case page.Results != nil:
			n = int64(len(page.Results))
		case page.Transactions != nil && page.Transactions.Content != nil:
			n = int64(len(page.Transactions.Content))
		default:
			return nil
		}
	default:
		return nil
	}
	return &n
}

// assertFileRows checks the manifest's row count of every file but the
// Parquet ones (their rows are DuckDB's) against fileRows.
func assertFileRows(t *testing.T, m output.Manifest, read func(string) []byte) {
	t.Helper()
	for _, f := range m.Files {
		if path.Ext(f.Path) == ".parquet" {
			continue
		}
		want := fileRows(t, f.Path, read(f.Path))
		if (want == nil) != (f.Rows == nil) || want != nil && *want != *f.Rows {
			t.Errorf("%s: manifest rows %v, the file holds %v", f.Path, show(f.Rows), show(want))
		}
	}
}

func show(n *int64) any {
	if n == nil {
		return "none"
	}
	return *n
}
