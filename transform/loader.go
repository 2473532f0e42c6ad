package transform

import (
	"context"
	"database/sql"
	"fmt"
	"log/slog"

	"recon/extract"
)

// deleteQuarantineSQL drops the quarantine rows of the slices a reload replaces.
const deleteQuarantineSQL = `DELETE FROM quarantine WHERE source = $source
	AND account IS NOT DISTINCT FROM $account AND window_from >= $from AND window_to <= $to`

// Loader loads the raw files of one extract folder into DuckDB.
type Loader struct {
	db    *sql.DB
	dir   string
	runID string
	log   *slog.Logger
}

// NewLoader returns a loader of the raw files under dir, recording runID as
// the run that loaded them.
func NewLoader(db *sql.DB, dir, runID string, log *slog.Logger) *Loader {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	return &Loader{db: db, dir: dir, runID: runID, log: log}
}

// FileStats counts what one raw file (or statement slice) gave.
type FileStats struct {
	File        extract.RawFile
	Rows        int64
	Quarantined int64
}

// Stats counts what a load gave, file by file.
type Stats struct{ Files []FileStats }

// Rows returns the rows loaded from a source.
func (s Stats) Rows(source string) int64 {
	var n int64
	for _, f := range s.Files {
		if f.File.Source == source {
			n += f.Rows
		}
	}
	return n
}

// Quarantined returns the rows quarantined over all sources.
func (s Stats) Quarantined() int64 {
	var n int64
	for _, f := range s.Files {
		n += f.Quarantined
	}
	return n
}

// Load loads files in order; each report, and each statement slice (account
// and window, all its pages), replaces its slice in one transaction.
func (l *Loader) Load(ctx context.Context, files []extract.RawFile) (Stats, error) {
	conn, err := l.db.Conn(ctx)
	if err != nil {
		return Stats{}, fmt.Errorf("load: %w", err)
	}
	defer conn.Close()
	var st Stats
	trace := traceOf(ctx)
	trace.started(len(files))
	for i := 0; i < len(files); i++ {
		f, first := files[i], i
		var fs FileStats
		if t, ok := TableFor(f.Source); ok {
			fs, err = l.loadReport(ctx, conn, t, f)
		} else if f.Source == extract.SourceStatement {
			j := i + 1
			for j < len(files) && files[j].Source == f.Source && files[j].Account == f.Account && files[j].Window == f.Window {
				j++
			}
			fs, err = l.loadStatement(ctx, conn, files[i:j])
			i = j - 1
		} else {
			err = fmt.Errorf("unknown source %q", f.Source)
		}
		if err != nil {
			return st, fmt.Errorf("load %s: %w", f.Path, err)
		}
		l.log.Info("loaded", "source", f.Source, "file", f.Path, "rows", fs.Rows, "quarantined", fs.Quarantined)
		st.Files = append(st.Files, fs)
		trace.loaded(fs, i+1-first)
	}
	return st, nil
}
