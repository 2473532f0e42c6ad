package output_test

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"io"
	"io/fs"
	"os"
	"sync"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/aws-sdk-go-v2/service/s3/types"
	"github.com/google/go-cmp/cmp"

	"recon/output"
	"recon/output/s3test"
)

// stores returns a local folder store and an S3 store on every server the
// test can reach, all through the real SDK for S3.
func stores(t *testing.T) map[string]output.Store {
	t.Helper()
	dir, err := output.NewDirStore(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]output.Store{"dir": dir}
	for _, srv := range s3test.All(t) {
		srv.Env(t)
		st, err := output.OpenStore(context.Background(), srv.URL("archive/x"), srv.Options())
		if err != nil {
			t.Fatal(err)
		}
		out[srv.Name] = st
	}
	return out
}

func TestStoreRoundTrip(t *testing.T) {
	ctx := t.Context()
	for name, st := range stores(t) {
		t.Run(name, func(t *testing.T) {
			body := []byte("break_id,rule_id\r\nabc,ops_missing_in_recon\r\n")
			sum := output.SHA256(body)
			if ok, err := st.Has(ctx, "run/a.csv", int64(len(body)), sum); err != nil || ok {
				t.Fatalf("Has before Put = %v, %v", ok, err)
			}
			if err := st.Put(ctx, "run/a.csv", bytes.NewReader(body), int64(len(body)), sum); err != nil {
				t.Fatal(err)
			}
			if err := st.Put(ctx, "run/sub/b.json", bytes.NewReader([]byte("[]")), 2, output.SHA256([]byte("[]"))); err != nil {
				t.Fatal(err)
			}
			if ok, err := st.Has(ctx, "run/a.csv", int64(len(body)), sum); err != nil || !ok {
				t.Fatalf("Has after Put = %v, %v", ok, err)
			}
			if ok, _ := st.Has(ctx, "run/a.csv", int64(len(body)), output.SHA256([]byte("other"))); ok {
				t.Fatal("Has matches another sha256")
			}
			r, err := st.Get(ctx, "run/a.csv")
			if err != nil {
				t.Fatal(err)
			}
			got, _ := io.ReadAll(r)
			r.Close()
			if !bytes.Equal(got, body) {
				t.Fatalf("Get = %q", got)
			}
			keys, err := st.List(ctx, "run/")
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff([]string{"run/a.csv", "run/sub/b.json"}, keys); diff != "" {
				t.Errorf("List (-want +got):\n%s", diff)
			}
			if _, err := st.Get(ctx, "run/missing"); !errors.Is(err, fs.ErrNotExist) {
				t.Fatalf("Get of a missing key: %v, want fs.ErrNotExist", err)
			}
		})
	}
}

