package pipeline

import (
	"context"
	"fmt"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"time"

	"recon/extract"
	"recon/output"
	"recon/rules"
	"recon/transform"
)

// Result is what a run did.
type Result struct {
	RunID       string
	Window      extract.Window
	Verdict     string   // output.Complete or output.Incomplete
	Reasons     []string // why incomplete
	Found       map[string]int64
	Open        int64
	Resolved    int64
	Loaded      map[string]int64
	Quarantined int64 // malformed rows set aside (table quarantine)
	Changes     int64 // values a newer generation of a report changed (table report_changes)
	DB          string
	Archive     string // the run's folder in the archive
}

// RunID names a run by its UTC start time.
func RunID(start time.Time) string { return "r-" + start.UTC().Format("20060102T150405Z") }

// StatementWindow is the window of statements pulled for a report window: one
// day longer, so payments executed after midnight still find their entry, but
// never past today.
func StatementWindow(w extract.Window, now time.Time) extract.Window {
	s := extract.Window{From: w.From, To: w.To.AddDate(0, 0, 1)}
	if today, _ := extract.NewWindow(now, now); s.To.After(today.To) {
		s.To = today.To
	}
	if s.To.Before(s.From) {
		s.To = s.From
	}
	return s
}

// Run reconciles the window: extract, load, rules, report, archive, and
// finally publish the DuckDB file. Any error leaves the published file and
// the archive as they were.
func Run(ctx context.Context, cfg Config, w extract.Window) (*Result, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	now := cfg.Now
	if now == nil {
		now = time.Now
	}
	log := cfg.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	started := now().UTC()
	res := &Result{RunID: RunID(started), Window: w, Verdict: output.Complete, DB: cfg.DB}
	log = log.With("run_id", res.RunID)
	runDir := filepath.Join(cfg.WorkDir, res.RunID)
	rawDir := filepath.Join(runDir, "inputs")
	if err := os.MkdirAll(rawDir, 0o755); err != nil {
		return nil, fmt.Errorf("run folder: %w", err)
	}
	catalogue, err := loadRules(cfg.RulesDir)
	if err != nil {
		return nil, err
	}
	store, err := output.OpenStore(ctx, cfg.ArchiveURL)
	if err != nil {
		return nil, err
	}
	var stages []stage
	timed := func(name string, fn func() (int64, error)) error {
		st := stage{name: name, start: now().UTC()}
		log.Info("stage started", "stage", name)
		n, err := fn()
		st.end, st.rows = now().UTC(), n
		stages = append(stages, st)
		if err != nil {
			return fmt.Errorf("%s: %w", name, err)
		}
		log.Info("stage finished", "stage", name, "rows", n, "seconds", st.end.Sub(st.start).Seconds())
		return nil
	}

	// Extract.
	var files []extract.RawFile
	if err := timed("extract", func() (int64, error) {
		client, err := extract.New(cfg.Extract)
		if err != nil {
			return 0, err
		}
		ex, err := client.Extract(ctx, extract.Request{
			Reports: w, Statements: StatementWindow(w, started), Accounts: cfg.Accounts, Format: cfg.Format,
		}, rawDir)
		if err != nil {
			return 0, err
		}
		files = ex.Files
		res.Reasons = append(res.Reasons, ex.Incomplete...)
		return int64(len(files)), nil
	}); err != nil {
		return res, err
	}

	wh, err := OpenWarehouse(ctx, cfg.DB)
	if err != nil {
		return res, err
	}
	published := false
	defer func() {
		if !published {
			wh.Discard()
		}
	}()

	// Load.
	var loaded transform.Stats
	if err := timed("load", func() (int64, error) {
		loaded, err = transform.NewLoader(wh.DB, rawDir, res.RunID, log).Load(ctx, files)
		var n int64
		for _, f := range loaded.Files {
			n += f.Rows
		}
		return n, err
	}); err != nil {
		return res, err
	}
	res.Loaded = map[string]int64{}
	for _, f := range loaded.Files {
		res.Loaded[f.File.Source] += f.Rows
	}
	res.Quarantined, res.Changes = loaded.Quarantined(), loaded.Changes()

	// Rules.
	if err := timed("rules", func() (int64, error) {
		r, err := rules.Apply(ctx, wh.DB, catalogue, rules.Run{
			ID: res.RunID, Window: w, AsOf: started, Accounts: cfg.Accounts, Params: cfg.Params,
		})
		res.Found, res.Resolved = r.Found, r.Resolved
		var n int64
		for _, c := range r.Found {
			n += c
		}
		return n, err
	}); err != nil {
		return res, err
	}

	if len(res.Reasons) > 0 {
		res.Verdict = output.Incomplete
	}
	info := output.RunInfo{
		ID: res.RunID, Window: w, AsOf: started, StartedAt: started, Verdict: res.Verdict, Reasons: res.Reasons,
		ToolVersion: cfg.Version, Rows: res.Loaded, Quarantined: res.Quarantined,
	}
	for _, r := range catalogue {
		info.Rules = append(info.Rules, output.RuleRef{ID: r.ID, SHA256: r.SHA256})
	}

	// Report and archive.
	if err := timed("report", func() (int64, error) {
		reports, err := output.WriteReports(ctx, wh.DB, info, runDir)
		if err != nil {
			return 0, err
		}
		rows := map[string]int64{}
		for _, f := range reports {
			if f.Rows != nil {
				rows[f.Path] = *f.Rows
			}
		}
		m, err := output.Archive(ctx, store, info, runDir, rows)
		res.Archive = store.URL() + "/" + output.RunPrefix(res.RunID, started)
		return int64(len(m.Files)), err
	}); err != nil {
		return res, err
	}
	if err := wh.DB.QueryRowContext(ctx, `SELECT count(*) FROM breaks WHERE status <> 'resolved'
		AND event_date BETWEEN ? AND ?`, w.From, w.To).Scan(&res.Open); err != nil {
		return res, fmt.Errorf("count open breaks: %w", err)
	}
	if err := recordRun(ctx, wh, info, stages, res, now().UTC()); err != nil {
		return res, err
	}
	if err := wh.Publish(ctx); err != nil {
		return res, err
	}
	published = true
	log.Info("run published", "verdict", res.Verdict, "open_breaks", res.Open, "quarantined", res.Quarantined,
		"report_changes", res.Changes, "db", cfg.DB, "archive", res.Archive)
	if err := os.RemoveAll(runDir); err != nil {
		log.Warn("could not remove the run folder", "dir", runDir, "err", err)
	}
	return res, nil
}

