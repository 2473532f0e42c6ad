package output

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"time"

	"recon/extract/raw"

	"golang.org/x/sync/errgroup"
)

// ManifestName is written last: a run exists in the archive once it is there.
const ManifestName = "manifest.json"

// uploads is how many files Archive sends at once.
const uploads = 8

// ErrMismatch is returned (wrapped) by Fetch when an archived file differs
// from its manifest entry.
var ErrMismatch = errors.New("differs from the manifest")

// Manifest lists every file of an archived run with its size, sha256 and
// data rows, and the run's metadata (rules with the hash of each file, tool version).
//
// State lists the slices of the warehouse state the run started from
// (SaveInputs): each entry's path is where the slice goes in the run folder
// (inputs/state/<table>/<position>.parquet) and its bytes are the shared
// object ObjectKey(sha256). Layout 2 marks a manifest with State; a run
// archived before (layout 0) has its state among Files, one Parquet file
// per table.
type Manifest struct {
	Layout int     `json:"layout,omitempty"`
	Run    RunInfo `json:"run"`
	Files  []File  `json:"files"`
	State  []File  `json:"state,omitempty"`
}

// ArchiveLayout is the layout of the run folders Upload writes: 2 stores
// the state as shared, content-addressed slices.
const ArchiveLayout = 2

// File returns the manifest entry of path.
func (m Manifest) File(path string) (File, bool) {
	for _, f := range m.Files {
		if f.Path == path {
			return f, true
		}
	}
	return File{}, false
}

// Size is the total size of the run's files and state slices, manifest excluded.
func (m Manifest) Size() int64 {
	var n int64
	for _, f := range slices.Concat(m.Files, m.State) {
		n += f.Size
	}
	return n
}

// RunPrefix is the run's folder in the archive: run_date=YYYY-MM-DD/run_id=ID/.
func RunPrefix(runID string, started time.Time) string {
	return fmt.Sprintf("run_date=%s/run_id=%s/", started.UTC().Format("2006-01-02"), runID)
}

// Rows are the data rows of files of a run folder (docs/archive.md), by
// path in the folder, that the caller counted as it read them (the loader:
// the raw files); nil for a file that has none. Upload counts the other files.
type Rows map[string]*int64

// Archive uploads every file under dir (the run's reports and inputs) to the
// run's folder in store, then manifest.json: Upload, then Commit. Files
// already in the store with the same sha256 are not sent again, so archiving
// a run twice, or again after a failure, is safe; the manifest is only
// written once every file is there.
func Archive(ctx context.Context, store Store, run RunInfo, dir string, rows Rows) (Manifest, error) {
	m, err := Upload(ctx, store, run, dir, rows)
	if err != nil {
		return m, err
	}
	return m, Commit(ctx, store, m)
}

// Upload sends every file under dir to the run's folder in store and returns
// the run's manifest, unwritten: until Commit writes it, the folder is not a
// run. A run publishes its database between the two, so an archived run is
// always a published one. rows gives the data rows of the files it holds.
func Upload(ctx context.Context, store Store, run RunInfo, dir string, rows Rows) (Manifest, error) {
	m := Manifest{Layout: ArchiveLayout, Run: run.normalised()}
	var rels []string
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		rel, err := filepath.Rel(dir, p)
		if err != nil {
			return err
		}
		if rel = filepath.ToSlash(rel); rel != ManifestName && rel != StateRefsName && !strings.HasPrefix(rel, BeforeDir+"/") && !strings.HasPrefix(rel, EndDir+"/") {
			rels = append(rels, rel)
		}
		return nil
	})
	if err != nil {
		return m, fmt.Errorf("upload run %s: %w", run.ID, err)
	}
	known, err := rawSums(dir)
	if err != nil {
		return m, fmt.Errorf("upload run %s: %w", run.ID, err)
	}
	// State slices taken from the state cache: their objects are in the
	// store (SaveInputs checked), most of them are not even written here.
	refs, err := readStateRefs(dir)
	if err != nil {
		return m, fmt.Errorf("upload run %s: %w", run.ID, err)
	}
	stored := map[string]bool{}
	for _, r := range refs {
		if r.SHA256 != "" {
			rows := r.Rows
			m.State = append(m.State, File{Path: r.Path, Size: r.Size, SHA256: r.SHA256, Rows: &rows})
			stored[r.Path] = true
		}
	}
	rels = slices.DeleteFunc(rels, func(rel string) bool { return stored[rel] })
	described, err := describeFiles(ctx, dir, rels, known, rows)
	if err != nil {
		return m, fmt.Errorf("upload run %s: %w", run.ID, err)
	}
	for _, f := range described {
		if stateSlice.MatchString(f.Path) {
			m.State = append(m.State, f)
		} else {
			m.Files = append(m.Files, f)
		}
	}
	slices.SortFunc(m.State, func(a, b File) int { return strings.Compare(a.Path, b.Path) })
	b, err := m.encode()
	if err != nil {
		return m, err
	}
	prefix := RunPrefix(run.ID, run.StartedAt)
	if done, err := committed(ctx, store, prefix, b); err != nil {
		return m, fmt.Errorf("upload run %s: %w", run.ID, err)
	} else if done {
		return m, nil // archived before
	}
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(uploads)
	for _, f := range m.Files {
		g.Go(func() error {
			return putFile(gctx, store, prefix+f.Path, filepath.Join(dir, filepath.FromSlash(f.Path)), f)
		})
	}
	putObjects(gctx, g, store, dir, slices.DeleteFunc(slices.Clone(m.State), func(f File) bool { return stored[f.Path] }))
	if err := g.Wait(); err != nil {
		return m, fmt.Errorf("upload run %s: %w", run.ID, err)
	}
	if err := syncStore(ctx, store); err != nil {
		return m, fmt.Errorf("upload run %s: %w", run.ID, err)
	}
	return m, nil
}

