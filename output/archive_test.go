package output_test

import (
	"context"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"recon/extract/raw"
	"recon/output"
)

// runFolder writes a small run folder and returns it with its run.
func runFolder(t *testing.T) (string, output.RunInfo) {
	t.Helper()
	dir := t.TempDir()
	files := map[string]string{
		"breaks.csv":                         "break_id,amount\r\na,-12.5\r\nb,\"multi\r\nline\"\r\n",
		"summary.json":                       "{}\n",
		"inputs/index.json":                  `[{"source":"payment_ops"},{"source":"recon"}]`,
		"inputs/reports/PAYMENT_OPS/r1.json": `[{"a":1},{"a":2},{"a":3}]`,
		"inputs/statements/acct@x/2026-10-01_p0000.json":   `{"account_name":"a","transactions":{"content":[{},{}],"number":0}}`,
		"inputs/payments/2026-10-01_2026-10-02_p0000.json": `{"content":[{}],"totalPages":1}`,
		"inputs/liquidations/l1.json":                      `{"id":"l1","status":"COMPLETED"}`,
		"inputs/rules/ops_missing_in_recon.sql":            "-- id: x\nSELECT 1\n",
		"inputs/reports/RECON/empty.csv":                   "",
		"inputs/reports/FAILURE_CONVERSION_SSA/header.csv": "a,b\n",
	}
	for p, body := range files {
		full := filepath.Join(dir, filepath.FromSlash(p))
		if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(full, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	w, _ := raw.ParseWindow("2026-10-01", "2026-10-02")
	at := time.Date(2026, 10, 3, 6, 0, 0, 0, time.UTC)
	return dir, output.RunInfo{ID: "r-20261003T060000Z", Window: w, AsOf: at, StartedAt: at, Verdict: output.Complete}
}

// recorder is a store that records the objects it stored and can fail one upload.
type recorder struct {
	output.Store
	mu     sync.Mutex
	puts   []string
	failOn string // key whose Put fails
}

func (r *recorder) Put(ctx context.Context, key string, rd io.Reader, size int64, sum string) error {
	if r.failOn != "" && strings.HasSuffix(key, r.failOn) {
		return errors.New("connection refused")
	}
	if err := r.Store.Put(ctx, key, rd, size, sum); err != nil {
		return err
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	r.puts = append(r.puts, key)
	return nil
}

func newRecorder(t *testing.T) *recorder {
	t.Helper()
	st, err := output.NewDirStore(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	return &recorder{Store: st}
}

// loaderRows are the rows the loader counted in the raw files of runFolder:
// the manifest takes them, and counts the other files itself.
func loaderRows() output.Rows {
	two, one := int64(2), int64(1)
	return output.Rows{"inputs/statements/acct@x/2026-10-01_p0000.json": &two,
		"inputs/payments/2026-10-01_2026-10-02_p0000.json": &one, "inputs/liquidations/l1.json": nil}
}

func TestArchiveWritesManifestLast(t *testing.T) {
	dir, run := runFolder(t)
	st := newRecorder(t)
	m, err := output.Archive(t.Context(), st, run, dir, loaderRows())
	if err != nil {
		t.Fatal(err)
	}
	prefix := output.RunPrefix(run.ID, run.StartedAt)
	if prefix != "run_date=2026-10-03/run_id=r-20261003T060000Z/" {
		t.Fatalf("prefix %s", prefix)
	}
	if len(st.puts) != len(m.Files)+1 || st.puts[len(st.puts)-1] != prefix+output.ManifestName {
		t.Fatalf("uploads %v: want %d files, then the manifest", st.puts, len(m.Files))
	}
	rows := map[string]int64{}
	for _, f := range m.Files {
		if f.Rows != nil {
			rows[f.Path] = *f.Rows
		}
	}
	want := map[string]int64{
		"breaks.csv": 2, "inputs/index.json": 2, "inputs/reports/PAYMENT_OPS/r1.json": 3,
		"inputs/statements/acct@x/2026-10-01_p0000.json": 2, "inputs/payments/2026-10-01_2026-10-02_p0000.json": 1,
		"inputs/reports/RECON/empty.csv": 0, "inputs/reports/FAILURE_CONVERSION_SSA/header.csv": 0,
	}
	if diff := cmp.Diff(want, rows); diff != "" {
		t.Errorf("row counts (-want +got):\n%s", diff)
	}
	got, err := output.ReadManifest(t.Context(), st, prefix)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(m, got); diff != "" {
		t.Errorf("manifest read back (-wrote +read):\n%s", diff)
	}
}

// TestArchiveLinksIntoAFolder: a folder archive on the run folder's file
// system takes each file as a hard link, whole and unchanged, and a second
// archive of the run finds everything there.
func TestArchiveLinksIntoAFolder(t *testing.T) {
	dir, run := runFolder(t)
	root := filepath.Join(t.TempDir(), "archive")
	st, err := output.NewDirStore(root)
	if err != nil {
		t.Fatal(err)
	}
	m, err := output.Archive(t.Context(), st, run, dir, nil)
	if err != nil {
		t.Fatal(err)
	}
	prefix := output.RunPrefix(run.ID, run.StartedAt)
	for _, f := range m.Files {
		src, err := os.Stat(filepath.Join(dir, filepath.FromSlash(f.Path)))
		if err != nil {
			t.Fatal(err)
		}
		dst, err := os.Stat(filepath.Join(root, filepath.FromSlash(prefix+f.Path)))
		if err != nil {
			t.Fatal(err)
		}
		if !os.SameFile(src, dst) {
			t.Errorf("%s was copied, not linked", f.Path)
		}
	}
	if err := output.Fetch(t.Context(), st, prefix, m, t.TempDir()); err != nil {
		t.Errorf("archived files differ from the manifest: %v", err)
	}
	if again, err := output.Archive(t.Context(), st, run, dir, nil); err != nil || len(again.Files) != len(m.Files) {
		t.Errorf("archive again: %v", err)
	}
}

// TestArchiveFailureLeavesNoManifest: a failed upload leaves no manifest;
// archiving again sends only what is missing, then the manifest.
func TestArchiveFailureLeavesNoManifest(t *testing.T) {
	dir, run := runFolder(t)
	st := newRecorder(t)
	st.failOn = "inputs/reports/PAYMENT_OPS/r1.json"
	if _, err := output.Archive(t.Context(), st, run, dir, nil); err == nil || !strings.Contains(err.Error(), "connection refused") {
		t.Fatalf("Archive error = %v, want the upload failure", err)
	}
	if _, _, err := output.FindRun(t.Context(), st, run.ID); err == nil {
		t.Fatal("a manifest exists after a failed upload")
	}
	sent := len(st.puts)
	st.failOn, st.puts = "", nil
	m, err := output.Archive(t.Context(), st, run, dir, nil)
	if err != nil {
		t.Fatal(err)
	}
	if want := len(m.Files) - sent + 1; len(st.puts) != want {
		t.Errorf("second archive sent %d objects, want %d (the missing files and the manifest): %v", len(st.puts), want, st.puts)
	}
	if _, _, err := output.FindRun(t.Context(), st, run.ID); err != nil {
		t.Fatal(err)
	}
	// Once archived, archiving again changes nothing.
	st.puts = nil
	if _, err := output.Archive(t.Context(), st, run, dir, nil); err != nil || len(st.puts) != 0 {
		t.Fatalf("third archive: %v, sent %v", err, st.puts)
	}
	// And an archived run is never overwritten by other content.
	os.WriteFile(filepath.Join(dir, "breaks.csv"), []byte("changed\r\n"), 0o644)
	if _, err := output.Archive(t.Context(), st, run, dir, nil); err == nil || !strings.Contains(err.Error(), "never overwritten") {
		t.Fatalf("archive of changed content: %v", err)
	}
}

func TestFetchChecksEveryFile(t *testing.T) {
	dir, run := runFolder(t)
	root := t.TempDir()
	st, _ := output.NewDirStore(root)
	if _, err := output.Archive(t.Context(), st, run, dir, nil); err != nil {
		t.Fatal(err)
	}
	prefix, m, err := output.FindRun(t.Context(), st, run.ID)
	if err != nil {
		t.Fatal(err)
	}
	out := t.TempDir()
	if err := output.Fetch(t.Context(), st, prefix, m, out, "inputs/"); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(out, "inputs/reports/PAYMENT_OPS/r1.json")); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(out, "breaks.csv")); err == nil {
		t.Fatal("Fetch of inputs/ fetched breaks.csv")
	}
	tampered := filepath.Join(root, filepath.FromSlash(prefix), "inputs/reports/PAYMENT_OPS/r1.json")
	if err := os.WriteFile(tampered, []byte(`[{"a":1},{"a":2},{"a":4}]`), 0o644); err != nil {
		t.Fatal(err)
	}
	err = output.Fetch(t.Context(), st, prefix, m, t.TempDir(), "inputs/")
	if !errors.Is(err, output.ErrMismatch) || !strings.Contains(err.Error(), "inputs/reports/PAYMENT_OPS/r1.json") {
		t.Fatalf("Fetch of a tampered file: %v", err)
	}
}
