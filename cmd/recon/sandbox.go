package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"maps"
	"net"
	"os"
	"slices"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"recon/extract/raw"
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

	webhookURL string // callback of the sandbox's webhook notifications ("": none)
}

func (f *sandboxFlags) register(cmd *cobra.Command, defStart string) {
	cmd.Flags().Int64Var(&f.seed, "seed", 1, "seed of the generated data")
	cmd.Flags().StringVar(&f.start, "start", defStart, "first generated UTC day (YYYY-MM-DD, today, yesterday)")
	cmd.Flags().IntVar(&f.days, "days", 7, "number of generated days")
	cmd.Flags().IntVar(&f.perDay, "payments-per-day", 100, "payments generated per day")
	cmd.Flags().StringVar(&f.truth, "truth", "", "write the injected breaks (ground truth) as JSON to this file")
	cmd.Flags().StringVar(&f.faults, "faults", "", `fault profile: "moderate", or a JSON file of knobs (docs/sandbox.md)`)
}

// serve builds the sandbox and serves it on addr.
func (f *sandboxFlags) serve(now time.Time, addr string) (*sandbox.Served, error) {
	start, err := parseDay(f.start, now)
	if err != nil {
		return nil, usageErr("--start: %v", err)
	}
	cfg := sandbox.Config{Seed: f.seed, Start: start, Days: f.days, PaymentsPerDay: f.perDay, WebhookURL: f.webhookURL}
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
	srv, err := sandbox.Serve(cfg, addr)
	if opErr := (*net.OpError)(nil); errors.As(err, &opErr) {
		return nil, err
	} else if err != nil {
		return nil, usageErr("sandbox: %v", err)
	}
	if f.truth != "" {
		if err := writeTruth(f.truth, srv.Sandbox); err != nil {
			srv.Close()
			return nil, err
		}
	}
	return srv, nil
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
			defer srv.Close()
			fmt.Fprintf(a.stdout, "sandbox serving on %s; point recon at it with:\n", srv.URL)
			for _, kv := range srv.Env() {
				fmt.Fprintf(a.stdout, "export %s=%q\n", kv[0], kv[1])
			}
			if f.webhookURL != "" {
				go func() {
					d, err := srv.Sandbox.Deliver(cmd.Context())
					a.log.Info("webhook deliveries settled", "accepted", d.Sent, "refused_after_retries", d.Failed, "err", err)
				}()
			}
			<-cmd.Context().Done()
			fmt.Fprintf(a.stdout, "sandbox: %s\n", traffic(srv.Sandbox))
			if err := cmd.Context().Err(); err != nil && !errors.Is(err, context.Canceled) {
				return err
			}
			return nil
		},
	}
	cmd.Flags().StringVar(&addr, "addr", "127.0.0.1:8080", "listen address")
	cmd.Flags().StringVar(&f.webhookURL, "webhook-url", "", "send webhook notifications of orchestration payments to this callback "+
		"(recon webhook serve's URL with its token), retried every 100ms up to 12 times")
	f.register(cmd, time.Now().UTC().AddDate(0, 0, -7).Format(raw.DateLayout))
	return cmd
}
