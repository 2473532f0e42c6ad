package bench

import (
	"bytes"
	"cmp"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// buildRecon builds the recon binary the history phase runs as its child.
func buildRecon(t *testing.T) string {
	t.Helper()
	bin := filepath.Join(t.TempDir(), "recon")
	cmd := exec.CommandContext(t.Context(), cmp.Or(os.Getenv("GO"), "go"), "build", "-tags", "duckdb_arrow", "-o", bin, "recon/cmd/recon")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("build recon: %v\n%s", err, out)
	}
	return bin
}

// TestHistoryReplaysItsLastNight runs a short history and checks that its
// last night replays byte for byte from the archive the nights shared, and
// that a changed state object in that archive fails the replay.
func TestHistoryReplaysItsLastNight(t *testing.T) {
	var log bytes.Buffer
	cfg := Config{Recon: buildRecon(t), Dir: t.TempDir(), Keep: true, Log: &log, HistoryRuns: 2, HistoryPayments: 200}
	h, err := runHistory(t.Context(), cfg)
	if err != nil {
		t.Fatalf("history: %v\n%s", err, log.String())
	}
	if len(h.Runs) != 2 {
		t.Fatalf("%d nights, want 2", len(h.Runs))
	}
	for _, r := range h.Runs {
		if r.ArchiveBytes <= 0 || r.Seconds <= 0 {
			t.Errorf("night %d: archive %d bytes, %.2f s", r.Night, r.ArchiveBytes, r.Seconds)
		}
	}
	p := h.Replay
	if p == nil || !p.Identical || p.Night != 2 || !strings.HasPrefix(p.RunID, "r-") || p.Seconds <= 0 {
		t.Fatalf("replay %+v, want night 2 replayed byte-identical", p)
	}
	if !strings.Contains(log.String(), "replay of night 2 ("+p.RunID+"): byte-identical") {
		t.Errorf("progress lines do not report the replay:\n%s", log.String())
	}
	var table bytes.Buffer
	if err := (&Report{History: h}).WriteTable(&table); err != nil {
		t.Fatal(err)
	}
	if !regexp.MustCompile(`replay of night 2 +` + p.RunID + ` .* byte-identical`).MatchString(table.String()) {
		t.Errorf("the table does not show the replay:\n%s", table.String())
	}

	// The replay tells its progress, step by step.
	root := filepath.Join(cfg.Dir, "history")
	b, err := os.ReadFile(filepath.Join(root, "replay.log"))
	if err != nil {
		t.Fatal(err)
	}
	var steps []string
	for _, m := range regexp.MustCompile(`"msg":"replay step finished","step":"(\w+)"`).FindAllSubmatch(b, -1) {
		steps = append(steps, string(m[1]))
	}
	if want := []string{"fetch", "state", "load", "rules", "report"}; !slices.Equal(steps, want) {
		t.Errorf("replay steps logged %v, want %v", steps, want)
	}

	// Night 2's state holds slices night 1 stored: change every shared object.
	objects := filepath.Join(root, "archive", "objects")
	n := 0
	if err := filepath.WalkDir(objects, func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		n++
		return os.WriteFile(path, []byte("not the slice it was"), 0o644)
	}); err != nil {
		t.Fatal(err)
	}
	if n == 0 {
		t.Fatalf("no shared state object under %s", objects)
	}
	bad, err := replayLast(t.Context(), cfg, runEnv(nil, root), root, 2)
	if err == nil || bad == nil || bad.Identical {
		t.Fatalf("replay with changed state objects: %+v, %v; want a failed replay", bad, err)
	}
	if !strings.Contains(err.Error(), p.RunID) {
		t.Errorf("error %q does not name the run", err)
	}
}
