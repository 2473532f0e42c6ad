package pipeline_test

import (
	"context"
	"errors"
	"io/fs"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/google/go-cmp/cmp"

	"recon/extract"
	"recon/extract/raw"
	"recon/output"
	"recon/pipeline"
)

// TestStopBeforePublishing cancels a run while it downloads: the run ends
// with an error and the database and archive are byte for byte as before.
func TestStopBeforePublishing(t *testing.T) {
	// Once hang is set, downloads hang until the client gives up; the first one cancels the run.
	var hang atomic.Bool
	ctx, cancel := context.WithCancel(context.Background())
	e := newEnvFor(t, envSandbox(2), func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(rw http.ResponseWriter, r *http.Request) {
			if hang.Load() && strings.HasPrefix(r.URL.Path, extract.PathReportDownload) {
				cancel()
				<-r.Context().Done()
				return
			}
			next.ServeHTTP(rw, r)
		})
	})
	w, _ := raw.NewWindow(day0, day0.AddDate(0, 0, 1))
	e.run(t, w)
	before := tree(t, filepath.Dir(e.cfg.DB), "work")

	hang.Store(true)
	_, err := pipeline.Run(ctx, e.cfg, w)
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("stopped run: %v, want context.Canceled", err)
	}
	if diff := cmp.Diff(before, tree(t, filepath.Dir(e.cfg.DB), "work")); diff != "" {
		t.Errorf("database or archive changed (-before +after):\n%s", diff)
	}
}

// tree returns the sha256 of every file under dir but the skipped folder and lock files.
func tree(t *testing.T, dir, skip string) map[string]string {
	t.Helper()
	out := map[string]string{}
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		if d.IsDir() {
			if rel == skip {
				return filepath.SkipDir
			}
			return nil
		}
		if strings.HasSuffix(rel, ".lock") {
			return nil
		}
		b, err := os.ReadFile(p)
		out[rel] = output.SHA256(b)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(out) < 3 {
		t.Fatalf("only %d files under %s", len(out), dir)
	}
	return out
}