// TestPutRefusesWrongChecksum: content that does not match the sha256 the
// caller computed never becomes an object.
func TestPutRefusesWrongChecksum(t *testing.T) {
	ctx := t.Context()
	dir, err := output.NewDirStore(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	all := map[string]output.Store{"dir": dir}
	for _, srv := range s3test.All(t) {
		if !srv.Verifies {
			continue // gofakes3 ignores x-amz-checksum-sha256
		}
		srv.Env(t)
		st, err := output.OpenStore(ctx, srv.URL("p"), srv.Options())
		if err != nil {
			t.Fatal(err)
		}
		all[srv.Name] = st
	}
	for name, st := range all {
		t.Run(name, func(t *testing.T) {
			body := []byte("amount\r\n12.50\r\n")
			wrong := output.SHA256([]byte("amount\r\n12.51\r\n"))
			if err := st.Put(ctx, "x.csv", bytes.NewReader(body), int64(len(body)), wrong); err == nil {
				t.Fatal("Put accepted content whose sha256 differs")
			}
			if _, err := st.Get(ctx, "x.csv"); !errors.Is(err, fs.ErrNotExist) {
				t.Fatalf("the refused object exists: %v", err)
			}
		})
	}
}

// TestS3Checksums: a small file is sent in one request carrying its SHA-256;
// a large one in parts, each with its own SHA-256; both keep the whole
// file's sha256 as metadata and read back intact.
func TestS3Checksums(t *testing.T) {
	ctx := t.Context()
	for _, srv := range s3test.All(t) {
		t.Run(srv.Name, func(t *testing.T) {
			srv.Env(t)
			opts := srv.Options()
			opts.PartSize = 5 << 20
			st, err := output.OpenStore(ctx, srv.URL("big"), opts)
			if err != nil {
				t.Fatal(err)
			}
			client := srv.Client(t)
			for _, tc := range []struct {
				name      string
				size      int
				multipart bool
			}{{"small.parquet", 1 << 10, false}, {"large.parquet", 11 << 20, true}} {
				body := make([]byte, tc.size)
				rand.Read(body)
				sum := output.SHA256(body)
				if err := st.Put(ctx, tc.name, bytes.NewReader(body), int64(len(body)), sum); err != nil {
					t.Fatalf("%s: %v", tc.name, err)
				}
				head, err := client.HeadObject(ctx, &s3.HeadObjectInput{Bucket: aws.String(srv.Bucket),
					Key: aws.String("big/" + tc.name), ChecksumMode: types.ChecksumModeEnabled})
				if err != nil {
					t.Fatal(err)
				}
				if got := head.Metadata["sha256"]; got != sum {
					t.Errorf("%s: metadata sha256 %q, want %s", tc.name, got, sum)
				}
				if srv.Verifies {
					raw, _ := hex.DecodeString(sum)
					want := base64.StdEncoding.EncodeToString(raw)
					got := aws.ToString(head.ChecksumSHA256)
					if tc.multipart {
						// A composite checksum: sha256 of the parts' checksums, "-<parts>".
						if got == "" || got == want || got[len(got)-2:] != "-3" {
							t.Errorf("%s: checksum %q, want a composite of 3 parts", tc.name, got)
						}
					} else if got != want {
						t.Errorf("%s: checksum %q, want %s", tc.name, got, want)
					}
				}
				r, err := st.Get(ctx, tc.name)
				if err != nil {
					t.Fatal(err)
				}
				got, err := io.ReadAll(r)
				r.Close()
				if err != nil || output.SHA256(got) != sum {
					t.Fatalf("%s read back: %d bytes, err %v", tc.name, len(got), err)
				}
			}
		})
	}
}

// stopper is a store that stops its server once it has stored n objects.
type stopper struct {
	output.Store
	mu   sync.Mutex
	n    int
	stop func()
}

func (s *stopper) Put(ctx context.Context, key string, r io.Reader, size int64, sum string) error {
	if err := s.Store.Put(ctx, key, r, size, sum); err != nil {
		return err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.n--; s.n == 0 {
		s.stop()
	}
	return nil
}

// TestArchiveOutageRealServer stops the S3 server (gofakes3, and a
// versitygw process under make test) while a run is being archived: no
// manifest; once it is back, archiving the same run completes and the
// objects match the manifest.
func TestArchiveOutageRealServer(t *testing.T) {
	servers := []*s3test.Server{s3test.Fake(t)}
	if os.Getenv(s3test.EnvBinary) != "" {
		servers = append(servers, s3test.VersityProcess(t))
	}
	for _, srv := range servers {
		t.Run(srv.Name, func(t *testing.T) {
			srv.Env(t)
			ctx := t.Context()
			dir, run := runFolder(t)
			st, err := output.OpenStore(ctx, srv.URL("a"), srv.Options())
			if err != nil {
				t.Fatal(err)
			}
			if _, err := output.Archive(ctx, &stopper{Store: st, n: 3, stop: srv.Stop}, run, dir, nil); err == nil {
				t.Fatal("archive succeeded with the server stopped")
			}
			srv.Start(t)
			if _, _, err := output.FindRun(ctx, st, run.ID); !errors.Is(err, fs.ErrNotExist) {
				t.Fatalf("manifest after the outage: %v", err)
			}
			m, err := output.Archive(ctx, st, run, dir, nil)
			if err != nil {
				t.Fatal(err)
			}
			prefix, _, err := output.FindRun(ctx, st, run.ID)
			if err != nil {
				t.Fatal(err)
			}
			for _, f := range m.Files {
				r, err := st.Get(ctx, prefix+f.Path)
				if err != nil {
					t.Fatal(err)
				}
				b, _ := io.ReadAll(r)
				r.Close()
				if output.SHA256(b) != f.SHA256 {
					t.Errorf("%s differs from the manifest", f.Path)
				}
			}
		})
	}
}
