package main

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/go-co-op/gocron/v2"
	"github.com/spf13/cobra"

	"recon/pipeline"
)

func (a *app) configCmd() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "config",
		Short: "Inspect the configuration",
		Example: `  recon config check
  recon config check --config /etc/recon/recon.toml`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error { return cmd.Help() },
	}
	check := &cobra.Command{
		Use:   "check",
		Short: "Print the effective configuration, secrets redacted, and every problem in it",
		Long: `check resolves every setting as run and schedule would (flags, then RECON_* variables,
then the config file, then defaults), prints each value with where it came from
(the client secret as [redacted]), then lists every problem at once: missing or
malformed values, unknown config file keys, a config file holding the secret that
others can read, rule files that do not parse, parameter overrides no rule has, a
bad schedule, folders that do not exist. It calls no service. Exit 0 when there is
no problem, 2 otherwise.`,
		Example: `  recon config check
  recon config check --config /etc/recon/recon.toml
  RECON_CONFIG=/etc/recon/recon.toml recon config check --db /tmp/test.duckdb`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			values := a.resolve(cmd)
			cfg, err := a.decode(values)
			_, perr := pipeline.Prepare(cfg)
			_, _, werr := a.decodeWebhook(values)
			problems := flatten(errors.Join(err, perr, cfg.Schedule.Validate(), folders(cfg), werr))

			if a.file.path != "" {
				fmt.Fprintf(a.stdout, "config file: %s\n", a.file.path)
			}
			tw := newAligned(a.stdout)
			fmt.Fprintln(tw, "SETTING\tVALUE\tFROM")
			for _, v := range values {
				shown := v.val
				if v.secret && shown != "" {
					shown = "[redacted]"
				}
				fmt.Fprintf(tw, "%s\t%s\t%s\n", v.key, shown, v.from)
			}
			tw.Flush()
			if cfg.Schedule.Validate() == nil {
				c := gocron.NewDefaultCron(false)
				if c.IsValid(cfg.Schedule.Cron, time.UTC, time.Now()) == nil {
					fmt.Fprintf(a.stdout, "next nightly run: %s\n", c.Next(time.Now()).UTC().Format(time.RFC3339))
				}
			}
			if len(problems) == 0 {
				fmt.Fprintln(a.stdout, "configuration OK")
				return nil
			}
			fmt.Fprintf(a.stdout, "%d problems:\n", len(problems))
			for _, p := range problems {
				fmt.Fprintf(a.stdout, "  - %v\n", p)
			}
			return &codeError{exitUsage, fmt.Errorf("the configuration has %d problems", len(problems))}
		},
	}
	addFlags(check.Flags(), dbSettings, workSettings, storeSettings, rulesSettings, runSettings, scheduleSettings, nightlySettings)
	cmd.AddCommand(check)
	return cmd
}

// folders checks that the folders the files go in exist.
func folders(cfg pipeline.Config) error {
	var errs []error
	for _, f := range [][2]string{{"RECON_DB", cfg.DB}, {"RECON_METRICS_FILE", cfg.MetricsFile}} {
		if f[1] == "" {
			continue
		}
		if fi, err := os.Stat(filepath.Dir(f[1])); err != nil || !fi.IsDir() {
			errs = append(errs, fmt.Errorf("%s %s: its folder does not exist", f[0], f[1]))
		}
	}
	if cfg.RulesDir != "" {
		if fi, err := os.Stat(cfg.RulesDir); err != nil || !fi.IsDir() {
			errs = append(errs, fmt.Errorf("RECON_RULES_DIR %s is not a folder", cfg.RulesDir))
		}
	}
	return errors.Join(errs...)
}

// flatten lists the leaves of joined errors.
func flatten(err error) []error {
	if err == nil {
		return nil
	}
	if j, ok := err.(interface{ Unwrap() []error }); ok {
		var out []error
		for _, e := range j.Unwrap() {
			out = append(out, flatten(e)...)
		}
		return out
	}
	return []error{err}
}
