package extract

import (
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/google/go-cmp/cmp"

	"recon/extract/raw"
)

// statementBody is a statement page holding entries ids[from:to] of all.
func statementBody(all []string, page, size int, total int) string {
	from, to := min(page*size, len(all)), min((page+1)*size, len(all))
	content := make([]map[string]string, 0)
	for _, id := range all[from:to] {
		content = append(content, map[string]string{"transaction_id": id, "balance_change": "1.00"})
	}
	b, _ := json.Marshal(map[string]any{
		"account_name": "ops", "currency": "USD", "opening_balance": "0", "closing_balance": "5",
		"transactions": map[string]any{
			"content": content, "first": page == 0, "last": to >= len(all), "number": page, "size": size,
			"totalPages": (len(all) + size - 1) / size, "total_elements": total,
		},
	})
	return string(b)
}

func TestStatementPages(t *testing.T) {
	all := []string{"t1", "t2", "t3", "t4", "t5"}
	var calls atomic.Int32
	mux := http.NewServeMux()
	mux.Handle("POST /v2/oauth/token", &tokenServer{})
	mux.HandleFunc("GET /v4/statement/{account}", func(w http.ResponseWriter, r *http.Request) {
		calls.Add(1)
		q := r.URL.Query()
		want := map[string]string{"start-date": "2026-01-01T00:00:00.000Z", "end-date": "2026-02-01T00:00:00.000Z", "size": "2"}
		for k, v := range want {
			if q.Get(k) != v {
				t.Errorf("%s = %q, want %q", k, q.Get(k), v)
			}
		}
		if a := r.PathValue("account"); a != "ops@rn.us.ny" {
			t.Errorf("account = %q", a)
		}
		page, _ := strconv.Atoi(q.Get("page"))
		fmt.Fprint(w, statementBody(all, page, 2, len(all)))
	})
	c := newTestClient(t, mux)
	dir := t.TempDir()
	files, err := saveStatement(t, c, dir, "ops@rn.us.ny")
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, f := range files {
		body, err := os.ReadFile(filepath.Join(dir, f.Path))
		if err != nil {
			t.Fatal(err)
		}
		var p struct {
			Transactions struct {
				Content []struct {
					ID string `json:"transaction_id"`
				} `json:"content"`
			} `json:"transactions"`
		}
		if err := json.Unmarshal(body, &p); err != nil {
			t.Fatal(err)
		}
		for _, e := range p.Transactions.Content {
			got = append(got, e.ID)
		}
	}
	if diff := cmp.Diff(all, got); diff != "" {
		t.Errorf("entries (-want +got):\n%s", diff)
	}
	if n := calls.Load(); n != 3 || len(files) != 3 {
		t.Errorf("%d requests gave %d files, want 3 pages", n, len(files))
	}
}

// saveStatement pages the statement of account over January 2026 by 2 as
// Extract does (savePages), into dir.
func saveStatement(t *testing.T, c *Client, dir, account string) ([]raw.File, error) {
	w := mustWindow(t, "2026-01-01", "2026-01-31")
	return c.savePages(t.Context(), dir, c.statementPager(account, w, 2), func(page int) raw.File {
		return raw.File{Source: raw.SourceStatement, Window: w, Account: account, Page: page, Path: fmt.Sprintf("p%04d.json", page)}
	})
}

func TestStatementPagesChecksEnvelope(t *testing.T) {
	three := []string{"t1", "t2", "t3"}
	tests := []struct {
		name    string
		pages   []string // answer per page number
		wantErr string
	}{
		{"fewer entries than total_elements", []string{statementBody(three, 0, 5, 4)}, "pages hold 3 items so far, the total is 4"},
		{"more entries than total_elements", []string{statementBody(three, 0, 2, 2), statementBody(three, 1, 2, 2)}, "pages hold 3 items so far, the total is 2"},
		{"total changes while paging", []string{statementBody(three, 0, 2, 3), statementBody(three, 1, 2, 4)}, "total changed from 3 to 4 while paging"},
		{"wrong page number", []string{statementBody(three, 1, 5, 3)}, "page number is 1"},
		{"no last flag", []string{`{"transactions":{"content":[],"number":0,"total_elements":0}}`}, "page envelope lacks"},
		{"empty page not last", []string{`{"transactions":{"content":[],"last":false,"number":0,"total_elements":0}}`}, "empty page that is not the last"},
		{"not JSON", []string{`<html>`}, "decode page"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			mux := http.NewServeMux()
			mux.Handle("POST /v2/oauth/token", &tokenServer{})
			mux.HandleFunc("GET /v4/statement/{account}", func(w http.ResponseWriter, r *http.Request) {
				page, _ := strconv.Atoi(r.URL.Query().Get("page"))
				fmt.Fprint(w, tt.pages[min(page, len(tt.pages)-1)])
			})
			c := newTestClient(t, mux)
			files, err := saveStatement(t, c, t.TempDir(), "ops@rn")
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Errorf("error = %v, want one containing %q", err, tt.wantErr)
			}
			if files != nil {
				t.Errorf("gave %d files, want only the error", len(files))
			}
		})
	}
}
