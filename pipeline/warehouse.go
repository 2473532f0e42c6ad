package pipeline

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"

	duckdb "github.com/duckdb/duckdb-go/v2"

	reconsql "recon/sql"
)

// Warehouse is a working copy of the published DuckDB file. A run writes
// only to the copy; Publish renames it over the published file, so readers
// never see a half-loaded run and a crash leaves the published file as it was.
type Warehouse struct {
	DB        *sql.DB
	published string
	work      string
}

// OpenDB opens a DuckDB file with recon's session settings (UTC).
func OpenDB(path string, readOnly bool) (*sql.DB, error) {
	dsn := path
	if readOnly {
		dsn += "?access_mode=read_only"
	}
	c, err := duckdb.NewConnector(dsn, func(e driver.ExecerContext) error {
		_, err := e.ExecContext(context.Background(), "SET TimeZone = 'UTC'", nil)
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("open %s: %w", path, err)
	}
	return sql.OpenDB(c), nil
}

// OpenWarehouse copies the published file (if any) to a working file, opens
// it and brings its schema up to date.
func OpenWarehouse(ctx context.Context, published string) (*Warehouse, error) {
	w := &Warehouse{published: published, work: published + ".work"}
	for _, p := range []string{w.work, w.work + ".wal"} {
		if err := os.Remove(p); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return nil, fmt.Errorf("remove stale working file: %w", err)
		}
	}
	if err := copyFile(published, w.work); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("copy %s to a working file: %w", published, err)
	}
	db, err := OpenDB(w.work, false)
	if err != nil {
		return nil, err
	}
	w.DB = db
	if _, err := reconsql.Migrate(ctx, db); err != nil {
		w.Discard()
		return nil, fmt.Errorf("migrate %s: %w", published, err)
	}
	return w, nil
}

// Publish checkpoints and closes the working file and renames it over the
// published one.
func (w *Warehouse) Publish(ctx context.Context) error {
	if _, err := w.DB.ExecContext(ctx, "CHECKPOINT"); err != nil {
		return fmt.Errorf("checkpoint: %w", err)
	}
	if err := w.DB.Close(); err != nil {
		return fmt.Errorf("close working file: %w", err)
	}
	if err := syncFile(w.work); err != nil {
		return err
	}
	if err := os.Rename(w.work, w.published); err != nil {
		return fmt.Errorf("publish %s: %w", w.published, err)
	}
	return syncFile(filepath.Dir(w.published))
}

// Discard closes and removes the working file; the published file is untouched.
func (w *Warehouse) Discard() {
	w.DB.Close()
	os.Remove(w.work)
	os.Remove(w.work + ".wal")
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
