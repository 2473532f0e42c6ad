package transform

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"log/slog"
	"path/filepath"
	"slices"
	"strings"

	"recon/extract/raw"
	reconsql "recon/sql"
)

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

// FileStats counts what one raw file gave.
type FileStats struct {
	File        *raw.File // in the files given to Load
	Rows        int64     // rows loaded (a liquidation counts its trades and executions)
	Quarantined int64     // rows sent to quarantine
	Changes     int64     // report_changes recorded: values a newer generation of a report changed
	// Items are the items of a list page whose rows are not its items (a
	// liquidation list page: trades count, summaries and repeats do not); nil otherwise.
	Items *int64
}

// Records is the file's data rows as the archive manifest counts them
// (docs/archive.md): the records of a report, the items of a page, each
// loaded or quarantined, or its Items; false for a file that is not a list
// (a liquidation, a balances snapshot), which has no row count there.
func (f FileStats) Records() (int64, bool) {
	if f.Items != nil {
		return *f.Items, true
	}
	if src, ok := SourceOf(f.File.Source); !ok || src.Document != nil && src.Document(f.File) {
		return 0, false
	}
	return f.Rows + f.Quarantined, true
}

// Stats counts what a load gave, file by file, and the slices it skipped
// because a file of theirs cannot be read.
type Stats struct {
	Files      []FileStats
	Unreadable []Unreadable
}

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

// Changes returns the report_changes rows recorded.
func (s Stats) Changes() int64 {
	var n int64
	for _, f := range s.Files {
		n += f.Changes
	}
	return n
}

// Load loads files in order of first appearance, one slice at a time: each
// report; each statement (account and window, all its pages); each balances
// snapshot; and all liquidations, payments, transfers and fees, replaced by
// key. Every slice is replaced inside one transaction, so a load that fails
// part way leaves each slice either as it was or wholly replaced. A slice
// with a file that cannot be read at all (ErrUnreadable) stays as it was and
// is listed in Stats.Unreadable; the load goes on with the next. Last, the
// values of open lists that the run's rows hold and recon does not know are
// counted in unknown_values.
func (l *Loader) Load(ctx context.Context, files []raw.File) (Stats, error) {
	conn, err := l.db.Conn(ctx)
	if err != nil {
		return Stats{}, fmt.Errorf("load: %w", err)
	}
	defer conn.Close()
	// Loaded rows carry their file and line: their order need not be kept.
	var st Stats
	err = reconsql.Unordered(ctx, conn, func() (err error) {
		st, err = l.load(ctx, conn, files)
		return err
	})
	return st, err
}

// load loads the slices of files on conn, one after another.
func (l *Loader) load(ctx context.Context, conn *sql.Conn, files []raw.File) (Stats, error) {
	var err error
	// A source that was not pulled (a FAILED file that is not a report) has
	// nothing to load: its previous rows stay, and the rules are held there.
	files = slices.DeleteFunc(slices.Clone(files), func(f raw.File) bool {
		src, ok := SourceOf(f.Source)
		return (f.Status == raw.StatusFailed && !(ok && src.Report)) || f.Status == raw.StatusNotConfigured
	})
	var st Stats
	trace := traceOf(ctx)
	trace.started(len(files))
	for _, g := range groups(files) {
		first := g[0]
		var fs []FileStats
		if src, ok := SourceOf(first.Source); ok {
			fs, err = src.Load(l, ctx, conn, g)
		} else {
			err = fmt.Errorf("unknown source %q", first.Source)
		}
		if ue := (*UnreadableError)(nil); errors.As(err, &ue) {
			l.log.Warn("raw file cannot be read: its slice keeps its previous rows", "source", first.Source,
				"file", ue.File, "files", len(g), "err", ue.Reason)
			st.Unreadable = append(st.Unreadable, Unreadable{File: ue.File, Reason: ue.Reason.Error(), Slice: g})
			continue
		}
		if err != nil {
			return st, fmt.Errorf("load %s: %w", first.Path, err)
		}
		var rows, bad, changes int64
		for _, f := range fs {
			l.log.Debug("loaded", "source", f.File.Source, "file", f.File.Path, "rows", f.Rows,
				"quarantined", f.Quarantined, "changes", f.Changes)
			trace.loaded(f, 1)
			rows, bad, changes = rows+f.Rows, bad+f.Quarantined, changes+f.Changes
		}
		l.log.Info("loaded", "source", first.Source, "file", first.Path, "files", len(fs), "rows", rows,
			"quarantined", bad, "changes", changes)
		st.Files = append(st.Files, fs...)
	}
	if err := l.countUnknown(ctx, conn); err != nil {
		return st, fmt.Errorf("load: %w", err)
	}
	return st, nil
}

// groups splits files into the slices Load replaces, in order of first
// appearance. Files of one slice that are already next to each other (as
// Extract lists them) are not copied: a slice is then part of files.
func groups(files []raw.File) [][]raw.File {
	key := func(f *raw.File) string {
		if src, ok := SourceOf(f.Source); ok {
			return src.Slice(f)
		}
		return f.Source + "\x00" + f.Path
	}
	var (
		out   [][]raw.File
		order []string
		at    = map[string]int{} // key -> its slice in out
		runs  = true             // every slice is one run of files
	)
	for i := range files {
		k := key(&files[i])
		j, seen := at[k]
		switch {
		case !seen:
			at[k] = len(out)
			order = append(order, k)
			out = append(out, files[i:i+1:i+1])
		case j == len(out)-1 && runs:
			out[j] = files[i-len(out[j]) : i+1 : i+1]
		default:
			runs = false
		}
	}
	if runs {
		return out
	}
	by := map[string][]raw.File{}
	for i := range files {
		k := key(&files[i])
		by[k] = append(by[k], files[i])
	}
	for i, k := range order {
		out[i] = by[k]
	}
	return out
}