// describeFiles gives the size, sha256 and rows of the files rels of dir:
// those of known when the size still matches, else hashed; rows from rows,
// else counted. Hashing and counting are CPU work: one file per core at a time.
func describeFiles(ctx context.Context, dir string, rels []string, known map[string]File, rows Rows) ([]File, error) {
	described := make([]File, len(rels))
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(runtime.GOMAXPROCS(0))
	for i, rel := range rels {
		g.Go(func() error {
			if err := gctx.Err(); err != nil {
				return err
			}
			f, ok := known[rel]
			if !ok || !sameSize(dir, rel, f.Size) {
				var err error
				if f, err = describe(dir, rel); err != nil {
					return err
				}
			}
			var err error
			if n, ok := rows[rel]; ok {
				f.Rows = n
			} else if f.Rows, err = countRows(filepath.Join(dir, filepath.FromSlash(rel))); err != nil {
				return fmt.Errorf("count rows of %s: %w", rel, err)
			}
			described[i] = f
			return nil
		})
	}
	return described, g.Wait()
}

// putObjects sends the state slices state, files of dir, to their objects
// in g: a slice another run already stored is not sent again (Has: a HEAD
// request on S3); two slices with the same bytes are sent once.
func putObjects(ctx context.Context, g *errgroup.Group, store Store, dir string, state []File) {
	sent := map[string]bool{}
	for _, f := range state {
		if sent[f.SHA256] {
			continue
		}
		sent[f.SHA256] = true
		g.Go(func() error {
			return putFile(ctx, store, ObjectKey(f.SHA256), filepath.Join(dir, filepath.FromSlash(f.Path)), f)
		})
	}
}

// WriteBack starts flushing, in the background, the file system that holds
// dir, when store takes local files as they are and syncs them before its
// manifest (a DirStore): the raw files, written by the extract, are then
// written back while the load works, not waited for in the archive's sync.
// An error is left to that sync to report. wait returns once the flush has.
func WriteBack(store Store, dir string) (wait func()) {
	if _, ok := store.(fileStore); !ok {
		return func() {}
	}
	done := make(chan struct{})
	go func() {
		defer close(done)
		_ = syncAll(dir)
	}()
	return func() { <-done }
}

// syncStore makes what a local store took durable before a manifest (or a
// state cache entry) refers to it.
func syncStore(ctx context.Context, store Store) error {
	if fs, ok := store.(fileStore); ok {
		return fs.Sync(ctx)
	}
	return nil
}

// Commit writes the manifest of a run whose files Upload sent: from then on
// the run exists in the archive. It is safe to repeat.
func Commit(ctx context.Context, store Store, m Manifest) error {
	b, err := m.encode()
	if err != nil {
		return err
	}
	prefix := RunPrefix(m.Run.ID, m.Run.StartedAt)
	if done, err := committed(ctx, store, prefix, b); err != nil {
		return fmt.Errorf("upload run %s: manifest: %w", m.Run.ID, err)
	} else if done {
		return nil
	}
	if err := store.Put(ctx, prefix+ManifestName, bytes.NewReader(b), int64(len(b)), SHA256(b)); err != nil {
		return fmt.Errorf("upload run %s: manifest: %w", m.Run.ID, err)
	}
	return nil
}

// committed reports whether the run folder prefix already holds the manifest
// b; a different manifest there is an error: an archived run is never overwritten.
func committed(ctx context.Context, store Store, prefix string, b []byte) (bool, error) {
	old, err := getAll(ctx, store, prefix+ManifestName)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return false, nil
	case err != nil:
		return false, fmt.Errorf("read %s%s: %w", prefix, ManifestName, err)
	case !bytes.Equal(old, b):
		return false, fmt.Errorf("%s%s holds a different manifest; an archived run is never overwritten", prefix, ManifestName)
	}
	return true, nil
}

func (m Manifest) encode() ([]byte, error) {
	b, err := json.MarshalIndent(m, "", "  ")
	return append(b, '\n'), err
}

// fileStore is a store that takes a local file as it is (DirStore links it)
// and syncs what it took before the manifest is written.
type fileStore interface {
	PutFile(ctx context.Context, key, path string, size int64, sum string) error
	Sync(ctx context.Context) error
}

