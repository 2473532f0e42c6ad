package bench

import (
	"context"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"time"

	"recon/extract/raw"
	"recon/extract/sandbox"
	"recon/pipeline"
	reconsql "recon/sql"
)

// History is the history phase: consecutive nightly runs, each over
// yesterday and the default re-check days before it, against one sandbox,
// one database and one archive. A run's cost should follow its window, not
// the history before it: Last/First compares the last run with the first.
type History struct {
	PaymentsPerDay int          `json:"payments_per_day"`
	RecheckDays    int          `json:"recheck_days"`
	Runs           []HistoryRun `json:"runs"`
	// Ratios of the last run to the first.
	BytesRatio          float64 `json:"archive_bytes_ratio"`
	SecondsRatio        float64 `json:"seconds_ratio"`
	ArchiveSecondsRatio float64 `json:"archive_seconds_ratio"`
	// Replay is `recon replay` of the last night, from the archive the
	// nights shared.
	Replay *HistoryReplay `json:"replay,omitempty"`
}

// HistoryReplay is the replay of one night of the history.
type HistoryReplay struct {
	Night      int     `json:"night"`
	RunID      string  `json:"run_id"`
	Identical  bool    `json:"identical"` // recon replay exited 0: the break files are byte-identical
	Seconds    float64 `json:"seconds"`
	CPUSeconds float64 `json:"cpu_seconds"`
	PeakRSSMiB float64 `json:"peak_rss_mib,omitempty"`
}

// HistoryRun is one nightly run of the history.
type HistoryRun struct {
	Night      int     `json:"night"`
	From       string  `json:"from"`
	To         string  `json:"to"`
	Seconds    float64 `json:"seconds"`     // recon run, end to end
	CPUSeconds float64 `json:"cpu_seconds"` // recon's own
	// ArchiveBytes is what the run added to the archive (its run folder and
	// any new shared objects); ArchiveSeconds its state and archive stages.
	ArchiveBytes   int64   `json:"archive_bytes"`
	ArchiveFiles   int     `json:"archive_files"`
	ArchiveSeconds float64 `json:"archive_seconds"`
	PeakRSSMiB     float64 `json:"peak_rss_mib,omitempty"`
}

// runHistory runs cfg.HistoryRuns nightly windows of cfg.HistoryPayments
// payments a day: night i reconciles its day and the re-check days before
// it, as `recon schedule` would, the last night's day being the day before
// yesterday (its statements are complete).
func runHistory(ctx context.Context, cfg Config) (*History, error) {
	recheck := pipeline.DefaultSchedule.RecheckDays
	h := &History{PaymentsPerDay: cfg.HistoryPayments, RecheckDays: recheck}
	defer h.ratios() // also of the nights done when one fails
	root := filepath.Join(cfg.Dir, "history")
	if err := os.RemoveAll(root); err != nil {
		return h, err
	}
	if !cfg.Keep {
		defer os.RemoveAll(root)
	}
	if err := os.MkdirAll(root, 0o755); err != nil {
		return h, err
	}
	now := time.Now().UTC()
	last := time.Date(now.Year(), now.Month(), now.Day(), 0, 0, 0, 0, time.UTC).AddDate(0, 0, -2)
	first := last.AddDate(0, 0, -(cfg.HistoryRuns - 1))
	start := first.AddDate(0, 0, -recheck)
	srv, err := sandbox.Serve(sandbox.Config{Seed: seed, Start: start, Days: cfg.HistoryRuns + recheck + 1,
		PaymentsPerDay: cfg.HistoryPayments, PendingPolls: -1}, "127.0.0.1:0")
	if err != nil {
		return h, err
	}
	defer srv.Close()
	env := runEnv(srv, root)
	archive := filepath.Join(root, "archive")
	for i := range cfg.HistoryRuns {
		day := first.AddDate(0, 0, i)
		r := HistoryRun{Night: i + 1, From: day.AddDate(0, 0, -recheck).Format(raw.DateLayout), To: day.Format(raw.DateLayout)}
		before, files0, err := treeSize(archive)
		if err != nil {
			return h, err
		}
		p, err := runLogged(ctx, cfg, env, filepath.Join(root, fmt.Sprintf("run-%02d.log", r.Night)), "run", "--from", r.From, "--to", r.To)
		if err != nil {
			return h, fmt.Errorf("night %d: recon run %w", r.Night, err)
		}
		r.Seconds, r.CPUSeconds, r.PeakRSSMiB = p.Seconds, p.CPUSeconds, p.PeakRSSMiB
		after, files1, err := treeSize(archive)
		if err != nil {
			return h, err
		}
		r.ArchiveBytes, r.ArchiveFiles = after-before, files1-files0
		if r.ArchiveSeconds, err = lastArchiveSeconds(filepath.Join(root, "recon.duckdb")); err != nil {
			return h, err
		}
		if cfg.Log != nil {
			fmt.Fprintf(cfg.Log, "bench history: night %d (%s..%s): %.1f s, archive %d files, %.2f MB in %.2f s\n",
				r.Night, r.From, r.To, r.Seconds, r.ArchiveFiles, mb(r.ArchiveBytes), r.ArchiveSeconds)
		}
		h.Runs = append(h.Runs, r)
	}
	if len(h.Runs) == 0 {
		return h, nil
	}
	h.Replay, err = replayLast(ctx, cfg, env, root, h.Runs[len(h.Runs)-1].Night)
	return h, err
}

