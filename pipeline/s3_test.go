package pipeline_test

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/google/go-cmp/cmp"

	"recon/output"
	"recon/output/s3test"
	"recon/pipeline"
)

// s3Env is an env whose archive is a prefix of the server's bucket.
func s3Env(t *testing.T, srv *s3test.Server, days int) (*env, output.Store) {
	t.Helper()
	srv.Env(t)
	e := newEnv(t, days)
	e.cfg.ArchiveURL, e.cfg.S3 = srv.URL("recon/nightly"), srv.Options()
	st, err := output.OpenStore(t.Context(), e.cfg.ArchiveURL, e.cfg.S3)
	if err != nil {
		t.Fatal(err)
	}
	return e, st
}

// TestArchiveRunToS3 archives a run to S3 and checks, with a plain SDK
// client, that the run's folder holds exactly the manifest's files with the
// manifest's sha256; then replays the run from S3.
func TestArchiveRunToS3(t *testing.T) {
	for _, srv := range s3test.All(t) {
		t.Run(srv.Name, func(t *testing.T) {
			e, st := s3Env(t, srv, 3)
			res := e.run(t, mustWindow(t, 0, 2))
			if res.Verdict != output.Complete {
				t.Fatalf("verdict %s: %v", res.Verdict, res.Reasons)
			}
			prefix, m, err := output.FindRun(t.Context(), st, res.RunID)
			if err != nil {
				t.Fatal(err)
			}
			if want := "s3://" + srv.Bucket + "/recon/nightly/" + prefix; res.Archive != want {
				t.Errorf("archive %s, want %s", res.Archive, want)
			}
			objects := objectSums(t, srv, "recon/nightly/"+prefix)
			want := map[string]string{}
			for _, f := range m.Files {
				want[f.Path] = f.SHA256
			}
			manifest := objects[output.ManifestName]
			delete(objects, output.ManifestName)
			if manifest == "" {
				t.Error("no manifest object")
			}
			if diff := cmp.Diff(want, objects); diff != "" {
				t.Errorf("objects differ from the manifest (-manifest +bucket):\n%s", diff)
			}
			r, err := pipeline.Replay(t.Context(), st, res.RunID, t.TempDir(), nil)
			if err != nil {
				t.Fatal(err)
			}
			if !r.Identical() {
				t.Errorf("replay from S3 differs: %+v", r.Files)
			}
		})
	}
}

// objectSums downloads every object under prefix and returns its sha256 by
// path relative to prefix.
func objectSums(t *testing.T, srv *s3test.Server, prefix string) map[string]string {
	t.Helper()
	client := srv.Client(t)
	out := map[string]string{}
	p := s3.NewListObjectsV2Paginator(client, &s3.ListObjectsV2Input{Bucket: aws.String(srv.Bucket), Prefix: aws.String(prefix)})
	for p.HasMorePages() {
		page, err := p.NextPage(t.Context())
		if err != nil {
			t.Fatal(err)
		}
		for _, o := range page.Contents {
			obj, err := client.GetObject(t.Context(), &s3.GetObjectInput{Bucket: aws.String(srv.Bucket), Key: o.Key})
			if err != nil {
				t.Fatal(err)
			}
			h := sha256.New()
			_, err = io.Copy(h, obj.Body)
			obj.Body.Close()
			if err != nil {
				t.Fatal(err)
			}
			out[strings.TrimPrefix(aws.ToString(o.Key), prefix)] = hex.EncodeToString(h.Sum(nil))
		}
	}
	return out
}

