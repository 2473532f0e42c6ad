package webhook_test

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/netip"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/google/uuid"

	"recon/extract"
	"recon/extract/webhook"
)

const testToken = extract.Secret("t0ken-for-tests-0123456789")

// receiver serves a Receiver on loopback until the test ends; it returns
// the delivery URL and the spool path.
func receiver(t testing.TB, cfg webhook.Config, certFile, keyFile string) (url, spool string) {
	t.Helper()
	if cfg.Spool == "" {
		cfg.Spool = filepath.Join(t.TempDir(), "recon-webhook.spool")
	}
	if cfg.Token == nil {
		cfg.Token = testToken
	}
	rc, err := webhook.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- rc.Serve(ctx, ln, certFile, keyFile) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("serve: %v", err)
		}
	})
	scheme := "http"
	if certFile != "" {
		scheme = "https"
	}
	return scheme + "://" + ln.Addr().String() + webhook.PathPrefix + testToken.Reveal(), cfg.Spool
}

func post(t *testing.T, c *http.Client, method, url, body string) int {
	t.Helper()
	req, err := http.NewRequestWithContext(t.Context(), method, url, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	resp, err := c.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	return resp.StatusCode
}

func spoolSize(t *testing.T, path string) int64 {
	t.Helper()
	fi, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	return fi.Size()
}

func TestStatusCodes(t *testing.T) {
	id := uuid.NewString()
	ok := `{"msg_id": "` + id + `"}`
	tests := []struct {
		name   string
		allow  []netip.Prefix
		method string
		path   string // replaces the token path when set
		body   string
		want   int
	}{
		{name: "delivery", body: ok, want: 200},
		{name: "upper-case uuid", body: `{"msg_id": "` + strings.ToUpper(id) + `"}`, want: 200},
		{name: "extra field ignored", body: `{"msg_id": "` + id + `", "type": "x"}`, want: 200},
		{name: "wrong token", path: webhook.PathPrefix + "wrong-token-0123456789", body: ok, want: 404},
		{name: "token prefix", path: webhook.PathPrefix + testToken.Reveal()[:20], body: ok, want: 404},
		{name: "token plus slash", path: webhook.PathPrefix + testToken.Reveal() + "/", body: ok, want: 404},
		{name: "no token", path: "/webhook", body: ok, want: 404},
		{name: "source not allowed", allow: []netip.Prefix{netip.MustParsePrefix("10.0.0.0/8")}, body: ok, want: 403},
		{name: "GET", method: http.MethodGet, want: 405},
		{name: "PUT", method: http.MethodPut, body: ok, want: 405},
		{name: "body over 4 KiB", body: `{"msg_id": "` + id + `", "pad": "` + strings.Repeat("x", webhook.MaxBody) + `"}`, want: 413},
		{name: "body exactly 4 KiB", body: `{"msg_id": "` + id + `", "pad": "` + strings.Repeat("x", webhook.MaxBody-len(ok)-11) + `"}`, want: 200},
		{name: "empty body", body: "", want: 400},
		{name: "not JSON", body: "msg_id=" + id, want: 400},
		{name: "no msg_id", body: `{"id": "` + id + `"}`, want: 400},
		{name: "msg_id not a string", body: `{"msg_id": 12}`, want: 400},
		{name: "msg_id not a uuid", body: `{"msg_id": "PAY-1"}`, want: 400},
		{name: "msg_id uuid without hyphens", body: `{"msg_id": "` + strings.ReplaceAll(id, "-", "") + `"}`, want: 400},
		{name: "msg_id null", body: `{"msg_id": null}`, want: 400},
		{name: "array", body: `["` + id + `"]`, want: 400},
		{name: "two objects", body: ok + ok, want: 400},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			url, spool := receiver(t, webhook.Config{Allow: tt.allow}, "", "")
			if tt.path != "" {
				url = url[:strings.Index(url, webhook.PathPrefix)] + tt.path
			}
			method := tt.method
			if method == "" {
				method = http.MethodPost
			}
			if got := post(t, http.DefaultClient, method, url, tt.body); got != tt.want {
				t.Fatalf("status %d, want %d", got, tt.want)
			}
			size := spoolSize(t, spool)
			if tt.want != 200 && size != 0 {
				t.Fatalf("status %d wrote %d bytes to the spool", tt.want, size)
			}
			if tt.want == 200 {
				r, err := webhook.ReadSpool(spool, 0)
				if err != nil {
					t.Fatal(err)
				}
				if len(r.Entries) != 1 || r.Entries[0].MsgID != id || r.Entries[0].Count != 1 || r.Malformed != 0 {
					t.Fatalf("spool read %+v, want one entry %s", r, id)
				}
			}
		})
	}
}

