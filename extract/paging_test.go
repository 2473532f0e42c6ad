package extract

import (
	"net/http"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"recon/extract/raw"
)

// TestPagesFetchedAhead: the pages of a list of known length are asked for
// before the one in hand is kept, never past the last page its total gives,
// and they are still kept in order. A list that fails part way stops with
// its page's error.
func TestPagesFetchedAhead(t *testing.T) {
	const size, total = 2, 9 // pages 0..4
	tests := []struct {
		name     string
		fail     int // page answered 400 (-1: none)
		wantKept []int
		wantErr  string
	}{
		{"whole list", -1, []int{0, 1, 2, 3, 4}, ""},
		{"a page refused", 3, []int{0, 1, 2}, "fees page 3"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var (
				mu        sync.Mutex
				asked     []int
				nextAsked = map[int]chan struct{}{}
			)
			asking := func(page int) chan struct{} {
				mu.Lock()
				defer mu.Unlock()
				if nextAsked[page] == nil {
					nextAsked[page] = make(chan struct{})
				}
				return nextAsked[page]
			}
			mux := http.NewServeMux()
			mux.Handle("POST /v2/oauth/token", &tokenServer{})
			mux.HandleFunc("GET /v4/config/fees", func(w http.ResponseWriter, r *http.Request) {
				page, _ := strconv.Atoi(r.URL.Query().Get("page"))
				arrived := asking(page)
				mu.Lock()
				if !slices.Contains(asked, page) {
					close(arrived)
				}
				asked = append(asked, page)
				mu.Unlock()
				if page == tt.fail {
					writeJSON(w, 400, map[string]string{"title": "refused"})
					return
				}
				// Page 1 is answered only once page 2 is asked for: a client
				// that waits for each page before the next never gets it.
				if page == 1 {
					select {
					case <-asking(2):
					case <-time.After(10 * time.Second):
						writeJSON(w, 400, map[string]string{"title": "page 2 was not asked for ahead"})
						return
					}
				}
				var items []map[string]string
				for i := page * size; i < min(total, (page+1)*size); i++ {
					items = append(items, map[string]string{"fee_id": "f" + strconv.Itoa(i)})
				}
				writeJSON(w, 200, map[string]any{"content": items, "last": (page+1)*size >= total, "number": page, "totalElements": total})
			})
			c := newTestClient(t, mux)
			var kept []int
			err := c.fetchPages(t.Context(), c.feePager(size), func(p raw.Page, _ []byte) error {
				kept = append(kept, p.Number)
				return nil
			})
			if (err == nil) != (tt.wantErr == "") || err != nil && !strings.Contains(err.Error(), tt.wantErr) {
				t.Fatalf("error = %v, want %q", err, tt.wantErr)
			}
			if !slices.Equal(kept, tt.wantKept) {
				t.Errorf("pages kept %v, want %v", kept, tt.wantKept)
			}
			mu.Lock()
			defer mu.Unlock()
			if slices.Max(asked) > 4 || len(asked) != len(slices.Compact(slices.Sorted(slices.Values(asked)))) {
				t.Errorf("pages asked for %v: one past the last (4) or one twice", asked)
			}
		})
	}
}
