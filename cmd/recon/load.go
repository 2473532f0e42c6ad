package main

import (
	"time"

	"github.com/spf13/cobra"

	"recon/extract"
	"recon/extract/raw"
)

func (a *app) loadCmd() *cobra.Command {
	var dir, from, to string
	var failOnBreaks bool
	cmd := &cobra.Command{
		Use:   "load --dir DIR [--from DATE --to DATE]",
		Short: "Load, reconcile, report and archive raw files downloaded earlier, without the network",
		Long: `load runs the pipeline on raw files already on disk instead of calling the
network: DIR holds index.json and the files it lists, as extraction writes them
(the inputs/ folder of an archived run, or a folder prepared the same way: see
docs/archive.md). Every file is checked against the size and sha256 that
index.json lists; then load, rules, reports, archive and publishing are those of
'recon run', and so are the lock, the run ledger and the exit codes. No
credentials or service URLs are needed.

The window defaults to the days the report files cover; --from and --to set it.`,
		Example: `  recon load --dir ./recon-archive/run_date=2026-10-02/run_id=r-20261002T003000Z/inputs
  recon load --dir ./samples --from 2026-10-01 --to 2026-10-01 --fail-on-breaks`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if dir == "" {
				return usageErr("--dir is required")
			}
			var w raw.Window
			var err error
			if from != "" || to != "" {
				if w, err = window(from, to, time.Now()); err != nil {
					return err
				}
			} else {
				files, err := raw.ReadIndex(dir)
				if err != nil {
					return usageErr("--dir: %v", err)
				}
				var ok bool
				if w, ok = extract.ReportSpan(files); !ok {
					return usageErr("--dir %s lists no report file: give --from and --to", dir)
				}
			}
			cfg, err := a.pipelineConfig(cmd, dir)
			if err != nil {
				return err
			}
			return a.runPipeline(cmd, cfg, w, runOpts{failOnBreaks: failOnBreaks})
		},
	}
	cmd.Flags().StringVar(&dir, "dir", "", "folder of raw files with their index.json")
	cmd.Flags().StringVar(&from, "from", "", "first UTC day (default: the first day the report files cover)")
	cmd.Flags().StringVar(&to, "to", "", "last UTC day, inclusive (default: the last day they cover)")
	cmd.Flags().BoolVar(&failOnBreaks, "fail-on-breaks", false, "exit 4 when open breaks remain in the window")
	addFlags(cmd.Flags(), dbSettings, workSettings, storeSettings, rulesSettings, runSettings)
	return cmd
}
