package extract

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"os"
	"path"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"recon/extract/raw"
)

// CheckWallets checks RECON_WALLETS against RECON_WALLET_URL: both or
// neither, each entry vault_id/wallet_id, no two the same (or with the same
// raw folder).
func CheckWallets(walletURL string, wallets []string) error {
	var errs []error
	switch {
	case walletURL == "" && len(wallets) > 0:
		errs = append(errs, errors.New("RECON_WALLETS lists wallets but RECON_WALLET_URL is not set"))
	case walletURL != "" && len(wallets) == 0:
		errs = append(errs, errors.New("RECON_WALLET_URL is set but RECON_WALLETS lists no vault_id/wallet_id"))
	}
	folders := map[string]string{}
	for _, vw := range wallets {
		v, w, ok := strings.Cut(vw, "/")
		if !ok || v == "" || w == "" || strings.Contains(w, "/") {
			errs = append(errs, fmt.Errorf("RECON_WALLETS: %q is not vault_id/wallet_id", vw))
			continue
		}
		f := walletFolder(v, w)
		if prev, dup := folders[f]; dup {
			errs = append(errs, fmt.Errorf("RECON_WALLETS: %q has the same raw folder as %q", vw, prev))
		}
		folders[f] = vw
	}
	return errors.Join(errs...)
}

func walletFolder(vault, wallet string) string {
	return path.Join("wallets", safeName(vault), safeName(wallet))
}

// walletBase is the URL of one wallet: {wallet}/v2/vaults/{vault}/wallets/{wallet}.
func (c *Client) walletBase(vault, wallet string) string {
	return c.cfg.WalletURL + PathWalletVaults + url.PathEscape(vault) + PathWallets + url.PathEscape(wallet)
}

// walletBalancesURL is the balances of a wallet at asOf (zero: now) on
// blockchain ("" : every chain; only EVM wallets accept one).
func (c *Client) walletBalancesURL(vault, wallet string, asOf time.Time, blockchain string) string {
	v := url.Values{}
	if !asOf.IsZero() {
		v.Set("as_of", asOf.UTC().Format(TimeFormat))
	}
	if blockchain != "" {
		v.Set("blockchain", blockchain)
	}
	u := c.walletBase(vault, wallet) + PathWalletBalances
	if len(v) > 0 {
		u += "?" + v.Encode()
	}
	return u
}

// walletTxWindow is the created_at range of the transactions pulled for w:
// from WalletLookback before its start to its end (exclusive).
func walletTxWindow(w raw.Window) (time.Time, time.Time) {
	return w.Start().Add(-WalletLookback), w.End()
}

func (c *Client) walletTxURL(vault, wallet string, w raw.Window, page, size int) string {
	from, to := walletTxWindow(w)
	v := url.Values{"start_date": {from.UTC().Format(TimeFormat)}, "end_date": {to.UTC().Format(TimeFormat)},
		"page": {strconv.Itoa(page)}, "size": {strconv.Itoa(size)}}
	return c.walletBase(vault, wallet) + PathWalletTxs + "?" + v.Encode()
}

func (c *Client) walletTxPager(vault, wallet string, w raw.Window, size int) pager {
	p := pager{op: fmt.Sprintf("wallet %s/%s transactions %s", vault, wallet, w),
		url: func(page int) string { return c.walletTxURL(vault, wallet, w, page, size) }, env: raw.Content, size: size}
	if size < 1 || size > MaxWalletPage {
		p.err = fmt.Errorf("page size %d, want 1..%d", size, MaxWalletPage)
	}
	return p
}

// WalletBalances returns the raw balances of a wallet at asOf (zero: now),
// on one blockchain when it is not "" (a non-EVM wallet answers that with
// an *APIError). The answer must be a JSON object with an as_of.
func (c *Client) WalletBalances(ctx context.Context, vault, wallet string, asOf time.Time, blockchain string) ([]byte, error) {
	op := fmt.Sprintf("wallet %s/%s balances", vault, wallet)
	body, _, err := c.getRaw(ctx, op, c.walletBalancesURL(vault, wallet, asOf, blockchain))
	if err != nil {
		return nil, err
	}
	var doc struct {
		AsOf     *time.Time        `json:"as_of"`
		Balances []json.RawMessage `json:"balances"`
	}
	if err := json.Unmarshal(body, &doc); err != nil || doc.AsOf == nil {
		return nil, fmt.Errorf("%s: the answer is not a balances object with an as_of (%v)", op, err)
	}
	if !asOf.IsZero() && !doc.AsOf.Equal(asOf) {
		return nil, fmt.Errorf("%s: asked as_of %s, the answer is as_of %s", op, asOf.UTC().Format(TimeFormat),
			doc.AsOf.UTC().Format(TimeFormat))
	}
	return body, nil
}

