package sandbox_test

import (
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"recon/extract"
	"recon/extract/raw"
	"recon/extract/sandbox"
)

// TestServe serves a sandbox whose downloads come from a second host, and
// extracts a report through the configuration Served gives: the client
// reaches every service (through wrap) and the download host with the
// sandbox's credentials; Env names the same addresses; Close stops both.
func TestServe(t *testing.T) {
	now := day0.AddDate(0, 0, 5)
	var wrapped atomic.Int64
	srv, err := sandbox.Serve(sandbox.Config{Seed: 7, Start: day0, Days: 2, Now: func() time.Time { return now },
		Faults: sandbox.Faults{DownloadHost: true}}, "127.0.0.1:0", func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { wrapped.Add(1); next.ServeHTTP(w, r) })
	})
	if err != nil {
		t.Fatal(err)
	}
	if srv.FilesURL == "" || srv.FilesURL == srv.URL {
		t.Fatalf("download host %q, services %q: want two listeners", srv.FilesURL, srv.URL)
	}
	want := [][2]string{
		{"RECON_AUTH_URL", srv.URL}, {"RECON_REPORTING_URL", srv.URL}, {"RECON_SERVER_URL", srv.URL + "/v4"},
		{"RECON_LIQUIDATION_URL", srv.URL}, {"RECON_CLIENT_ID", sandbox.ClientID}, {"RECON_CLIENT_SECRET", sandbox.ClientSecret},
		{"RECON_AUDIENCE", sandbox.Audience}, {"RECON_ACCOUNTS", strings.Join(srv.Sandbox.Accounts(), ",")},
		{"RECON_WALLET_URL", srv.URL + sandbox.WalletPrefix}, {"RECON_WALLETS", strings.Join(srv.Sandbox.Wallets(), ",")},
	}
	if diff := cmp.Diff(want, srv.Env()); diff != "" {
		t.Errorf("Env (-want +got):\n%s", diff)
	}
	cfg := srv.ExtractConfig(extract.Config{PollInterval: time.Millisecond, Now: func() time.Time { return now }})
	if cfg.PollInterval != time.Millisecond || cfg.ServerURL != srv.URL+"/v4" || cfg.ClientSecret.Reveal() != sandbox.ClientSecret {
		t.Errorf("ExtractConfig: %+v", cfg)
	}
	c, err := extract.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	res, err := c.Extract(t.Context(), extract.Request{Reports: window(t, "2026-10-01", "2026-10-01"),
		ReportTypes: []string{raw.ReportPaymentOps}}, t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Incomplete) != 0 || srv.Sandbox.Requests()["GET /files/{name}"] == 0 || wrapped.Load() == 0 {
		t.Errorf("incomplete %q, requests %v, %d through wrap", res.Incomplete, srv.Sandbox.Requests(), wrapped.Load())
	}
	if err := srv.Close(); err != nil {
		t.Fatal(err)
	}
	for _, u := range []string{srv.URL, srv.FilesURL} {
		if resp, err := http.Get(u + "/files/x"); err == nil {
			resp.Body.Close()
			t.Errorf("%s still serves after Close", u)
		}
	}
}