// fileStats counts, per file, the rows a builder loaded and rejected.
func fileStats(files []raw.File, bs ...*builder) []FileStats {
	out := make([]FileStats, len(files))
	for i, f := range files {
		out[i].File = &files[i]
		for _, b := range bs {
			out[i].Rows += b.loaded[f.Path]
			out[i].Quarantined += b.nbad[f.Path]
		}
	}
	return out
}

// path is where a raw file is on disk.
func (l *Loader) path(f raw.File) string {
	return filepath.Join(l.dir, filepath.FromSlash(f.Path))
}

// insertSQL copies the rows of a stage into the table, with their
// provenance; when the table names a Keep order, a key the stage holds twice
// keeps one row.
func insertSQL(t *Table, stage string) string {
	names := make([]string, 0, len(t.Columns)+4)
	exprs := make([]string, 0, len(t.Columns)+4)
	for _, c := range t.Columns {
		names = append(names, c.Name)
		exprs = append(exprs, c.Name)
	}
	if t.Extra {
		names = append(names, "extra")
		exprs = append(exprs, "CAST(extra AS JSON)")
	}
	switch t.Prov {
	case ByReport:
		names = append(names, "report_id", "source_file", "source_line")
		exprs = append(exprs, "$report_id", "_file", "_line")
	case ByRun:
		names = append(names, "source_file", "source_line", "run_id")
		exprs = append(exprs, "_file", "_line", "$run_id")
	}
	q := fmt.Sprintf("INSERT INTO %s (%s) SELECT %s FROM %s", t.Name, strings.Join(names, ", "), strings.Join(exprs, ", "), stage)
	if t.Keep != "" {
		q += fmt.Sprintf(" QUALIFY row_number() OVER (PARTITION BY %s ORDER BY %s) = 1", strings.Join(t.Key, ", "), t.Keep)
	}
	return q
}

// lastRowid is the highest rowid of table t (-1 when empty). Rows appended
// after get higher ones: that tells them from the rows they replace.
func lastRowid(ctx context.Context, tx *sql.Tx, t *Table) (int64, error) {
	var last int64
	err := tx.QueryRowContext(ctx, fmt.Sprintf(`SELECT coalesce(max(rowid), -1) FROM %s`, t.Name)).Scan(&last)
	return last, err
}

// execAll runs statements in a transaction, with the same named arguments.
// An error names the statement that failed by its first words.
func execAll(ctx context.Context, tx *sql.Tx, args []any, stmts ...string) error {
	for _, q := range stmts {
		if _, err := tx.ExecContext(ctx, q, args...); err != nil {
			return fmt.Errorf("%s: %w", statementHead(q), err)
		}
	}
	return nil
}

// statementHead is the start of SQL statement q on one line, for errors.
func statementHead(q string) string {
	words := strings.Fields(q)
	s := strings.Join(words[:min(len(words), 8)], " ")
	if len(words) > 8 {
		s += " …"
	}
	return s
}

// recordFilesSQL moves the rejected rows of the files in stage_files from
// stage_quarantine into quarantine, and writes the files' rows of source_files.
var recordFilesSQL = []string{
	`INSERT INTO quarantine (source, account, window_from, window_to, record_key, source_file,
		report_id, line, path, reason, raw, run_id, payment_id, row_time)
	SELECT f.source, f.account, f.window_from, f.window_to, q.record_key, q._file, f.report_id, q._line, q.path, q.reason,
		q.raw, $run_id, q.payment_id, q.row_time
	FROM stage_quarantine q JOIN stage_files f ON f.source_file = q._file
	ORDER BY f.n, q._line`,
	`INSERT OR REPLACE INTO source_files (run_id, source, source_file, request, sha256, size_bytes, fetched_at, window_from,
		window_to, account, report_id, rows_loaded, rows_quarantined)
	SELECT $run_id, source, source_file, request, sha256, size_bytes, fetched_at, window_from, window_to, account, report_id,
		rows_loaded, rows_quarantined
	FROM stage_files ORDER BY n`,
}

// stageRecord stages the rejected rows and the files of a slice, which
// recordFilesSQL then records inside the slice's transaction.
func stageRecord(ctx context.Context, conn *sql.Conn, bad []quarantined, stats []FileStats) error {
	if err := stageQuarantine(ctx, conn, bad); err != nil {
		return err
	}
	return stageFiles(ctx, conn, stats)
}

// windowArgs are the named arguments of a file's window ($from, $to as days;
// $start, $end as instants); all null when the file has no window.
func windowArgs(f raw.File) []any {
	if f.Window.From.IsZero() {
		return []any{sql.Named("from", nil), sql.Named("to", nil), sql.Named("start", nil), sql.Named("end", nil)}
	}
	w := f.Window
	return []any{sql.Named("from", w.From), sql.Named("to", w.To), sql.Named("start", w.Start()), sql.Named("end", w.End())}
}
