package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"recon/extract"
	"recon/extract/raw"
	"recon/extract/sandbox"
	"recon/extract/sandbox/sandboxtest"
	"recon/output"
	reconsql "recon/sql"
)

// TestMain lets a test run the built command as a child process: the test
// binary re-executed with RECON_TEST_MAIN=1 is recon itself.
func TestMain(m *testing.M) {
	if os.Getenv("RECON_TEST_MAIN") == "1" {
		os.Exit(runMain())
	}
	if db := os.Getenv("RECON_TEST_HOLD"); db != "" {
		os.Exit(holdReadWrite(db))
	}
	os.Exit(m.Run())
}

// holdReadWrite is an analyst's session: it opens db read-write (the default
// of the DuckDB CLI, Python and DBeaver), prints "open" and holds the file
// until stdin closes.
func holdReadWrite(db string) int {
	conn, err := reconsql.OpenDB(db, false)
	if err == nil {
		err = conn.QueryRow("SELECT count(*) FROM runs").Scan(new(int))
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer conn.Close()
	fmt.Println("open")
	io.Copy(io.Discard, os.Stdin)
	return 0
}

// holder starts an analyst's read-write session on db in another process;
// it ends with the test.
func holder(t *testing.T, db string) {
	t.Helper()
	cmd := exec.Command(os.Args[0])
	cmd.Env = append(os.Environ(), "RECON_TEST_HOLD="+db)
	cmd.Stderr = os.Stderr
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { stdin.Close(); cmd.Wait() })
	if line, err := bufio.NewReader(out).ReadString('\n'); line != "open\n" {
		t.Fatalf("holder printed %q (%v)", line, err)
	}
}

var (
	// day0 is a month back: recon refuses report windows older than the
	// provider keeps (9 months) by the real clock, which these runs use.
	day0 = time.Now().UTC().Truncate(24*time.Hour).AddDate(0, 0, -30)
	// now is well past the sandbox's days, so grace periods have run out.
	now = day0.Add(11*24*time.Hour + 6*time.Hour)
)

// dayN is day0 plus n days, as YYYY-MM-DD.
func dayN(n int) string { return day0.AddDate(0, 0, n).Format(raw.DateLayout) }

// network is a sandbox on a loopback port behind a recording middleware, and
// the environment that points recon at it, with a database and archive in
// a temporary folder.
type network struct {
	sb  *sandbox.Sandbox
	srv *sandbox.Served
	dir string
	env map[string]string

	mu       sync.Mutex
	requests int
	bearers  map[string]bool // tokens seen in Authorization headers
	// fault, if set, may answer a request instead of the sandbox.
	fault func(http.ResponseWriter, *http.Request) bool
}

func newNetwork(t *testing.T, days int) *network {
	t.Helper()
	n := &network{dir: t.TempDir(), bearers: map[string]bool{}}
	n.srv = sandboxtest.Serve(t, sandbox.Config{Seed: 7, Start: day0, Days: days, Now: func() time.Time { return now }, PendingPolls: -1},
		n.record)
	n.sb = n.srv.Sandbox
	n.env = map[string]string{
		"RECON_DB": filepath.Join(n.dir, "recon.duckdb"), "RECON_ARCHIVE_URL": filepath.Join(n.dir, "archive"),
		"RECON_WORK_DIR": filepath.Join(n.dir, "work"),
	}
	for _, kv := range n.srv.Env() {
		n.env[kv[0]] = kv[1]
	}
	hermetic(t)
	for k, v := range n.env {
		t.Setenv(k, v)
	}
	return n
}

// record counts the requests and bearer tokens that reach next, and lets the fault, if set, answer first.
func (n *network) record(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		n.mu.Lock()
		n.requests++
		if tok, ok := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer "); ok {
			n.bearers[tok] = true
		}
		fault := n.fault
		n.mu.Unlock()
		if fault != nil && fault(w, r) {
			return
		}
		next.ServeHTTP(w, r)
	})
}

// hermetic blanks every RECON_* variable of the environment the tests run in.
func hermetic(t *testing.T) {
	t.Helper()
	for _, kv := range os.Environ() {
		if k, _, _ := strings.Cut(kv, "="); strings.HasPrefix(k, "RECON_") {
			t.Setenv(k, "")
		}
	}
}

func (n *network) count() int {
	n.mu.Lock()
	defer n.mu.Unlock()
	return n.requests
}

func (n *network) setFault(f func(http.ResponseWriter, *http.Request) bool) {
	n.mu.Lock()
	n.fault = f
	n.mu.Unlock()
}

// failReports makes every report of type typ end FAILED.
func (n *network) failReports(typ string) {
	n.setFault(func(w http.ResponseWriter, r *http.Request) bool {
		if !strings.HasPrefix(r.URL.Path, extract.PathReports) || strings.HasPrefix(r.URL.Path, extract.PathReportDownload) {
			return false
		}
		rec := httptest.NewRecorder()
		n.sb.Handler().ServeHTTP(rec, r)
		var body map[string]any
		if json.Unmarshal(rec.Body.Bytes(), &body) == nil && body["reportType"] == typ && body["reportStatus"] == raw.StatusReady {
			body["reportStatus"] = raw.StatusFailed
			delete(body, "downloadLink")
			b, _ := json.Marshal(body)
			rec.Body = bytes.NewBuffer(b)
		}
		for k, v := range rec.Header() {
			w.Header()[k] = v
		}
		w.Header().Del("Content-Length")
		w.WriteHeader(rec.Code)
		w.Write(rec.Body.Bytes())
		return true
	})
}

// tree returns the sha256 of every file under dir, but the work folder and lock files.
func tree(t *testing.T, dir string) map[string]string {
	t.Helper()
	out := map[string]string{}
	err := filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		if d.IsDir() {
			if rel == "work" {
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
	return out
}
