package main

import (
	"fmt"
	"strconv"

	"github.com/spf13/cobra"

	"recon/output"
	"recon/pipeline"
)

// s3Settings are the archive settings beyond RECON_ARCHIVE_URL; the rest
// (credentials, region, endpoint, retries) is the AWS SDK's standard chain.
type s3Settings struct {
	pathStyle, sse, kmsKey *string
}

func newS3Settings(s *settings) *s3Settings {
	return &s3Settings{
		pathStyle: s.add("s3-force-path-style", "RECON_S3_FORCE_PATH_STYLE", "false", "address S3 buckets in the path (S3-compatible servers)"),
		sse:       s.add("s3-sse", "RECON_S3_SSE", "", "server-side encryption of archived objects: AES256 or aws:kms"),
		kmsKey:    s.add("s3-sse-kms-key-id", "RECON_S3_SSE_KMS_KEY_ID", "", "KMS key for --s3-sse aws:kms (default: the bucket's)"),
	}
}

func (s *s3Settings) options() (output.S3Options, error) {
	pathStyle, err := strconv.ParseBool(*s.pathStyle)
	if err != nil {
		return output.S3Options{}, usageErr("RECON_S3_FORCE_PATH_STYLE %q is not true or false", *s.pathStyle)
	}
	o := output.S3Options{ForcePathStyle: pathStyle, SSE: *s.sse, KMSKeyID: *s.kmsKey}
	if err := o.Validate(); err != nil {
		return o, usageErr("%v", err)
	}
	return o, nil
}

// archiveSettings are the archive and its S3 settings, for the archive,
// replay and diff commands.
type archiveSettings struct {
	*settings
	archive *string
	s3      *s3Settings
}

func newArchiveSettings() *archiveSettings {
	s := newSettings()
	return &archiveSettings{
		settings: s,
		archive:  s.add("archive", "RECON_ARCHIVE_URL", "", "archive: a local folder or s3://bucket/prefix"),
		s3:       newS3Settings(s),
	}
}

// options checks the archive settings and returns the S3 ones.
func (a *archiveSettings) options() (output.S3Options, error) {
	if *a.archive == "" {
		return output.S3Options{}, usageErr("RECON_ARCHIVE_URL (--archive) is not set")
	}
	return a.s3.options()
}

// store opens the archive.
func (a *archiveSettings) store(cmd *cobra.Command) (output.Store, error) {
	o, err := a.options()
	if err != nil {
		return nil, err
	}
	return output.OpenStore(cmd.Context(), *a.archive, o)
}

func (a *app) archiveCmd() *cobra.Command {
	st := newArchiveSettings()
	db := st.add("db", "RECON_DB", "recon.duckdb", "DuckDB file whose run ledger records the run")
	work := st.add("work-dir", "RECON_WORK_DIR", "recon-work", "folder where runs are prepared before archiving")
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
			o, err := st.options()
			if err != nil {
				return err
			}
			res, err := pipeline.ArchiveRun(cmd.Context(), pipeline.Config{
				DB: *db, ArchiveURL: *st.archive, S3: o, WorkDir: *work, Logger: a.log,
			}, runID)
			if err != nil {
				return err
			}
			fmt.Fprintf(a.stdout, "run %s archived: %s (%d files, %d bytes, and the manifest)\n", runID, res.URL,
				len(res.Manifest.Files), res.Manifest.Size())
			return nil
		},
	}
	cmd.Flags().StringVar(&runID, "run", "", "id of the run to archive (r-YYYYMMDDTHHMMSSZ)")
	st.register(cmd.Flags())
	return cmd
}
