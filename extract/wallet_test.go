package extract_test

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"recon/extract"
	"recon/extract/raw"
	"recon/extract/sandbox"
	"recon/extract/sandbox/sandboxtest"
)

// walletNet serves a sandbox of 3 days (with faults) and returns a client
// pointed at it by ExtractConfig, wallet included; mod may change the client's config.
func walletNet(t *testing.T, scfg sandbox.Config, mod func(*extract.Config)) (*sandbox.Served, *extract.Client) {
	t.Helper()
	scfg.Seed, scfg.Start, scfg.Days, scfg.PaymentsPerDay = 7, day0, 3, 5
	scfg.Now = func() time.Time { return now0 }
	srv := sandboxtest.Serve(t, scfg)
	ecfg := srv.ExtractConfig(extract.Config{Retry: extract.RetryPolicy{MaxAttempts: 6}, PollInterval: time.Millisecond,
		Now: func() time.Time { return now0 }})
	if mod != nil {
		mod(&ecfg)
	}
	c, err := extract.New(ecfg)
	if err != nil {
		t.Fatal(err)
	}
	return srv, c
}

// walletOnly asks for the wallet of w (and one report type: a request needs reports).
func walletOnly(w raw.Window) extract.Request {
	return extract.Request{Reports: w, ReportTypes: []string{raw.ReportPaymentOps}, Wallet: w}
}

func walletFiles(res *extract.Result) []raw.File {
	var out []raw.File
	for _, f := range res.Files {
		if f.Source == raw.SourceWallet {
			out = append(out, f)
		}
	}
	return out
}

// TestExtractWallet pulls every wallet through moderate faults: per wallet
// its record, three balances snapshots, its transaction pages and its
// limits, each written with its provenance and hash.
func TestExtractWallet(t *testing.T) {
	faults := sandbox.ModerateFaults()
	faults.RateLimit, faults.ServerErrors = 0.2, 0.2
	srv, c := walletNet(t, sandbox.Config{Faults: faults}, nil)
	w := window(t, "2026-10-01", "2026-10-03")
	dir := t.TempDir()
	res, err := c.Extract(context.Background(), walletOnly(w), dir)
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Incomplete) > 0 {
		t.Fatalf("incomplete: %v", res.Incomplete)
	}
	byWallet := map[string][]string{}
	for _, f := range walletFiles(res) {
		if f.Status != raw.StatusReady || f.Window != w || !strings.HasPrefix(f.Request, "GET "+srv.URL+sandbox.WalletPrefix+"/v2/vaults/") {
			t.Errorf("file %+v", f)
		}
		b, err := os.ReadFile(filepath.Join(dir, f.Path))
		if err != nil {
			t.Fatal(err)
		}
		if sum := sha256.Sum256(b); hex.EncodeToString(sum[:]) != f.SHA256 || int64(len(b)) != f.Size {
			t.Errorf("%s: hash or size differ from the index", f.Path)
		}
		byWallet[f.Account] = append(byWallet[f.Account], filepath.Base(f.Path))
	}
	for _, vw := range srv.Sandbox.Wallets() {
		got := byWallet[vw]
		want := []string{"balances_20261001T000000000Z.json", "balances_20261002T000000000Z.json", "balances_20261003T000000000Z.json",
			"balances_20261004T000000000Z.json", "balances_now.json",
			"limits.json", "transactions_2026-10-01_2026-10-03_p0000.json", "wallet.json"}
		slices.Sort(got)
		if !slices.Equal(got, want) {
			t.Errorf("%s: files %v, want %v", vw, got, want)
		}
	}
	injected := 0
	for p, n := range srv.Sandbox.Requests() {
		if strings.Contains(p, sandbox.WalletPrefix) {
			injected += srv.Sandbox.InjectedOn(p)
			_ = n
		}
	}
	if injected == 0 {
		t.Error("no fault was injected on the wallet routes")
	}
	idx, err := raw.ReadIndex(dir)
	if err != nil || len(walletFiles(&extract.Result{Files: idx})) != len(walletFiles(res)) {
		t.Errorf("index.json lacks the wallet files (%v)", err)
	}
}

// TestExtractWalletNotPulled: a wallet route that is down makes each wallet
// a FAILED file naming it and a reason; the files it had written are gone.
func TestExtractWalletNotPulled(t *testing.T) {
	down := sandbox.Faults{Down: []string{"GET " + sandbox.WalletPrefix + "/v2/vaults/{vault}/wallets/{wallet}/policy-rules/limits"}}
	srv, c := walletNet(t, sandbox.Config{Faults: down}, func(c *extract.Config) { c.Retry = extract.RetryPolicy{MaxAttempts: 1} })
	w := window(t, "2026-10-01", "2026-10-03")
	dir := t.TempDir()
	res, err := c.Extract(context.Background(), walletOnly(w), dir)
	if err != nil {
		t.Fatal(err)
	}
	files := walletFiles(res)
	if len(files) != len(srv.Sandbox.Wallets()) {
		t.Fatalf("wallet files %+v, want one FAILED per wallet", files)
	}
	var accounts []string
	for _, f := range files {
		if f.Status != raw.StatusFailed || f.Path != "" {
			t.Errorf("file %+v, want FAILED", f)
		}
		accounts = append(accounts, f.Account)
	}
	if want := slices.Sorted(slices.Values(srv.Sandbox.Wallets())); !slices.Equal(accounts, want) {
		t.Errorf("FAILED files name %v, want %v", accounts, want)
	}
	if len(res.Incomplete) != len(files) || !strings.Contains(res.Incomplete[0], "wallet 2026-10-01..2026-10-03 not pulled") ||
		!strings.Contains(res.Incomplete[0], "limits") {
		t.Errorf("reasons %q", res.Incomplete)
	}
	filepath.WalkDir(filepath.Join(dir, "wallets"), func(p string, d os.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			t.Errorf("%s is left behind", p)
		}
		return nil
	})
}