type stage struct {
	name       string
	start, end time.Time
	rows       int64
}

func recordRun(ctx context.Context, wh *Warehouse, info output.RunInfo, stages []stage, res *Result, finished time.Time) error {
	tx, err := wh.DB.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	defer tx.Rollback()
	if _, err := tx.ExecContext(ctx, `INSERT INTO runs VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
		info.ID, info.Window.From, info.Window.To, info.AsOf, info.StartedAt, finished, info.Verdict,
		info.Reasons, res.Open, res.Archive, info.ToolVersion); err != nil {
		return fmt.Errorf("record run: %w", err)
	}
	for _, s := range stages {
		if _, err := tx.ExecContext(ctx, `INSERT INTO run_stages VALUES (?, ?, ?, ?, ?)`,
			info.ID, s.name, s.start, s.end, s.rows); err != nil {
			return fmt.Errorf("record stage %s: %w", s.name, err)
		}
	}
	return tx.Commit()
}

func loadRules(dir string) ([]rules.Rule, error) {
	dirs := []fs.FS{rules.Builtin}
	if dir != "" {
		dirs = append(dirs, os.DirFS(dir))
	}
	r, err := rules.Load(dirs...)
	if err != nil {
		return nil, fmt.Errorf("rules: %w", err)
	}
	return r, nil
}
