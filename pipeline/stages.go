package pipeline

import (
	"context"
	"database/sql"
	"fmt"
	"log/slog"
	"slices"
	"time"

	"recon/extract"
	"recon/extract/raw"
	"recon/output"
	"recon/rules"
	"recon/transform"
)

// The stages of a run, each written once: Run calls them all in this order,
// Replay calls load, rules and report on an archived run's inputs, and
// recon load is Run with cfg.InputDir set (extractStage then reuses files).

// extractStage fills rawDir with the raw files of w: from the network, or
// from cfg.InputDir (recon load).
func extractStage(ctx context.Context, cfg Config, w raw.Window, started time.Time, rawDir string) (*extract.Result, error) {
	if cfg.InputDir != "" {
		return extract.Reuse(ctx, cfg.InputDir, rawDir)
	}
	client, err := extractClient(cfg, cfg.Now)
	if err != nil {
		return nil, err
	}
	defer collectAtLimit()()
	req := extractRequest(cfg, w, started)
	if !req.Notifications.IsZero() { // notification.go
		if req.Notifications.Loaded, req.Notifications.Retry, err = notificationsSeen(ctx, cfg.DB); err != nil {
			return nil, err
		}
	}
	return client.Extract(ctx, req, rawDir)
}

// loadStage loads the raw files of rawDir into db for the run runID, then
// checkpoints db, so the rules read compressed, checkpointed tables
// (docs/performance.md).
func loadStage(ctx context.Context, db *sql.DB, rawDir, runID string, files []raw.File, log *slog.Logger) (transform.Stats, error) {
	st, err := transform.NewLoader(db, rawDir, runID, log).Load(ctx, files)
	if err == nil {
		_, err = db.ExecContext(ctx, "CHECKPOINT")
	}
	return st, err
}

// unreadable turns the slices the load skipped, a file of theirs unreadable,
// into what a FAILED source gives: files with theirs marked FAILED, so gaps
// holds the rules that read their tables over their windows, and a reason
// naming the file. The rows those slices loaded in earlier runs stay.
func unreadable(files []raw.File, skipped []transform.Unreadable) ([]raw.File, []string) {
	if len(skipped) == 0 {
		return files, nil
	}
	failed := map[string]bool{}
	var reasons []string
	for _, u := range skipped {
		for _, f := range u.Slice {
			failed[f.Path] = true
		}
		what := u.Slice[0].Source
		if i := slices.IndexFunc(u.Slice, func(f raw.File) bool { return f.Path == u.File }); i >= 0 {
			what = u.Slice[i].Source + " " + u.Slice[i].Window.String()
		}
		reasons = append(reasons, fmt.Sprintf("raw file %s (%s) cannot be read: %s; its rows from earlier runs stay",
			u.File, what, u.Reason))
	}
	out := slices.Clone(files)
	for i := range out {
		if failed[out[i].Path] && out[i].Path != "" {
			out[i].Status = raw.StatusFailed
		}
	}
	return out, reasons
}

// rulesStage applies the catalogue to db for the run info describes, the
// failed sources among files holding the rules that read them.
func rulesStage(ctx context.Context, db *sql.DB, catalogue []rules.Rule, info output.RunInfo, files []raw.File) (rules.Result, error) {
	return rules.Apply(ctx, db, catalogue, ruleRun(info, files))
}

// reportStage writes the reports of the run info describes into dir.
func reportStage(ctx context.Context, db *sql.DB, info output.RunInfo, dir string) (output.Summary, error) {
	return output.WriteReports(ctx, db, info, dir)
}

// runInfo is what the reports, the manifest and the ledger say of a run
// before its verdict: its metadata, rows loaded and rules.
func runInfo(cfg Config, res *Result) output.RunInfo {
	info := output.RunInfo{
		ID: res.RunID, Window: res.Window, AsOf: res.started, StartedAt: res.started, ToolVersion: cfg.Version,
		Accounts: cfg.Accounts, Params: cfg.Params, Rows: res.Loaded, Quarantined: res.Quarantined,
		Layout: output.ReportLayout,
	}
	for _, r := range cfg.catalogue {
		info.Rules = append(info.Rules, output.RuleRef{ID: r.ID, Severity: r.Severity, SHA256: r.SHA256})
	}
	return info
}

// extractClient is the run's extract client; its clock (the 9-month rule)
// is the run's unless cfg.Extract sets one.
func extractClient(cfg Config, now func() time.Time) (*extract.Client, error) {
	ec := cfg.Extract
	if ec.Now == nil {
		ec.Now = now
	}
	return extract.New(ec)
}

// extractRequest is what a run over w asks of extract, started at started.
// Liquidations and the server API's payments and transfers are pulled over
// the statement window: their times trail the quote, as executed_at does.
// Without a liquidation service the liquidations are not pulled, which
// holds the rules that read them. The wallet is pulled over the window
// itself (its rules judge the window's balances); without a wallet service
// it is not configured, which holds its rules without making the run incomplete.
func extractRequest(cfg Config, w raw.Window, started time.Time) extract.Request {
	sw := StatementWindow(w, started)
	return extract.Request{Reports: w, Statements: sw, StatementTail: StatementTail(sw, started), Accounts: cfg.Accounts, Format: cfg.Format,
		Mode: cfg.ReportMode, Cleanup: cfg.Cleanup, Server: sw, Liquidations: sw, Wallet: w,
		Notifications: extract.Notifications{Spool: cfg.WebhookSpool}}
}

// ruleRun is what the rules judge for a run; Replay calls it with the
// archived run's metadata, so a replay binds exactly what the run bound.
func ruleRun(info output.RunInfo, files []raw.File) rules.Run {
	return rules.Run{ID: info.ID, Window: info.Window, AsOf: info.AsOf, Accounts: info.Accounts,
		Params: info.Params, Gaps: gaps(files)}
}

// gaps lists the tables whose source failed for a window (a FAILED report, a
// liquidation or server API source not pulled): their rows there are missing
// or stale, so the rules reading them are held there.
func gaps(files []raw.File) []rules.Gap {
	var out []rules.Gap
	for _, f := range files {
		if f.Status != raw.StatusFailed && f.Status != raw.StatusNotConfigured {
			continue
		}
		for _, t := range transform.TablesOf(f.Source) {
			if g := (rules.Gap{Table: t, Window: f.Window, Quiet: f.Status == raw.StatusNotConfigured}); !slices.Contains(out, g) {
				out = append(out, g)
			}
		}
	}
	return out
}

// stage is one timed stage of a run, as the run ledger records it.
type stage struct {
	name       string
	start, end time.Time
	rows       int64
}
