package main

import (
	"fmt"
	"time"

	"github.com/spf13/cobra"

	"recon/extract/raw"
)

func (a *app) demoCmd() *cobra.Command {
	var f sandboxFlags
	cmd := &cobra.Command{
		Use:   "demo",
		Short: "Run the whole pipeline against the built-in sandbox, for a first look",
		Long: `demo starts the simulated network on a loopback port, reconciles the last --days
days ending yesterday, and prints the breaks by rule and where the DuckDB file and
the archived reports are. The archive defaults to recon-archive beside the database.`,
		Example: `  recon demo
  recon demo --db /tmp/demo.duckdb --archive /tmp/demo-archive --days 3
  recon demo --faults moderate`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			now := time.Now().UTC()
			f.start = now.AddDate(0, 0, -f.days).Format(raw.DateLayout)
			// A webhook receiver (demowebhook.go); deliveries stamped a day back, inside the window.
			recv, err := startDemoReceiver(func() time.Time { return time.Now().AddDate(0, 0, -1) })
			if err != nil {
				return err
			}
			defer recv.Close()
			f.webhookURL = recv.URL
			srv, err := f.serve(now, "127.0.0.1:0")
			if err != nil {
				return err
			}
			defer srv.Close()
			sb, base := srv.Sandbox, srv.URL
			pc, err := a.decode(a.resolve(cmd))
			if err != nil {
				return usageErr("configuration:\n%v", err)
			}
			pc.Accounts, pc.WebhookSpool = sb.Accounts(), recv.Spool
			pc.Extract = srv.ExtractConfig(pc.Extract)
			pc.Extract.PollInterval = 200 * time.Millisecond
			w, err := raw.NewWindow(now.AddDate(0, 0, -f.days), now.AddDate(0, 0, -1))
			if err != nil {
				return err
			}
			fmt.Fprintf(a.stdout, "sandbox on %s (seed %d, %d payments a day, %d injected breaks)\n",
				base, f.seed, f.perDay, len(sb.Truth().Breaks))
			delivered, err := recv.deliver(cmd.Context(), sb)
			if err != nil {
				return err
			}
			fmt.Fprintln(a.stdout, delivered)
			started := time.Now()
			return a.runPipeline(cmd, pc, w, runOpts{
				ended: func() {
					fmt.Fprintf(a.stdout, "sandbox: %s, in %.1fs\n", traffic(sb), time.Since(started).Seconds())
				},
				footer: fmt.Sprintf("\nopen the database: duckdb -readonly %s\n", pc.DB),
			})
		},
	}
	f.register(cmd, "")
	addFlags(cmd.Flags(), dbSettings, workSettings, storeSettings, rulesSettings, runSettings)
	return cmd
}