func putFile(ctx context.Context, store Store, key, path string, f File) error {
	if ok, err := store.Has(ctx, key, f.Size, f.SHA256); err != nil || ok {
		return err
	}
	if fs, ok := store.(fileStore); ok {
		return fs.PutFile(ctx, key, path, f.Size, f.SHA256)
	}
	r, err := os.Open(path)
	if err != nil {
		return err
	}
	defer r.Close()
	return store.Put(ctx, key, r, f.Size, f.SHA256)
}

func getAll(ctx context.Context, store Store, key string) ([]byte, error) {
	r, err := store.Get(ctx, key)
	if err != nil {
		return nil, err
	}
	defer r.Close()
	return io.ReadAll(r)
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

// RunIDLayout is the form of run ids (pipeline.RunID), and so of run
// folders' names: the UTC start time.
const RunIDLayout = "r-20060102T150405Z"

// FindRun returns the folder and manifest of an archived run. A run without
// a manifest is not archived, whatever else its folder holds.
func FindRun(ctx context.Context, store Store, runID string) (string, Manifest, error) {
	if t, err := time.Parse(RunIDLayout, runID); err == nil {
		prefix := RunPrefix(runID, t)
		m, err := ReadManifest(ctx, store, prefix)
		if err == nil {
			return prefix, m, nil
		}
		if !errors.Is(err, fs.ErrNotExist) {
			return "", m, err
		}
	}
	keys, err := store.List(ctx, "run_date=")
	if err != nil {
		return "", Manifest{}, err
	}
	suffix := "/run_id=" + runID + "/" + ManifestName
	for _, k := range keys {
		if strings.HasSuffix(k, suffix) {
			prefix := strings.TrimSuffix(k, ManifestName)
			m, err := ReadManifest(ctx, store, prefix)
			return prefix, m, err
		}
	}
	return "", Manifest{}, fmt.Errorf("run %s has no manifest in %s: %w", runID, store.URL(), fs.ErrNotExist)
}

// Fetch downloads the files of an archived run whose path starts with one of
// prefixes (all files when none is given) into dir, checking each against
// the manifest; a file that differs gives an error wrapping ErrMismatch.
func Fetch(ctx context.Context, store Store, runPrefix string, m Manifest, dir string, prefixes ...string) error {
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(uploads)
	for _, f := range m.Files {
		if !hasAnyPrefix(f.Path, prefixes) {
			continue
		}
		g.Go(func() error { return fetchFile(gctx, store, runPrefix+f.Path, dir, f) })
	}
	for _, f := range m.State {
		if !hasAnyPrefix(f.Path, prefixes) {
			continue
		}
		if !stateSlice.MatchString(f.Path) || len(f.SHA256) != 64 {
			return fmt.Errorf("manifest state entry %q (sha256 %q) is not a state slice", f.Path, f.SHA256)
		}
		g.Go(func() error { return fetchFile(gctx, store, ObjectKey(f.SHA256), dir, f) })
	}
	return g.Wait()
}

func hasAnyPrefix(s string, prefixes []string) bool {
	for _, p := range prefixes {
		if strings.HasPrefix(s, p) {
			return true
		}
	}
	return len(prefixes) == 0
}

func fetchFile(ctx context.Context, store Store, key, dir string, f File) error {
	local := filepath.Join(dir, filepath.FromSlash(f.Path))
	if !filepath.IsLocal(filepath.FromSlash(f.Path)) {
		return fmt.Errorf("manifest path %q leaves the run folder", f.Path)
	}
	if err := os.MkdirAll(filepath.Dir(local), 0o755); err != nil {
		return err
	}
	r, err := store.Get(ctx, key)
	if err != nil {
		return err
	}
	defer r.Close()
	out, err := os.Create(local)
	if err != nil {
		return err
	}
	h := sha256.New()
	n, err := io.Copy(io.MultiWriter(out, h), r)
	if cerr := out.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("fetch %s: %w", key, err)
	}
	if got := hex.EncodeToString(h.Sum(nil)); got != f.SHA256 || n != f.Size {
		return fmt.Errorf("%s: %d bytes with sha256 %s, manifest says %d bytes, %s: %w", f.Path, n, got, f.Size, f.SHA256, ErrMismatch)
	}
	return nil
}

// rawSums are the size and sha256 extraction recorded for each raw file of
// the run folder dir (inputs/index.json), by path in the folder: Upload
// takes them instead of hashing the files again when the size still
// matches. None when the folder has no index.
func rawSums(dir string) (map[string]File, error) {
	files, err := raw.ReadIndex(filepath.Join(dir, InputsDir))
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	out := map[string]File{}
	for _, f := range files {
		if f.Path != "" && len(f.SHA256) == 64 {
			p := path.Join(InputsDir, f.Path)
			out[p] = File{Path: p, Size: f.Size, SHA256: f.SHA256}
		}
	}
	return out, nil
}

// sameSize reports whether the file rel of dir has size bytes.
func sameSize(dir, rel string, size int64) bool {
	st, err := os.Stat(filepath.Join(dir, filepath.FromSlash(rel)))
	return err == nil && st.Size() == size
}

// SHA256 returns the hex sha256 of b.
func SHA256(b []byte) string {
	s := sha256.Sum256(b)
	return hex.EncodeToString(s[:])
}