// replayLast runs `recon replay` of the latest run in root's database,
// night, against the history's archive: the last night's state references
// the shared objects every night before it stored.
func replayLast(ctx context.Context, cfg Config, env []string, root string, night int) (*HistoryReplay, error) {
	id, err := lastRunID(filepath.Join(root, "recon.duckdb"))
	if err != nil {
		return nil, err
	}
	r := &HistoryReplay{Night: night, RunID: id}
	p, err := runLogged(ctx, cfg, env, filepath.Join(root, "replay.log"), "replay", "--run", id)
	r.Seconds, r.CPUSeconds, r.PeakRSSMiB = p.Seconds, p.CPUSeconds, p.PeakRSSMiB
	if err != nil {
		return r, fmt.Errorf("replay of night %d (%s) %w", night, id, err)
	}
	r.Identical = true
	if cfg.Log != nil {
		fmt.Fprintf(cfg.Log, "bench history: replay of night %d (%s): byte-identical, %.1f s\n", night, id, r.Seconds)
	}
	return r, nil
}

// ratios sets the last-to-first ratios of the runs so far.
func (h *History) ratios() {
	if len(h.Runs) == 0 {
		return
	}
	a, b := h.Runs[0], h.Runs[len(h.Runs)-1]
	h.BytesRatio = ratio(float64(b.ArchiveBytes), float64(a.ArchiveBytes))
	h.SecondsRatio = ratio(b.Seconds, a.Seconds)
	h.ArchiveSecondsRatio = ratio(b.ArchiveSeconds, a.ArchiveSeconds)
}

func ratio(a, b float64) float64 {
	if b == 0 {
		return 0
	}
	return a / b
}

// treeSize is the bytes and number of the files under dir (0 if it is missing).
func treeSize(dir string) (int64, int, error) {
	var n int64
	var files int
	err := filepath.WalkDir(dir, func(_ string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		info, err := d.Info()
		if err != nil {
			return err
		}
		n += info.Size()
		files++
		return nil
	})
	if os.IsNotExist(err) {
		return 0, 0, nil
	}
	return n, files, err
}

// runLogged runs recon with args and env, its output into the file
// logPath, sampling its peak RSS. The time, CPU and peak are set when it
// ran; an error names the log and ends with its last lines.
func runLogged(ctx context.Context, cfg Config, env []string, logPath string, args ...string) (Phase, error) {
	log, err := os.Create(logPath)
	if err != nil {
		return Phase{}, err
	}
	cmd := exec.CommandContext(ctx, cfg.Recon, args...)
	cmd.Env, cmd.Stdout, cmd.Stderr = env, log, log
	t0 := time.Now()
	if err := cmd.Start(); err != nil {
		log.Close()
		return Phase{}, err
	}
	samples := sampleProc(cmd.Process.Pid)
	err = cmd.Wait()
	series := samples()
	log.Close()
	p := phaseOf("", cmd.ProcessState, time.Since(t0))
	p.PeakRSSMiB = series.peakMiB()
	if err != nil {
		return p, fmt.Errorf("(log %s): %w; its last lines:\n%s", logPath, err, logTail(logPath, 4096))
	}
	return p, nil
}

// lastRunID is the id of the latest run in db.
func lastRunID(db string) (string, error) {
	d, err := reconsql.OpenDB(db, true)
	if err != nil {
		return "", err
	}
	defer d.Close()
	var id string
	if err := d.QueryRow(`SELECT run_id FROM runs ORDER BY started_at DESC LIMIT 1`).Scan(&id); err != nil {
		return "", fmt.Errorf("read the last run: %w", err)
	}
	return id, nil
}

// lastArchiveSeconds is the seconds of the latest run in db's stages that
// write its archive: saving the state it started from, and the upload.
func lastArchiveSeconds(db string) (float64, error) {
	d, err := reconsql.OpenDB(db, true)
	if err != nil {
		return 0, err
	}
	defer d.Close()
	var s float64
	err = d.QueryRow(`SELECT coalesce(sum(epoch(finished_at) - epoch(started_at)), 0) FROM run_stages
		WHERE stage IN ('state', 'archive') AND run_id = (SELECT run_id FROM runs ORDER BY started_at DESC LIMIT 1)`).Scan(&s)
	if err != nil {
		return 0, fmt.Errorf("read the archive stage: %w", err)
	}
	return s, nil
}
