package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"maps"
	"net"
	"net/http"
	"os"
	"slices"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"recon/extract"
	"recon/extract/sandbox"
)

// sandboxFlags configure the simulated network.
type sandboxFlags struct {
	seed   int64
	start  string
	days   int
	perDay int
	truth  string
	faults string
}

func (f *sandboxFlags) register(cmd *cobra.Command, defStart string) {
	cmd.Flags().Int64Var(&f.seed, "seed", 1, "seed of the generated data")
	cmd.Flags().StringVar(&f.start, "start", defStart, "first generated UTC day (YYYY-MM-DD, today, yesterday)")
	cmd.Flags().IntVar(&f.days, "days", 7, "number of generated days")
	cmd.Flags().IntVar(&f.perDay, "payments-per-day", 100, "payments generated per day")
	cmd.Flags().StringVar(&f.truth, "truth", "", "write the injected breaks (ground truth) as JSON to this file")
	cmd.Flags().StringVar(&f.faults, "faults", "", `fault profile: "moderate", or a JSON file of knobs (docs/sandbox.md)`)
}

// sandboxServer is a sandbox served on loopback: the services at base, and
// the download host on a port of its own when the fault profile asks.
type sandboxServer struct {
	sb   *sandbox.Sandbox
	base string
	stop func()
}

// serve builds the sandbox and serves it on addr.
func (f *sandboxFlags) serve(now time.Time, addr string) (*sandboxServer, error) {
	start, err := parseDay(f.start, now)
	if err != nil {
		return nil, usageErr("--start: %v", err)
	}
	cfg := sandbox.Config{Seed: f.seed, Start: start, Days: f.days, PaymentsPerDay: f.perDay}
	switch f.faults {
	case "":
	case "moderate":
		cfg.Faults = sandbox.ModerateFaults()
	default:
		b, err := os.ReadFile(f.faults)
		if err != nil {
			return nil, usageErr("--faults: %v", err)
		}
		if err := sandbox.LoadProfile(bytes.NewReader(b), &cfg); err != nil {
			return nil, usageErr("--faults %s: %v", f.faults, err)
		}
	}
	var listeners []net.Listener
	stop := func() {
		for _, ln := range listeners {
			ln.Close()
		}
	}
	listen := func(addr string) (net.Listener, error) {
		ln, err := net.Listen("tcp", addr)
		if err != nil {
			stop()
			return nil, fmt.Errorf("listen %s: %w", addr, err)
		}
		listeners = append(listeners, ln)
		return ln, nil
	}
	var files net.Listener
	if cfg.Faults.DownloadHost {
		if files, err = listen("127.0.0.1:0"); err != nil {
			return nil, err
		}
		cfg.FilesURL = "http://" + files.Addr().String()
	}
	sb, err := sandbox.New(cfg)
	if err != nil {
		stop()
		return nil, usageErr("sandbox: %v", err)
	}
	if f.truth != "" {
		if err := writeTruth(f.truth, sb); err != nil {
			stop()
			return nil, err
		}
	}
	ln, err := listen(addr)
	if err != nil {
		return nil, err
	}
	servers := []*http.Server{{Handler: sb.Handler(), ReadHeaderTimeout: 10 * time.Second}}
	go servers[0].Serve(ln)
	if files != nil {
		servers = append(servers, &http.Server{Handler: sb.FilesHandler(), ReadHeaderTimeout: 10 * time.Second})
		go servers[1].Serve(files)
	}
	return &sandboxServer{sb: sb, base: "http://" + ln.Addr().String(), stop: func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		for _, srv := range servers {
			srv.Shutdown(ctx)
		}
	}}, nil
}

func writeTruth(name string, sb *sandbox.Sandbox) error {
	out, err := os.Create(name)
	if err != nil {
		return err
	}
	if err := sb.Truth().WriteJSON(out); err != nil {
		out.Close()
		return fmt.Errorf("write truth: %w", err)
	}
	return out.Close()
}

// traffic describes what the sandbox served: requests and injected faults.
func traffic(sb *sandbox.Sandbox) string {
	n := 0
	for _, c := range sb.Requests() {
		n += c
	}
	inj := sb.Injected()
	kinds := slices.Sorted(maps.Keys(inj))
	parts := make([]string, len(kinds))
	for i, k := range kinds {
		parts[i] = fmt.Sprintf("%s %d", k, inj[k])
	}
	if len(parts) == 0 {
		parts = []string{"none"}
	}
	return fmt.Sprintf("%d requests served; faults injected: %s", n, strings.Join(parts, ", "))
}

// sandboxEnv is the environment that points recon at a sandbox.
func sandboxEnv(base string, sb *sandbox.Sandbox) [][2]string {
	return [][2]string{
		{"RECON_AUTH_URL", base},
		{"RECON_REPORTING_URL", base},
		{"RECON_SERVER_URL", base + "/v4"},
		{"RECON_LIQUIDATION_URL", base},
		{"RECON_CLIENT_ID", "recon-sandbox"},
		{"RECON_CLIENT_SECRET", "sandbox-secret"},
		{"RECON_AUDIENCE", "urn:ripplenet-test:sandbox"},
		{"RECON_ACCOUNTS", strings.Join(sb.Accounts(), ",")},
	}
}

func (a *app) sandboxCmd() *cobra.Command {
	var f sandboxFlags
	var addr string
	cmd := &cobra.Command{
		Use:   "sandbox",
		Short: "Serve the simulated network (token, reporting, liquidation, server API) until stopped",
		Long: `sandbox serves a deterministic simulation of the network's services on one address,
with injected breaks. It prints the environment that points recon at it. --faults adds
rate limits, server errors, latency, token expiry, FAILED reports, truncated downloads,
a separate download host and malformed rows (docs/sandbox.md).`,
		Example: `  recon sandbox --addr 127.0.0.1:8080 --start 2026-10-01 --days 31 --truth truth.json
  recon sandbox --faults moderate
  recon sandbox --faults faults.json`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			srv, err := f.serve(time.Now(), addr)
			if err != nil {
				return err
			}
			defer srv.stop()
			fmt.Fprintf(a.stdout, "sandbox serving on %s; point recon at it with:\n", srv.base)
			for _, kv := range sandboxEnv(srv.base, srv.sb) {
				fmt.Fprintf(a.stdout, "export %s=%q\n", kv[0], kv[1])
			}
			<-cmd.Context().Done()
			fmt.Fprintf(a.stdout, "sandbox: %s\n", traffic(srv.sb))
			if err := cmd.Context().Err(); err != nil && !errors.Is(err, context.Canceled) {
				return err
			}
			return nil
		},
	}
	cmd.Flags().StringVar(&addr, "addr", "127.0.0.1:8080", "listen address")
	f.register(cmd, time.Now().UTC().AddDate(0, 0, -7).Format(extract.DateLayout))
	return cmd
}
