package output

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"time"
)

// ManifestName is written last: a run exists in the archive once it is there.
const ManifestName = "manifest.json"

// Manifest lists every file of an archived run with its size and sha256.
type Manifest struct {
	Run   RunInfo `json:"run"`
	Files []File  `json:"files"`
}

// RunPrefix is the run's folder in the archive: run_date=YYYY-MM-DD/run_id=ID/.
func RunPrefix(runID string, started time.Time) string {
	return fmt.Sprintf("run_date=%s/run_id=%s/", started.UTC().Format("2006-01-02"), runID)
}

// Archive uploads every file under dir to the run's folder in store, then
// the manifest. rows gives the data rows of tabular files, by relative path.
func Archive(ctx context.Context, store Store, run RunInfo, dir string, rows map[string]int64) (Manifest, error) {
	m := Manifest{Run: run}
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		rel, err := filepath.Rel(dir, p)
		if err != nil {
			return err
		}
		rel = filepath.ToSlash(rel)
		if rel == ManifestName {
			return nil
		}
		f, err := describe(dir, rel)
		if err != nil {
			return err
		}
		if n, ok := rows[rel]; ok {
			f.Rows = &n
		}
		m.Files = append(m.Files, f)
		return nil
	})
	if err != nil {
		return m, fmt.Errorf("archive %s: %w", run.ID, err)
	}
	prefix := RunPrefix(run.ID, run.StartedAt)
	for _, f := range m.Files {
		if err := putFile(ctx, store, prefix+f.Path, filepath.Join(dir, filepath.FromSlash(f.Path))); err != nil {
			return m, fmt.Errorf("archive %s: %w", run.ID, err)
		}
	}
	b, err := json.MarshalIndent(m, "", "  ")
	if err != nil {
		return m, err
	}
	if err := store.Put(ctx, prefix+ManifestName, bytes.NewReader(append(b, '\n'))); err != nil {
		return m, fmt.Errorf("archive %s: manifest: %w", run.ID, err)
	}
	return m, nil
}

func putFile(ctx context.Context, store Store, key, path string) error {
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	defer f.Close()
	return store.Put(ctx, key, f)
}

// ReadManifest reads the manifest of the run folder prefix.
func ReadManifest(ctx context.Context, store Store, prefix string) (Manifest, error) {
	var m Manifest
	r, err := store.Get(ctx, strings.TrimSuffix(prefix, "/")+"/"+ManifestName)
	if err != nil {
		return m, err
	}
	defer r.Close()
	if err := json.NewDecoder(r).Decode(&m); err != nil {
		return m, fmt.Errorf("read manifest of %s: %w", prefix, err)
	}
	return m, nil
}

// SHA256 returns the hex sha256 of b.
func SHA256(b []byte) string {
	s := sha256.Sum256(b)
	return hex.EncodeToString(s[:])
}
