package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"time"

	"github.com/spf13/cobra"

	"recon/extract/raw"
	"recon/internal/bench"
)

// benchCmd is `make bench`'s driver (hidden): it measures every phase as a
// child process of this same binary, `recon bench --phase NAME`.
func (a *app) benchCmd() *cobra.Command {
	var sizes, dir, jsonOut, phase, csvPath, db, day, asOf, accounts, ruleFiles string
	var keep bool
	var historyRuns, historyPayments int
	cmd := &cobra.Command{
		Use:    "bench",
		Short:  "Measure ingest, rules and end to end against DuckDB's native read_csv (make bench)",
		Hidden: true,
		Args:   cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			ctx := cmd.Context()
			if phase != "" {
				pa := bench.PhaseArgs{Phase: phase, CSV: csvPath, Dir: dir, DB: db, Accounts: splitList(accounts), Rules: ruleFiles}
				var err error
				if day != "" {
					if pa.Day, err = time.Parse(raw.DateLayout, day); err != nil {
						return usageErr("--from: %v", err)
					}
				}
				if asOf != "" {
					if pa.AsOf, err = time.Parse(time.RFC3339Nano, asOf); err != nil {
						return usageErr("--as-of: %v", err)
					}
				}
				out, err := bench.RunPhase(ctx, pa)
				if err != nil {
					return err
				}
				return json.NewEncoder(a.stdout).Encode(out)
			}
			var ns []int
			for _, s := range splitList(sizes) {
				n, err := strconv.Atoi(s)
				if err != nil || n < 1 {
					return usageErr("--sizes: %q is not a number of payments", s)
				}
				ns = append(ns, n)
			}
			self, err := os.Executable()
			if err != nil {
				return err
			}
			if dir == "" {
				if dir, err = os.MkdirTemp("", "recon-bench-"); err != nil {
					return err
				}
				if !keep {
					defer os.RemoveAll(dir)
				}
			}
			rep, err := bench.Run(ctx, bench.Config{Sizes: ns, Dir: dir, Recon: self,
				Keep: keep, Log: a.stderr, HistoryRuns: historyRuns, HistoryPayments: historyPayments})
			if rep != nil && (len(rep.Sizes) > 0 || rep.History != nil) {
				fmt.Fprintln(a.stdout)
				if werr := rep.WriteTable(a.stdout); werr != nil && err == nil {
					err = werr
				}
				if jsonOut != "" {
					if werr := writeBenchJSON(jsonOut, rep); werr != nil && err == nil {
						err = werr
					}
				}
			}
			return err
		},
	}
	f := cmd.Flags()
	f.StringVar(&sizes, "sizes", "100000,1000000", "payments in the generated day, one measurement each (\"\": none)")
	f.IntVar(&historyRuns, "history-runs", 30, "consecutive nightly runs of the history phase (0: none)")
	f.IntVar(&historyPayments, "history-payments", 10000, "payments a day in the history phase")
	f.StringVar(&dir, "dir", "", "scratch folder (default: a temporary one)")
	f.BoolVar(&keep, "keep", false, "keep the data and databases of each size in --dir")
	f.StringVar(&jsonOut, "json", "", "also write the results as JSON to this file")
	f.StringVar(&phase, "phase", "", "run one phase in this process: native, native-auto, ingest or rules (used by bench itself)")
	f.StringVar(&csvPath, "csv", "", "--phase native: the CSV file; ingest: its path under --dir")
	f.StringVar(&db, "db", "", "--phase: the database")
	f.StringVar(&day, "from", "", "--phase: the day (YYYY-MM-DD)")
	f.StringVar(&asOf, "as-of", "", "--phase rules: the run's as-of (RFC 3339)")
	f.StringVar(&accounts, "accounts", "", "--phase rules: this node's accounts, comma separated")
	f.StringVar(&ruleFiles, "rules", "", "--phase rules: a folder of rule files run instead of the built-in catalogue (another catalogue on the same database)")
	return cmd
}

func writeBenchJSON(name string, rep *bench.Report) error {
	if err := os.MkdirAll(filepath.Dir(name), 0o755); err != nil {
		return err
	}
	f, err := os.Create(name)
	if err != nil {
		return err
	}
	if err := rep.WriteJSON(f); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}
