package main

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
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
}

func (f *sandboxFlags) register(cmd *cobra.Command, defStart string) {
	cmd.Flags().Int64Var(&f.seed, "seed", 1, "seed of the generated data")
	cmd.Flags().StringVar(&f.start, "start", defStart, "first generated UTC day (YYYY-MM-DD, today, yesterday)")
	cmd.Flags().IntVar(&f.days, "days", 7, "number of generated days")
	cmd.Flags().IntVar(&f.perDay, "payments-per-day", 40, "payments generated per day")
	cmd.Flags().StringVar(&f.truth, "truth", "", "write the injected breaks (ground truth) as JSON to this file")
}

func (f *sandboxFlags) build(now time.Time) (*sandbox.Sandbox, error) {
	start, err := parseDay(f.start, now)
	if err != nil {
		return nil, usageErr("--start: %v", err)
	}
	sb, err := sandbox.New(sandbox.Config{Seed: f.seed, Start: start, Days: f.days, PaymentsPerDay: f.perDay})
	if err != nil {
		return nil, usageErr("sandbox: %v", err)
	}
	if f.truth != "" {
		out, err := os.Create(f.truth)
		if err != nil {
			return nil, err
		}
		defer out.Close()
		if err := sb.Truth().WriteJSON(out); err != nil {
			return nil, fmt.Errorf("write truth: %w", err)
		}
	}
	return sb, nil
}

// serve starts the sandbox on addr; stop shuts it down.
func serve(sb *sandbox.Sandbox, addr string) (base string, stop func(), err error) {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return "", nil, fmt.Errorf("listen %s: %w", addr, err)
	}
	srv := &http.Server{Handler: sb.Handler(), ReadHeaderTimeout: 10 * time.Second}
	go srv.Serve(ln)
	stop = func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		srv.Shutdown(ctx)
	}
	return "http://" + ln.Addr().String(), stop, nil
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
		Short: "Serve the simulated network (token, reporting, server API) until stopped",
		Long: `sandbox serves a deterministic simulation of the network's services on one address,
with injected breaks. It prints the environment that points recon at it.`,
		Example: `  recon sandbox --addr 127.0.0.1:8080 --start 2026-10-01 --days 31 --truth truth.json`,
		Args:    cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			sb, err := f.build(time.Now())
			if err != nil {
				return err
			}
			base, stop, err := serve(sb, addr)
			if err != nil {
				return err
			}
			defer stop()
			fmt.Fprintf(a.stdout, "sandbox serving on %s; point recon at it with:\n", base)
			for _, kv := range sandboxEnv(base, sb) {
				fmt.Fprintf(a.stdout, "export %s=%q\n", kv[0], kv[1])
			}
			<-cmd.Context().Done()
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
