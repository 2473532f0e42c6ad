package main

import (
	"errors"
	"fmt"

	"github.com/spf13/cobra"

	"recon/output"
	"recon/pipeline"
)

// archiveConfig is the configuration of the archive, replay and diff
// commands.
func (a *app) archiveConfig(cmd *cobra.Command) (pipeline.Config, error) {
	cfg, err := a.decode(a.resolve(cmd))
	if err = errors.Join(err, cfg.S3.Validate()); err != nil {
		return cfg, usageErr("configuration:\n%v", err)
	}
	return cfg, nil
}

// openArchive opens the archive of cmd's configuration.
func (a *app) openArchive(cmd *cobra.Command) (output.Store, error) {
	cfg, err := a.archiveConfig(cmd)
	if err != nil {
		return nil, err
	}
	return output.OpenStore(cmd.Context(), cfg.ArchiveURL, cfg.S3)
}

func (a *app) archiveCmd() *cobra.Command {
	var runID string
	cmd := &cobra.Command{
		Use:   "archive --run RUN_ID",
		Short: "Complete the archive of a run whose upload failed",
		Long: `archive uploads a run that was published but not archived (the run ended incomplete
with "archive: ..." as its reason) from its folder in the work folder, writes its
manifest last, and marks the run archived in the DuckDB file's run ledger. It is safe
to repeat: files already in the archive are not sent again.`,
		Example: `  recon archive --run r-20261012T003000Z --archive s3://finance-recon/nightly`,
		Args:    cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if runID == "" {
				return usageErr("--run is required")
			}
			cfg, err := a.archiveConfig(cmd)
			if err != nil {
				return err
			}
			res, err := pipeline.ArchiveRun(cmd.Context(), cfg, runID)
			if err != nil {
				return err
			}
			fmt.Fprintf(a.stdout, "run %s archived: %s (%d files, %d bytes, and the manifest)\n", runID, res.URL,
				len(res.Manifest.Files), res.Manifest.Size())
			return nil
		},
	}
	cmd.Flags().StringVar(&runID, "run", "", "id of the run to archive (r-YYYYMMDDTHHMMSSZ)")
	addFlags(cmd.Flags(), dbSettings, workSettings, storeSettings)
	return cmd
}
