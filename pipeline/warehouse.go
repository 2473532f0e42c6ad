package pipeline

import (
	"context"
	"crypto/rand"
	"database/sql"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"

	reconsql "recon/sql"
)

// Warehouse is a working copy of the published DuckDB file. A run writes
// only to its copy, <published>.work-<pid>-<random>; Publish checkpoints it,
// syncs it to disk and renames it over the published file. Readers of the
// published file (read-only) keep the version they opened and never see a
// half-loaded run; a run that fails or is killed leaves the published file
// as it was, and its copy is removed by the next run.
type Warehouse struct {
	DB        *sql.DB
	published string
	work      string
	schema    int   // the schema version after Migrate
	found     *seal // the published file's seal, if it held when copied
	sealAs    string
}

// sealSuffix names the file beside the published database that seals it:
// the state its tables hold is the end state its run stored in the state
// cache for an archive (output.SaveEndState), not read since. It names the
// file by size and modification time; any other write to the file, a
// schema migration, or a publish without a seal breaks it, and the next
// run reads the tables to fingerprint them (docs/archive.md).
const sealSuffix = ".state-seal"

type seal struct {
	Archive  string `json:"archive"`
	Size     int64  `json:"size"`
	ModNanos int64  `json:"mtime_ns"`
	Schema   int    `json:"schema_version"`
}

// readSeal is the seal of the published file if it names the file as it
// is: nil when it is missing, unreadable or names another file.
func readSeal(published string) *seal {
	b, err := os.ReadFile(published + sealSuffix)
	if err != nil {
		return nil
	}
	var s seal
	if json.Unmarshal(b, &s) != nil || !s.names(published) {
		return nil
	}
	return &s
}

// names reports whether the published file has the size and modification
// time the seal was written for.
func (s *seal) names(published string) bool {
	fi, err := os.Stat(published)
	return err == nil && fi.Size() == s.Size && fi.ModTime().UnixNano() == s.ModNanos
}

// Sealed reports whether the state in the working copy is the end state
// the state cache describes for archive: the published file was sealed
// for it and unchanged while copied, and no migration ran since.
func (w *Warehouse) Sealed(archive string) bool {
	return w.found != nil && w.found.Archive == archive && w.found.Schema == w.schema
}

// SealAs makes Publish seal the file it publishes for archive: call it
// once the end state is stored in the state cache and no table but the
// ledger's changes after.
func (w *Warehouse) SealAs(archive string) { w.sealAs = archive }

// Snapshot is the published file opened read-only for a reader of recon's
// own (the run ledger, metrics, recon runs and breaks): the file itself, or a
// private copy of it while another process holds it open read-write.
type Snapshot struct {
	*sql.DB
	copy string // "" when the published file itself is open
}

// OpenPublished opens the published file read-only. DuckDB refuses even a
// read-only open while another process (an analyst's DuckDB CLI, Python or
// DBeaver, all read-write by default) holds the file; then it copies the file
// beside itself, as a run's working copy, and opens the copy, so an analyst
// never stops a run or a listing. A copy left by a killed reader is removed
// by the next run (it has a working copy's name).
func OpenPublished(published string) (*Snapshot, error) {
	db, err := reconsql.OpenDB(published, true)
	if err == nil {
		return &Snapshot{DB: db}, nil
	}
	if !isLockConflict(err) {
		return nil, err
	}
	work, err := workName(published)
	if err != nil {
		return nil, err
	}
	if err := copyFile(published, work); err != nil {
		os.Remove(work)
		return nil, fmt.Errorf("%s is held open read-write by another process; copy it to read it: %w", published, err)
	}
	if db, err = reconsql.OpenDB(work, true); err != nil {
		removeWork(work)
		return nil, err
	}
	return &Snapshot{DB: db, copy: work}, nil
}

// Close closes the snapshot and removes its copy, if any.
func (s *Snapshot) Close() error {
	err := s.DB.Close()
	if s.copy != "" {
		err = errors.Join(err, removeWork(s.copy))
	}
	return err
}

// isLockConflict recognises DuckDB's refusal to open a file another process
// holds ("IO Error: Could not set lock on file ...: Conflicting lock is held").
func isLockConflict(err error) bool {
	return strings.Contains(err.Error(), "Could not set lock on file")
}

// workName is a new working copy's name: <published>.work-<pid>-<random>.
func workName(published string) (string, error) {
	tag := make([]byte, 4)
	if _, err := rand.Read(tag); err != nil {
		return "", err
	}
	return fmt.Sprintf("%s%s%d-%s", published, workSuffix, os.Getpid(), hex.EncodeToString(tag)), nil
}

// workSuffix starts the name of a working copy, after the published name.
const workSuffix = ".work-"

// OpenWarehouse removes the working copies of runs that died, copies the
// published file (if any) to a new working copy, opens it and brings its
// schema up to date.
func OpenWarehouse(ctx context.Context, published string) (*Warehouse, error) {
	if err := checkNoWAL(published); err != nil {
		return nil, err
	}
	if err := removeStale(published); err != nil {
		return nil, err
	}
	work, err := workName(published)
	if err != nil {
		return nil, err
	}
	w := &Warehouse{published: published, work: work, found: readSeal(published)}
	if err := copyFile(published, w.work); err != nil && !errors.Is(err, fs.ErrNotExist) {
		os.Remove(w.work)
		return nil, fmt.Errorf("copy %s to a working file: %w", published, err)
	}
	if w.found != nil && !w.found.names(published) { // written while copied
		w.found = nil
	}
	db, err := reconsql.OpenDB(w.work, false)
	if err != nil {
		removeWork(w.work)
		return nil, err
	}
	w.DB = db
	if w.schema, err = reconsql.Migrate(ctx, db); err != nil {
		w.Discard()
		return nil, fmt.Errorf("migrate %s: %w", published, err)
	}
	return w, nil
}