// TestExtractWalletNotConfigured: without a wallet service the wallet is a
// NOT_CONFIGURED file, and the run is not incomplete for it.
func TestExtractWalletNotConfigured(t *testing.T) {
	_, c := walletNet(t, sandbox.Config{}, func(c *extract.Config) { c.WalletURL, c.Wallets = "", nil })
	w := window(t, "2026-10-01", "2026-10-03")
	res, err := c.Extract(context.Background(), walletOnly(w), t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	files := walletFiles(res)
	if len(files) != 1 || files[0].Status != raw.StatusNotConfigured || len(res.Incomplete) != 0 {
		t.Errorf("files %+v, incomplete %q", files, res.Incomplete)
	}
}

// TestWalletAudience: a wallet service that admits only tokens of its own
// audience is pulled with RECON_WALLET_AUDIENCE, and refuses the others' token.
func TestWalletAudience(t *testing.T) {
	const aud = "urn:wallet-test:sandbox"
	w := window(t, "2026-10-01", "2026-10-01")
	srv, c := walletNet(t, sandbox.Config{WalletAudience: aud}, nil)
	res, err := c.Extract(context.Background(), walletOnly(w), t.TempDir())
	if err != nil || len(res.Incomplete) > 0 {
		t.Fatalf("with the wallet audience: %v %q", err, res.Incomplete)
	}
	if n := len(walletFiles(res)); n != 6*len(srv.Sandbox.Wallets()) { // record, 2 midnights, now, transactions, limits
		t.Errorf("%d wallet files", n)
	}
	_, c = walletNet(t, sandbox.Config{WalletAudience: aud}, func(c *extract.Config) { c.WalletAudience = "" })
	res, err = c.Extract(context.Background(), walletOnly(w), t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Incomplete) == 0 || !strings.Contains(res.Incomplete[0], "HTTP 403") {
		t.Errorf("without the wallet audience: reasons %q, want a 403", res.Incomplete)
	}
}

// TestWalletBlockchainOnNonEVM: balances on one chain are refused for the
// XRP wallet with a clear error, and given for an EVM wallet.
func TestWalletBlockchainOnNonEVM(t *testing.T) {
	srv, c := walletNet(t, sandbox.Config{}, nil)
	_, err := c.WalletBalances(context.Background(), "v-custody", "w-xrp", time.Time{}, "ETHEREUM")
	ae, ok := errors.AsType[*extract.APIError](err)
	if !ok || ae.Status != 400 || ae.Code != "BLOCKCHAIN_NOT_SUPPORTED" || !strings.Contains(err.Error(), "EVM wallets only") {
		t.Fatalf("error %v, want a 400 BLOCKCHAIN_NOT_SUPPORTED", err)
	}
	if srv.Sandbox.NonEVMRefusals() != 1 {
		t.Errorf("refusals %d", srv.Sandbox.NonEVMRefusals())
	}
	body, err := c.WalletBalances(context.Background(), "v-treasury", "w-ops", day0.Add(36*time.Hour), "ARBITRUM")
	if err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Balances []struct{ Blockchain, Symbol, Quantity string } `json:"balances"`
	}
	if err := json.Unmarshal(body, &doc); err != nil || len(doc.Balances) == 0 {
		t.Fatalf("%s: %v", body, err)
	}
	for _, b := range doc.Balances {
		if b.Blockchain != "ARBITRUM" {
			t.Errorf("balance %+v on another chain", b)
		}
	}
}

// TestPlanWallet: --dry-run lists each wallet's first call, the others in
// what follows it.
func TestPlanWallet(t *testing.T) {
	srv, c := walletNet(t, sandbox.Config{}, nil)
	calls, err := c.Plan(walletOnly(window(t, "2026-10-01", "2026-10-03")))
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, call := range calls {
		if strings.HasPrefix(call.What, "wallet") {
			n++
			if call.Account == "" || !strings.HasPrefix(call.Request, "GET "+srv.URL+sandbox.WalletPrefix) ||
				!strings.Contains(call.Then, "/transactions?") || !strings.Contains(call.Then, "limits") {
				t.Errorf("call %+v", call)
			}
		}
	}
	if n != len(srv.Sandbox.Wallets()) {
		t.Errorf("%d wallet calls, want 1 per wallet", n)
	}
}

// TestWalletConfig refuses wallets without a service, a service without
// wallets, and entries that are not vault_id/wallet_id.
func TestWalletConfig(t *testing.T) {
	for _, tt := range []struct {
		url     string
		wallets []string
		want    string
	}{
		{"", []string{"v/w"}, "RECON_WALLET_URL is not set"},
		{"http://127.0.0.1:2", nil, "lists no vault_id/wallet_id"},
		{"http://127.0.0.1:2", []string{"vw"}, `RECON_WALLETS: "vw" is not vault_id/wallet_id`},
		{"http://127.0.0.1:2", []string{"v/w/x"}, "is not vault_id/wallet_id"},
		{"http://127.0.0.1:2", []string{"v/w:1", "v/w_1"}, "the same raw folder"},
	} {
		if err := extract.CheckWallets(tt.url, tt.wallets); err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%q %q: error %v, want %q", tt.url, tt.wallets, err, tt.want)
		}
	}
	if err := extract.CheckWallets("http://127.0.0.1:2", []string{"v/w", "v/x"}); err != nil {
		t.Errorf("two good wallets: %v", err)
	}
}