// walletJobs pull each configured wallet over req.Wallet; without a wallet
// service the wallet is not configured: one NOT_CONFIGURED RawFile, which
// holds the wallet rules without making the run incomplete (DESIGN.md §9).
func (c *Client) walletJobs(req Request, dir string) []job {
	w := req.Wallet
	if w.IsZero() {
		return nil
	}
	if c.cfg.WalletURL == "" {
		return []job{{run: func(context.Context) (outcome, error) {
			return outcome{files: []raw.File{{Source: raw.SourceWallet, Format: raw.FormatJSON, Window: w, Status: raw.StatusNotConfigured}}}, nil
		}}}
	}
	snaps := c.walletSnapshots(w)
	last := snaps[len(snaps)-1].UTC().Format(TimeFormat)
	jobs := make([]job, len(c.cfg.Wallets))
	for i, vw := range c.cfg.Wallets {
		vault, wallet, _ := strings.Cut(vw, "/")
		jobs[i] = job{
			call: Call{What: "wallet", Window: w, Account: vw, Request: "GET " + c.walletBase(vault, wallet),
				Then: fmt.Sprintf("its balances at %s and the %d next midnights to %s and now, every page of %s, then %s",
					snaps[0].UTC().Format(TimeFormat), len(snaps)-1, last,
					c.walletTxURL(vault, wallet, w, 0, MaxWalletPage), PathWalletLimits)},
			run: func(ctx context.Context) (outcome, error) { return c.extractWallet(ctx, vw, w, dir) },
		}
	}
	return jobs
}

// extractWallet writes one wallet's raw files: its record, its balances at
// every midnight of the window and its end (walletSnapshots) and now, every page of
// the transactions created from WalletLookback before the window to its
// end, and its limits. A wallet the service fails to give is not pulled:
// its files are removed and it gives a FAILED RawFile and a reason.
func (c *Client) extractWallet(ctx context.Context, vw string, w raw.Window, dir string) (outcome, error) {
	vault, wallet, _ := strings.Cut(vw, "/")
	folder := walletFolder(vault, wallet)
	if err := c.runOf(ctx).claim(folder, vw); err != nil {
		return outcome{}, fmt.Errorf("wallet %s: %w", vw, err)
	}
	base := c.walletBase(vault, wallet)
	file := func(name, u string) raw.File {
		return raw.File{Source: raw.SourceWallet, Format: raw.FormatJSON, Status: raw.StatusReady, Window: w, Account: vw,
			Path: path.Join(folder, name), Request: "GET " + u}
	}
	var files []raw.File
	keep := func(f raw.File, body []byte) error {
		var err error
		if f.SHA256, f.Size, err = c.save(ctx, dir, f.Path, body); err != nil {
			return fmt.Errorf("wallet %s: %w", vw, err)
		}
		files = append(files, f)
		return nil
	}
	pull := func() error {
		body, _, err := c.getRaw(ctx, "wallet "+vw, base)
		if err == nil && !json.Valid(body) {
			err = fmt.Errorf("wallet %s: the answer is not JSON", vw)
		}
		if err != nil {
			return &pullError{err}
		}
		if err := keep(file("wallet.json", base), body); err != nil {
			return err
		}
		for _, at := range append(c.walletSnapshots(w), time.Time{}) {
			body, err := c.WalletBalances(ctx, vault, wallet, at, "")
			if err != nil {
				return &pullError{err}
			}
			name := "balances_now.json"
			if !at.IsZero() {
				name = "balances_" + strings.NewReplacer(":", "", "-", "", ".", "").Replace(at.UTC().Format(TimeFormat)) + ".json"
			}
			if err := keep(file(name, c.walletBalancesURL(vault, wallet, at, "")), body); err != nil {
				return err
			}
		}
		pages, err := c.savePages(ctx, dir, c.walletTxPager(vault, wallet, w, MaxWalletPage), func(page int) raw.File {
			f := file(fmt.Sprintf("transactions_%s_%s_p%04d.json", w.From.Format(raw.DateLayout), w.To.Format(raw.DateLayout), page),
				c.walletTxURL(vault, wallet, w, page, MaxWalletPage))
			f.Page = page
			return f
		})
		if err != nil {
			return err
		}
		files = append(files, pages...)
		limitsURL := base + PathWalletLimits
		body, _, err = c.getRaw(ctx, "wallet "+vw+" limits", limitsURL)
		var list []json.RawMessage
		if err == nil && json.Unmarshal(body, &list) != nil {
			err = fmt.Errorf("wallet %s limits: the answer is not a JSON array", vw)
		}
		if err != nil {
			return &pullError{err}
		}
		return keep(file("limits.json", limitsURL), body)
	}
	err := pull()
	if pe := (*pullError)(nil); errors.As(err, &pe) {
		if rmErr := os.RemoveAll(filepath.Join(dir, filepath.FromSlash(folder))); rmErr != nil {
			return outcome{}, fmt.Errorf("wallet %s: %w", vw, rmErr)
		}
		o, err := c.notPulled(ctx, raw.SourceWallet, w, "GET "+base, fmt.Errorf("wallet %s: %w", vw, pe.err))
		for i := range o.files {
			o.files[i].Account = vw
		}
		return o, err
	}
	if err != nil {
		return outcome{}, err
	}
	c.log.Info("wallet", "wallet", vw, "window", w.String(), "files", len(files))
	return outcome{files: files}, nil
}

// walletSnapshots are the instants a run over w takes each wallet's
// balances at: every midnight of w and its end, or, when the window reaches
// today, the midnights up to now and now (to the millisecond).
func (c *Client) walletSnapshots(w raw.Window) []time.Time {
	end := w.End()
	if now := c.cfg.Now(); now.Before(end) {
		end = now.UTC().Truncate(time.Millisecond)
	}
	var out []time.Time
	for t := w.Start(); t.Before(end); t = t.AddDate(0, 0, 1) {
		out = append(out, t)
	}
	return append(out, end)
}