// Publish checkpoints and closes the working copy, syncs it, and renames it
// over the published file; the rename is atomic, and the folder is synced
// so the new name survives a crash. The published file's seal is removed
// first, and written again for the new file if SealAs asked for it.
func (w *Warehouse) Publish(ctx context.Context) error {
	if _, err := w.DB.ExecContext(ctx, "CHECKPOINT"); err != nil {
		return fmt.Errorf("checkpoint: %w", err)
	}
	if err := w.DB.Close(); err != nil {
		return fmt.Errorf("close working file: %w", err)
	}
	if _, err := os.Stat(w.work + ".wal"); err == nil {
		return fmt.Errorf("working file %s still has a write-ahead log after its checkpoint", w.work)
	}
	if err := syncFile(w.work); err != nil {
		return err
	}
	if err := checkNoWAL(w.published); err != nil {
		return err
	}
	if err := os.Remove(w.published + sealSuffix); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("remove the seal of %s: %w", w.published, err)
	}
	if err := os.Rename(w.work, w.published); err != nil {
		return fmt.Errorf("publish %s: %w", w.published, err)
	}
	if w.sealAs != "" {
		_ = w.writeSeal() // published already: a seal not written costs the next run one read
	}
	return syncFile(filepath.Dir(w.published))
}

// writeSeal seals the published file for w.sealAs. The file is published
// already: a seal not written, or lost in a crash, costs the next run one
// read of the tables, and a torn one is not read, so its error is dropped.
func (w *Warehouse) writeSeal() error {
	fi, err := os.Stat(w.published)
	if err != nil {
		return err
	}
	b, err := json.Marshal(seal{Archive: w.sealAs, Size: fi.Size(), ModNanos: fi.ModTime().UnixNano(), Schema: w.schema})
	if err != nil {
		return err
	}
	tmp := w.published + sealSuffix + ".tmp"
	if err := os.WriteFile(tmp, b, 0o644); err != nil {
		os.Remove(tmp)
		return err
	}
	return os.Rename(tmp, w.published+sealSuffix)
}

// Discard closes and removes the working copy; the published file is untouched.
func (w *Warehouse) Discard() {
	w.DB.Close()
	removeWork(w.work)
}

// checkNoWAL refuses a published file with a write-ahead log beside it:
// recon never writes the published file, so something opened it read-write
// and wrote to it. Copying it would lose those writes, and replacing it would
// leave a log that DuckDB would replay onto the new file.
func checkNoWAL(published string) error {
	if _, err := os.Stat(published + ".wal"); err == nil {
		return fmt.Errorf("%s.wal exists: %s was opened read-write and written to (open it with duckdb -readonly); "+
			"checkpoint it (duckdb %s 'CHECKPOINT') or remove the .wal, then run again", published, published, published)
	}
	return nil
}

// removeStale removes the working copies (with their .wal and .tmp) left
// by runs whose process is gone.
func removeStale(published string) error {
	dir, base := filepath.Split(published)
	entries, err := os.ReadDir(filepath.Clean(dir + "."))
	if err != nil {
		return fmt.Errorf("look for stale working files: %w", err)
	}
	seen := map[string]bool{}
	for _, e := range entries {
		rest, ok := strings.CutPrefix(e.Name(), base+workSuffix)
		if !ok {
			continue
		}
		rest = strings.TrimSuffix(strings.TrimSuffix(rest, ".wal"), ".tmp")
		pidText, _, _ := strings.Cut(rest, "-")
		pid, err := strconv.Atoi(pidText)
		if err != nil || seen[rest] || alive(pid) {
			continue
		}
		seen[rest] = true
		if err := removeWork(published + workSuffix + rest); err != nil {
			return fmt.Errorf("remove stale working file: %w", err)
		}
	}
	return nil
}

// removeWork removes a working copy with its write-ahead log and temporary folder.
func removeWork(work string) error {
	var errs []error
	for _, p := range []string{work, work + ".wal", work + ".tmp"} {
		if err := os.RemoveAll(p); err != nil {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

// alive reports whether a process with this id exists (on this host).
func alive(pid int) bool {
	if pid == os.Getpid() {
		return true
	}
	p, err := os.FindProcess(pid)
	if err != nil {
		return false
	}
	err = p.Signal(syscall.Signal(0))
	return err == nil || errors.Is(err, syscall.EPERM)
}

func copyFile(from, to string) error {
	src, err := os.Open(from)
	if err != nil {
		return err
	}
	defer src.Close()
	dst, err := os.OpenFile(to, os.O_CREATE|os.O_EXCL|os.O_WRONLY, 0o644)
	if err != nil {
		return err
	}
	if _, err := io.Copy(dst, src); err != nil {
		dst.Close()
		return err
	}
	return dst.Close()
}

func syncFile(path string) error {
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	defer f.Close()
	if err := f.Sync(); err != nil {
		return fmt.Errorf("sync %s: %w", path, err)
	}
	return nil
}
