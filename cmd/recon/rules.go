package main

import (
	"slices"
	"strings"

	"github.com/spf13/cobra"

	"recon/pipeline"
)

func (a *app) rulesCmd() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "rules",
		Short: "Inspect the reconciliation rules",
		Example: `  recon rules list
  recon rules list --format csv`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error { return cmd.Help() },
	}
	var format string
	list := &cobra.Command{
		Use:   "list",
		Short: "List the rules a run applies, with their parameters",
		Long: `list shows every rule a run applies: the built-in catalogue, plus or overridden by
the files of --rules-dir, with severity, description and parameters as a run would
bind them (an override from --param, RECON_PARAMS or the config file is marked *).
Every rule file is checked first; a broken one is reported with its file and line.`,
		Example: `  recon rules list
  recon rules list --rules-dir ./our-rules --param payment_missing_in_statement.grace_hours=48
  recon rules list --format json`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := checkFormat(format); err != nil {
				return err
			}
			cfg, err := a.decode(a.resolve(cmd))
			if err != nil {
				return usageErr("configuration:\n%v", err)
			}
			catalogue, err := pipeline.Catalogue(cfg)
			if err != nil {
				return usageErr("%v", err)
			}
			var rows [][]*string
			for _, r := range catalogue {
				var params []string
				for _, p := range r.Params {
					v, mark := p.Default, ""
					if o, ok := cfg.Params[r.ID+"."+p.Name]; ok {
						v, mark = o, "*"
					}
					params = append(params, p.Name+"="+v+mark)
				}
				rows = append(rows, []*string{&r.ID, &r.Severity, ptr(strings.Join(params, " ")), &r.File, &r.Description})
			}
			t := table{cols: []string{"rule_id", "severity", "params", "file", "description"}, rows: slices.Values(rows)}
			return t.write(a.stdout, format)
		},
	}
	list.Flags().StringVar(&format, "format", "table", "output: table, csv or json")
	addFlags(list.Flags(), rulesSettings)
	cmd.AddCommand(list)
	return cmd
}

func ptr(s string) *string { return &s }
