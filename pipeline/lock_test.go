package pipeline_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"recon/extract/raw"
	"recon/pipeline"
)

func TestTryLock(t *testing.T) {
	path := filepath.Join(t.TempDir(), "recon.duckdb.lock")
	since := time.Date(2026, 10, 5, 0, 30, 0, 0, time.UTC)
	first, err := pipeline.TryLock(path, "recon run --from 2026-10-01 --to 2026-10-04", since)
	if err != nil {
		t.Fatal(err)
	}
	_, err = pipeline.TryLock(path, "recon schedule", since.Add(time.Hour))
	var le *pipeline.LockError
	if !errors.Is(err, pipeline.ErrLocked) || !errors.As(err, &le) {
		t.Fatalf("second TryLock: %v, want a *LockError", err)
	}
	host, _ := os.Hostname()
	for _, want := range []string{path, "pid " + strconv.Itoa(os.Getpid()), host, "2026-10-05T00:30:00Z", "recon run --from 2026-10-01 --to 2026-10-04"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("%q does not name %q", err, want)
		}
	}
	if err := first.Release(); err != nil {
		t.Fatal(err)
	}
	second, err := pipeline.TryLock(path, "recon schedule", since)
	if err != nil {
		t.Fatalf("after release: %v", err)
	}
	defer second.Release()

	// A holder whose details cannot be read is still a holder.
	if err := os.WriteFile(path, []byte("{half"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := pipeline.TryLock(path, "x", since); !errors.Is(err, pipeline.ErrLocked) || !strings.Contains(err.Error(), "unreadable") {
		t.Errorf("garbled holder: %v", err)
	}
}

// TestRunFailsFastWhenLocked: a second writer stops before any request and
// names the holder.
func TestRunFailsFastWhenLocked(t *testing.T) {
	e := newEnv(t, 1)
	held, err := pipeline.TryLock(pipeline.WriterLockPath(e.cfg.DB), "recon run (the first writer)", now)
	if err != nil {
		t.Fatal(err)
	}
	defer held.Release()
	w, _ := raw.NewWindow(day0, day0)
	_, err = pipeline.Run(context.Background(), e.cfg, w)
	if !errors.Is(err, pipeline.ErrLocked) || !strings.Contains(err.Error(), "recon run (the first writer)") {
		t.Fatalf("Run: %v, want the holder named", err)
	}
	if n := total(e.sb.Requests()); n != 0 {
		t.Errorf("%d requests made", n)
	}
	if _, err := os.Stat(e.cfg.DB); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("database written: %v", err)
	}
}

func total(m map[string]int) int {
	n := 0
	for _, v := range m {
		n += v
	}
	return n
}

// TestArchiveRunFailsFastWhenLocked: completing an archive rewrites the
// published file, so it waits for no one either.
func TestArchiveRunFailsFastWhenLocked(t *testing.T) {
	e := newEnv(t, 1)
	held, err := pipeline.TryLock(pipeline.WriterLockPath(e.cfg.DB), "recon run (the first writer)", now)
	if err != nil {
		t.Fatal(err)
	}
	defer held.Release()
	if _, err := pipeline.ArchiveRun(context.Background(), e.cfg, "r-20261012T060000Z"); !errors.Is(err, pipeline.ErrLocked) {
		t.Fatalf("ArchiveRun: %v, want ErrLocked", err)
	}
}
