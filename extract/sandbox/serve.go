package sandbox

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"strings"
	"time"

	"recon/extract"
)

// The credentials the sandbox's token service accepts unless Config names others.
const (
	ClientID     = "recon-sandbox"
	ClientSecret = "sandbox-secret"
	Audience     = "urn:ripplenet-test:sandbox"
)

// Served is a sandbox listening on loopback, with what a client needs to reach it.
type Served struct {
	Sandbox  *Sandbox
	URL      string // the token, reporting and liquidation services; the server API is URL + "/v4"
	FilesURL string // the download host, when Faults.DownloadHost asked for one
	servers  []*http.Server
}

// Serve builds the sandbox of cfg and serves it on addr. With
// Faults.DownloadHost and no Config.FilesURL, the download host gets a
// loopback port of its own. wrap, if given, wraps the services' handler
// (tests add faults of their own). Close stops serving.
func Serve(cfg Config, addr string, wrap ...func(http.Handler) http.Handler) (*Served, error) {
	var listeners []net.Listener
	fail := func(err error) (*Served, error) {
		for _, ln := range listeners {
			ln.Close()
		}
		return nil, err
	}
	listen := func(addr string) error {
		ln, err := net.Listen("tcp", addr)
		if err != nil {
			return fmt.Errorf("listen %s: %w", addr, err)
		}
		listeners = append(listeners, ln)
		return nil
	}
	if cfg.Faults.DownloadHost && cfg.FilesURL == "" {
		if err := listen("127.0.0.1:0"); err != nil {
			return fail(err)
		}
		cfg.FilesURL = "http://" + listeners[0].Addr().String()
	}
	sb, err := New(cfg)
	if err != nil {
		return fail(err)
	}
	if err := listen(addr); err != nil {
		return fail(err)
	}
	h := sb.Handler()
	for _, w := range wrap {
		h = w(h)
	}
	s := &Served{Sandbox: sb, URL: "http://" + listeners[len(listeners)-1].Addr().String(), FilesURL: sb.cfg.FilesURL}
	if len(listeners) == 2 {
		s.serve(sb.FilesHandler(), listeners[0])
	}
	s.serve(h, listeners[len(listeners)-1])
	return s, nil
}

func (s *Served) serve(h http.Handler, ln net.Listener) {
	srv := &http.Server{Handler: h, ReadHeaderTimeout: 10 * time.Second}
	s.servers = append(s.servers, srv)
	go srv.Serve(ln)
}

// Close stops serving, letting requests in flight finish for up to 5 seconds.
func (s *Served) Close() error {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	var errs []error
	for _, srv := range s.servers {
		if err := srv.Shutdown(ctx); err != nil {
			errs = append(errs, err, srv.Close())
		}
	}
	return errors.Join(errs...)
}

// Env is the environment that points recon at the sandbox, in the order `recon sandbox` prints it.
func (s *Served) Env() [][2]string {
	c := s.Sandbox.cfg
	env := [][2]string{
		{"RECON_AUTH_URL", s.URL},
		{"RECON_REPORTING_URL", s.URL},
		{"RECON_SERVER_URL", s.URL + "/v4"},
		{"RECON_LIQUIDATION_URL", s.URL},
		{"RECON_CLIENT_ID", c.ClientID},
		{"RECON_CLIENT_SECRET", c.ClientSecret},
		{"RECON_AUDIENCE", c.Audience},
		{"RECON_ACCOUNTS", strings.Join(s.Sandbox.Accounts(), ",")},
		{"RECON_WALLET_URL", s.URL + WalletPrefix},
		{"RECON_WALLETS", strings.Join(s.Sandbox.Wallets(), ",")},
	}
	if c.WalletAudience != "" {
		env = append(env, [2]string{"RECON_WALLET_AUDIENCE", c.WalletAudience})
	}
	return env
}

// ExtractConfig returns base pointed at the sandbox: its service URLs
// (the wallet service and its wallets too) and credentials set, every
// other field as given.
func (s *Served) ExtractConfig(base extract.Config) extract.Config {
	c := s.Sandbox.cfg
	base.AuthURL, base.ReportingURL, base.LiquidationURL, base.ServerURL = s.URL, s.URL, s.URL, s.URL+"/v4"
	base.ClientID, base.ClientSecret, base.Audience = c.ClientID, extract.Secret(c.ClientSecret), c.Audience
	base.WalletURL, base.Wallets, base.WalletAudience = s.URL+WalletPrefix, s.Sandbox.Wallets(), c.WalletAudience
	return base
}
