package main

import (
	"github.com/spf13/cobra"

	"recon/pipeline"
)

func (a *app) scheduleCmd() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "schedule",
		Short: "Reconcile every night until stopped (a long-running daemon)",
		Long: `schedule runs until SIGTERM or Ctrl-C. At each firing of --cron (UTC, default 00:30,
after the provider's month-to-date reports appear at about 00:01) it reconciles
yesterday and the --recheck-days days before it, so late items resolve or age.

The configuration and the rule files are read once, at start: restart the scheduler
to apply a change. On start it also reads the run ledger of the published database:
if days since the last complete run were missed (downtime, failed nights), it catches
them up at once, each day once, reaching back at most --catch-up-days days. Runs never overlap: a firing
during a run waits for it. A failed night is retried by the next firing. Each run
has the deadline --run-timeout (default 6h): a run past it publishes no data and
ends incomplete, freeing the lock for the next firing, which retries its days.

Only one scheduler runs per database (a second one stops at once and names the
holder); a manual 'recon run' during a scheduled one is refused the same way.
On SIGTERM a run that has not started publishing is discarded, one that is
publishing finishes, and the process exits 0.`,
		Example: `  recon schedule --config /etc/recon/recon.toml
  recon schedule --cron "15 1 * * *" --recheck-days 14
  RECON_LOG_FORMAT=json recon schedule`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			cfg, err := a.pipelineConfig(cmd, "")
			if err != nil {
				return err
			}
			if err := cfg.Schedule.Validate(); err != nil {
				return usageErr("configuration:\n%v", err)
			}
			s, err := pipeline.NewScheduler(cfg, nil, nil)
			if err != nil {
				return err
			}
			return s.Serve(cmd.Context())
		},
	}
	addFlags(cmd.Flags(), dbSettings, workSettings, storeSettings, rulesSettings, runSettings, scheduleSettings, nightlySettings)
	return cmd
}
