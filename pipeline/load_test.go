package pipeline_test

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"recon/extract"
	"recon/pipeline"
)

// TestRunOnArchivedInputs is recon load's path: the raw files an archived
// run used, run again into an empty warehouse without the network, give the
// same open breaks; a raw file changed since stops the run before anything
// is published.
func TestRunOnArchivedInputs(t *testing.T) {
	e := newEnv(t, 7)
	w := mustWindow(t, 0, 6)
	first := e.run(t, w)
	inputs, _ := filepath.Glob(filepath.Join(e.cfg.ArchiveURL, "run_date=*", "run_id="+first.RunID, "inputs"))
	if len(inputs) != 1 {
		t.Fatalf("inputs of %s: found %v", first.RunID, inputs)
	}

	offline := func(dir string) pipeline.Config {
		cfg := e.cfg
		cfg.DB, cfg.WorkDir, cfg.ArchiveURL = filepath.Join(dir, "recon.duckdb"), filepath.Join(dir, "work"), filepath.Join(dir, "archive")
		cfg.Extract, cfg.InputDir = extract.Config{}, inputs[0] // no service URL, no credentials
		return cfg
	}
	cfg := offline(t.TempDir())
	res, err := pipeline.Run(t.Context(), cfg, w)
	if err != nil {
		t.Fatalf("run on %s: %v", inputs[0], err)
	}
	if res.Verdict != first.Verdict || !slices.Equal(res.Reasons, first.Reasons) {
		t.Errorf("verdict %s %q, the archived run's %s %q", res.Verdict, res.Reasons, first.Verdict, first.Reasons)
	}
	want := openBreaks(t, e.cfg.DB)
	if len(want) == 0 {
		t.Fatal("the first run found no break: nothing to compare")
	}
	if diff := cmp.Diff(want, openBreaks(t, cfg.DB)); diff != "" {
		t.Errorf("open breaks (-archived run +run on its inputs):\n%s", diff)
	}

	// One raw file changed after the fact.
	files, err := extract.ReadIndex(inputs[0])
	if err != nil {
		t.Fatal(err)
	}
	i := slices.IndexFunc(files, func(f extract.RawFile) bool { return f.Source == extract.SourceRecon && f.Path != "" })
	if i < 0 {
		t.Fatal("no RECON file among the inputs")
	}
	name := filepath.Join(inputs[0], filepath.FromSlash(files[i].Path))
	b, err := os.ReadFile(name)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(name, []byte(strings.Replace(string(b), "1", "2", 1)), 0o644); err != nil {
		t.Fatal(err)
	}
	tampered := offline(t.TempDir())
	if _, err := pipeline.Run(t.Context(), tampered, w); err == nil || !strings.Contains(err.Error(), "sha256") {
		t.Fatalf("run on a changed raw file: err %v, want a sha256 mismatch", err)
	}
	if _, err := os.Stat(tampered.DB); !os.IsNotExist(err) {
		t.Errorf("a database was published after the failed run: stat err %v", err)
	}
}
