package main

import (
	"fmt"
	"os"

	"github.com/spf13/cobra"

	"recon/pipeline"
)

func (a *app) replayCmd() *cobra.Command {
	var runID, keep string
	cmd := &cobra.Command{
		Use:   "replay --run RUN_ID",
		Short: "Recompute an archived run from its archived inputs and compare the break files",
		Long: `replay fetches a run's inputs from the archive (raw files, the warehouse state the
run started from, its rule files), checking each against the manifest, recomputes the
run in a temporary DuckDB file with the run's id, window, as-of time, accounts and rule
parameters, and compares the sha256 of breaks.csv, breaks.parquet and changes.csv with
the manifest. It exits 0 when all three are byte-identical, 1 otherwise (or when an
input differs from the manifest). The published DuckDB file is not touched.`,
		Example: `  recon replay --run r-20261012T003000Z --archive s3://finance-recon/nightly
  recon replay --run r-20261012T003000Z --archive ./recon-archive --keep /tmp/replay`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if runID == "" {
				return usageErr("--run is required")
			}
			store, err := a.openArchive(cmd)
			if err != nil {
				return err
			}
			dir := keep
			if dir == "" {
				if dir, err = os.MkdirTemp("", "recon-replay-"); err != nil {
					return err
				}
				defer os.RemoveAll(dir)
			} else if err := os.MkdirAll(dir, 0o755); err != nil {
				return err
			}
			r, err := pipeline.Replay(cmd.Context(), store, runID, dir, a.log)
			if err != nil {
				return err
			}
			fmt.Fprintf(a.stdout, "replay of %s from %s/%s\n", runID, store.URL(), r.Prefix)
			for _, f := range r.Files {
				if f.Same() {
					fmt.Fprintf(a.stdout, "  %-15s identical  sha256 %s\n", f.Path, f.Replayed)
				} else {
					fmt.Fprintf(a.stdout, "  %-15s DIFFERS    archived %s, replayed %s\n", f.Path, f.Archived, f.Replayed)
				}
			}
			if keep != "" {
				fmt.Fprintf(a.stdout, "replayed files kept in %s\n", keep)
			}
			if !r.Identical() {
				return fmt.Errorf("replay of %s differs from its archive", runID)
			}
			fmt.Fprintf(a.stdout, "replay is byte-identical\n")
			return nil
		},
	}
	cmd.Flags().StringVar(&runID, "run", "", "id of the archived run (r-YYYYMMDDTHHMMSSZ)")
	cmd.Flags().StringVar(&keep, "keep", "", "folder that keeps the fetched inputs and replayed files (default: a temporary folder, removed)")
	addFlags(cmd.Flags(), storeSettings)
	return cmd
}