func TestNewRefusesWeakToken(t *testing.T) {
	for _, tok := range []extract.Secret{"", "short", "has space in the token 0123", "slash/in/the/token/0123"} {
		_, err := webhook.New(webhook.Config{Spool: filepath.Join(t.TempDir(), "s"), Token: tok})
		if err == nil {
			t.Errorf("token %q accepted", tok.Reveal())
		} else if strings.Contains(err.Error(), tok.Reveal()) && tok != "" {
			t.Errorf("error %q shows the token", err)
		}
	}
}

func TestDuplicatesCounted(t *testing.T) {
	url, spool := receiver(t, webhook.Config{}, "", "")
	a, b := uuid.NewString(), uuid.NewString()
	for _, id := range []string{a, b, a, a, strings.ToUpper(b)} {
		if got := post(t, http.DefaultClient, http.MethodPost, url, `{"msg_id":"`+id+`"}`); got != 200 {
			t.Fatalf("status %d", got)
		}
	}
	r, err := webhook.ReadSpool(spool, 0)
	if err != nil {
		t.Fatal(err)
	}
	if len(r.Entries) != 2 || r.Lines != 5 {
		t.Fatalf("read %+v, want 2 entries of 5 lines", r)
	}
	for i, want := range []struct {
		id string
		n  int
	}{{a, 3}, {b, 2}} {
		e := r.Entries[i]
		if e.MsgID != want.id || e.Count != want.n || !e.First.Before(e.Last) {
			t.Errorf("entry %d = %+v, want %s received %d times, first before last", i, e, want.id, want.n)
		}
	}
}

// TestLogLine checks one line per delivery, with msg_id, status, remote and
// duration, and never the token, whatever the status.
func TestLogLine(t *testing.T) {
	var mu sync.Mutex
	var buf strings.Builder
	log := slog.New(slog.NewJSONHandler(writerFunc(func(p []byte) (int, error) {
		mu.Lock()
		defer mu.Unlock()
		return buf.Write(p)
	}), &slog.HandlerOptions{Level: slog.LevelDebug}))
	url, _ := receiver(t, webhook.Config{Logger: log}, "", "")
	id := uuid.NewString()
	post(t, http.DefaultClient, http.MethodPost, url, `{"msg_id":"`+id+`"}`)
	post(t, http.DefaultClient, http.MethodPost, url, `{"msg_id":"x"}`)
	post(t, http.DefaultClient, http.MethodGet, url, "")
	mu.Lock()
	out := buf.String()
	mu.Unlock()
	lines := strings.Split(strings.TrimSpace(out), "\n")
	if len(lines) != 3 {
		t.Fatalf("%d log lines, want 3:\n%s", len(lines), out)
	}
	if strings.Contains(out, testToken.Reveal()) {
		t.Fatalf("the token is in the log:\n%s", out)
	}
	for i, want := range []string{`"msg_id":"` + id + `","status":200,"remote":"127.0.0.1","duration":`, `"status":400`, `"status":405`} {
		if !strings.Contains(lines[i], want) {
			t.Errorf("log line %d = %s, want it to hold %s", i, lines[i], want)
		}
	}
}

type writerFunc func([]byte) (int, error)

func (f writerFunc) Write(p []byte) (int, error) { return f(p) }

// deliverMany posts n distinct ids with n goroutines and returns those that
// got 200.
func deliverMany(c *http.Client, url string, n int) (acked []string, failed int) {
	var mu sync.Mutex
	var wg sync.WaitGroup
	for range n {
		wg.Go(func() {
			id := uuid.NewString()
			resp, err := c.Post(url, "application/json", strings.NewReader(fmt.Sprintf(`{"msg_id":%q}`, id)))
			ok := err == nil && resp.StatusCode == 200
			if err == nil {
				io.Copy(io.Discard, resp.Body)
				resp.Body.Close()
			}
			mu.Lock()
			defer mu.Unlock()
			if ok {
				acked = append(acked, id)
			} else {
				failed++
			}
		})
	}
	wg.Wait()
	return acked, failed
}

// missing returns the acknowledged ids that are not in the spool.
func missing(t *testing.T, spool string, acked []string) []string {
	t.Helper()
	r, err := webhook.ReadSpool(spool, 0)
	if err != nil {
		t.Fatal(err)
	}
	in := map[string]bool{}
	for _, e := range r.Entries {
		in[e.MsgID] = true
	}
	var out []string
	for _, id := range acked {
		if !in[id] {
			out = append(out, id)
		}
	}
	return out
}
