package pipeline

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"time"

	"recon/extract/raw"
	"recon/output"
	"recon/rules"
	reconsql "recon/sql"
)

// ReplayFile compares one break file of an archived run with its recomputation.
type ReplayFile struct {
	Path     string
	Archived string // sha256 in the manifest
	Replayed string // sha256 of the recomputed file
}

// Same reports whether the recomputed file is byte-identical.
func (f ReplayFile) Same() bool { return f.Archived == f.Replayed }

// Replayed is the outcome of Replay.
type Replayed struct {
	RunID    string
	Prefix   string // the run's folder in the archive
	Manifest output.Manifest
	Files    []ReplayFile
}

// Identical reports whether every break file was reproduced byte for byte.
func (r *Replayed) Identical() bool {
	for _, f := range r.Files {
		if !f.Same() {
			return false
		}
	}
	return len(r.Files) > 0
}

// Replay recomputes an archived run in dir: it fetches the run's inputs
// (raw files, the warehouse state the run started from, its rule files),
// each checked against the manifest, loads them into a new DuckDB file, runs
// the rules with the run's id, window, as-of, accounts and parameters, writes
// the reports and compares the break files with the manifest. An input that
// differs from the manifest gives an error wrapping output.ErrMismatch.
func Replay(ctx context.Context, store output.Store, runID, dir string, log *slog.Logger) (*Replayed, error) {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	defer limitGoMemory()()
	prefix, m, err := output.FindRun(ctx, store, runID)
	if err != nil {
		return nil, err
	}
	r := &Replayed{RunID: runID, Prefix: prefix, Manifest: m}
	// done logs a step's end: a replay of a long history restores its
	// state for most of a minute before the load logs a line.
	start := time.Now()
	done := func(step string) {
		log.Info("replay step finished", "step", step, "seconds", time.Since(start).Seconds())
		start = time.Now()
	}
	if err := output.Fetch(ctx, store, prefix, m, dir, output.InputsDir+"/"); err != nil {
		return r, fmt.Errorf("replay %s: fetch inputs: %w", runID, err)
	}
	done("fetch")
	catalogue, err := rules.Load(rules.Dir{Name: "archived", FS: os.DirFS(filepath.Join(dir, filepath.FromSlash(output.RulesDir)))})
	if err != nil {
		return r, fmt.Errorf("replay %s: archived rules: %w", runID, err)
	}
	if err := sameRules(catalogue, m.Run.Rules); err != nil {
		return r, fmt.Errorf("replay %s: %w", runID, err)
	}
	db, err := reconsql.OpenDB(filepath.Join(dir, "replay.duckdb"), false)
	if err != nil {
		return r, err
	}
	defer db.Close()
	if _, err := reconsql.Migrate(ctx, db); err != nil {
		return r, fmt.Errorf("replay %s: %w", runID, err)
	}
	if err := output.RestoreState(ctx, db, dir); err != nil {
		return r, fmt.Errorf("replay %s: %w", runID, err)
	}
	if err := reconsql.Derive(ctx, db); err != nil { // the state of a run archived before a derived column
		return r, fmt.Errorf("replay %s: %w", runID, err)
	}
	if err := replayJournal(ctx, db, dir, m.Run.ID); err != nil {
		return r, fmt.Errorf("replay %s: %w", runID, err)
	}
	done("state")
	rawDir := filepath.Join(dir, output.InputsDir)
	files, err := raw.ReadIndex(rawDir)
	if err != nil {
		return r, fmt.Errorf("replay %s: %w", runID, err)
	}
	// Run's stages, on the run's inputs and metadata.
	loaded, err := loadStage(ctx, db, rawDir, m.Run.ID, files, log)
	if err != nil {
		return r, fmt.Errorf("replay %s: load: %w", runID, err)
	}
	done("load")
	files, _ = unreadable(files, loaded.Unreadable) // the run's gaps; its reasons are in the manifest
	if _, err := rulesStage(ctx, db, catalogue, m.Run, files); err != nil {
		return r, fmt.Errorf("replay %s: rules: %w", runID, err)
	}
	done("rules")
	if _, err := reportStage(ctx, db, m.Run, dir); err != nil {
		return r, fmt.Errorf("replay %s: %w", runID, err)
	}
	done("report")
	for _, name := range output.BreakFiles {
		f := ReplayFile{Path: name}
		if a, ok := m.File(name); ok {
			f.Archived = a.SHA256
		}
		got, err := os.ReadFile(filepath.Join(dir, name))
		if err != nil {
			return r, err
		}
		f.Replayed = output.SHA256(got)
		r.Files = append(r.Files, f)
	}
	return r, nil
}

// sameRules checks the archived rule files against the manifest's list.
func sameRules(catalogue []rules.Rule, want []output.RuleRef) error {
	got := map[string]string{}
	for _, r := range catalogue {
		got[r.ID] = r.SHA256
	}
	if len(got) != len(want) {
		return fmt.Errorf("the archive holds %d rule files, the manifest lists %d rules", len(got), len(want))
	}
	for _, w := range want {
		if got[w.ID] != w.SHA256 {
			return fmt.Errorf("rule %s: archived file has sha256 %q, the manifest says %s", w.ID, got[w.ID], w.SHA256)
		}
	}
	return nil
}