// TestArchiveOutage stops the S3 server in the middle of archiving: the run
// is published as incomplete, with no manifest in S3 and its folder kept;
// once the server is back, ArchiveRun completes the same run and the run
// ledger says complete.
func TestArchiveOutage(t *testing.T) {
	srv := s3test.Fake(t)
	e, st := s3Env(t, srv, 3)
	srv.StopAfterPuts(6)
	res := e.run(t, mustWindow(t, 0, 2))
	if res.Verdict != output.Incomplete || len(res.Reasons) != 1 ||
		!strings.Contains(res.Reasons[0], "recon archive --run "+res.RunID) {
		t.Fatalf("verdict %s, reasons %q: want incomplete with the archive command", res.Verdict, res.Reasons)
	}
	if srv.Puts() < 6 {
		t.Fatalf("the server stopped after %d uploads, not during archiving", srv.Puts())
	}
	runDir := filepath.Join(e.cfg.WorkDir, res.RunID)
	if _, err := os.Stat(filepath.Join(runDir, output.SummaryJSON)); err != nil {
		t.Fatalf("run folder not kept: %v", err)
	}
	verdict, reasons, url := ledger(t, e.cfg.DB, res.RunID)
	if verdict != output.Incomplete || !strings.HasPrefix(reasons, "['archive: upload run "+res.RunID) || url != "" {
		t.Fatalf("ledger: %s %s %q", verdict, reasons, url)
	}

	// A run the database does not know was never published: refused.
	other := e.cfg
	other.DB = filepath.Join(t.TempDir(), "other.duckdb")
	wh, err := pipeline.OpenWarehouse(t.Context(), other.DB)
	if err != nil {
		t.Fatal(err)
	}
	if err := wh.Publish(t.Context()); err != nil {
		t.Fatal(err)
	}
	if _, err := pipeline.ArchiveRun(t.Context(), other, res.RunID); err == nil || !strings.Contains(err.Error(), "never published") {
		t.Fatalf("ArchiveRun of a run missing from the ledger: %v", err)
	}
	// Still down: archiving again fails the same way and leaves no manifest.
	if _, err := pipeline.ArchiveRun(t.Context(), e.cfg, res.RunID); err == nil {
		t.Fatal("ArchiveRun succeeded with the server down")
	}
	srv.Start(t)
	if _, _, err := output.FindRun(t.Context(), st, res.RunID); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("manifest after the outage: %v, want none", err)
	}

	a, err := pipeline.ArchiveRun(context.Background(), e.cfg, res.RunID)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasSuffix(a.URL, "/run_id="+res.RunID+"/") {
		t.Errorf("ArchiveRun = %+v", a)
	}
	if verdict, reasons, url := ledger(t, e.cfg.DB, res.RunID); verdict != output.Complete || reasons != "[]" || url != a.URL {
		t.Errorf("ledger after ArchiveRun: %s %s %q", verdict, reasons, url)
	}
	if _, err := os.Stat(runDir); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("run folder left after archiving: %v", err)
	}
	assertSameObjects(t, srv, a.URL, a.Manifest)
	// Its row counts come from the ledger's source_files: as the run's would be.
	prefix, _, err := output.FindRun(t.Context(), st, res.RunID)
	if err != nil {
		t.Fatal(err)
	}
	assertFileRows(t, a.Manifest, func(p string) []byte {
		r, err := st.Get(t.Context(), prefix+p)
		if err != nil {
			t.Fatal(err)
		}
		defer r.Close()
		b, err := io.ReadAll(r)
		if err != nil {
			t.Fatal(err)
		}
		return b
	})
	// Repeating is harmless.
	if _, err := pipeline.ArchiveRun(t.Context(), e.cfg, res.RunID); err != nil {
		t.Fatalf("second ArchiveRun: %v", err)
	}
	r, err := pipeline.Replay(t.Context(), st, res.RunID, t.TempDir(), nil)
	if err != nil || !r.Identical() {
		t.Fatalf("replay after the outage: %v %+v", err, r)
	}
}

func assertSameObjects(t *testing.T, srv *s3test.Server, url string, m output.Manifest) {
	t.Helper()
	prefix := strings.TrimPrefix(url, "s3://"+srv.Bucket+"/")
	got := objectSums(t, srv, prefix)
	delete(got, output.ManifestName)
	var paths []string
	for _, f := range m.Files {
		if got[f.Path] != f.SHA256 {
			t.Errorf("%s: object sha256 %q, manifest %s", f.Path, got[f.Path], f.SHA256)
		}
		paths = append(paths, f.Path)
	}
	if len(got) != len(paths) {
		sort.Strings(paths)
		t.Errorf("%d objects, manifest lists %d", len(got), len(paths))
	}
}

func ledger(t *testing.T, dbPath, runID string) (verdict, reasons, url string) {
	t.Helper()
	db := openRO(t, dbPath)
	if err := db.QueryRow(`SELECT verdict, CAST(coalesce(reasons, []) AS VARCHAR), coalesce(archive_url, '') FROM runs WHERE run_id = ?`,
		runID).Scan(&verdict, &reasons, &url); err != nil {
		t.Fatal(err)
	}
	db.Close()
	return verdict, reasons, url
}
