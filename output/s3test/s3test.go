// Package s3test gives tests an S3 server on loopback: gofakes3 in process,
// which a test can stop and start again, or the versitygw server that
// scripts/s3-integration.sh starts. Tests reach either through the real
// aws-sdk-go-v2 client and its standard configuration chain.
package s3test

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/config"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/johannesboyne/gofakes3"
	"github.com/johannesboyne/gofakes3/backend/s3mem"

	"recon/output"
)

// Environment the integration script sets to point tests at versitygw: the
// server it started, and the binary, for tests that stop a server of their own.
const (
	EnvEndpoint  = "RECON_TEST_S3_ENDPOINT"
	EnvAccessKey = "RECON_TEST_S3_ACCESS_KEY"
	EnvSecretKey = "RECON_TEST_S3_SECRET_KEY"
	EnvBinary    = "RECON_TEST_VERSITYGW"
)

// Server is an S3 endpoint with one bucket for the test.
type Server struct {
	Name     string // gofakes3 or versitygw
	Endpoint string // http://127.0.0.1:PORT
	Bucket   string
	// Verifies says the server checks the SHA-256 checksum sent with an
	// upload (gofakes3 does not).
	Verifies  bool
	accessKey string
	secretKey string

	mu   sync.Mutex
	addr string // servers the test can stop and start

	// gofakes3
	handler   http.Handler
	srv       *http.Server
	puts      atomic.Int64
	stopAfter atomic.Int64
	refuse    atomic.Pointer[string] // RefusePuts

	// versitygw process
	bin, dir string
	cmd      *exec.Cmd
}

// Fake starts gofakes3 on a loopback port, stopped when the test ends.
func Fake(t testing.TB) *Server {
	t.Helper()
	backend := s3mem.New()
	s := &Server{Name: "gofakes3", Bucket: "recon-archive", accessKey: "test-access", secretKey: "test-secret"}
	if err := backend.CreateBucket(s.Bucket); err != nil {
		t.Fatal(err)
	}
	s.handler = s.count(gofakes3.New(backend).Server())
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	s.addr = ln.Addr().String()
	s.Endpoint = "http://" + s.addr
	s.serve(ln)
	t.Cleanup(s.Stop)
	return s
}

// Versity returns the versitygw server of the integration script, with a new
// bucket for the test; the test is skipped when the script did not start one.
func Versity(t testing.TB) *Server {
	t.Helper()
	endpoint := os.Getenv(EnvEndpoint)
	if endpoint == "" {
		t.Skipf("no versitygw: %s is not set (make test runs scripts/s3-integration.sh, which sets it)", EnvEndpoint)
	}
	s := &Server{Name: "versitygw", Endpoint: endpoint, Verifies: true,
		accessKey: os.Getenv(EnvAccessKey), secretKey: os.Getenv(EnvSecretKey)}
	s.Bucket = bucketName(t.Name())
	if _, err := s.Client(t).CreateBucket(t.Context(), &s3.CreateBucketInput{Bucket: aws.String(s.Bucket)}); err != nil {
		t.Fatalf("create bucket %s on %s: %v", s.Bucket, endpoint, err)
	}
	return s
}

// VersityProcess starts a versitygw of the test's own, which the test can
// stop and start; skipped when the integration script did not name the binary.
func VersityProcess(t testing.TB) *Server {
	t.Helper()
	bin := os.Getenv(EnvBinary)
	if bin == "" {
		t.Skipf("no versitygw binary: %s is not set (make test runs scripts/s3-integration.sh, which sets it)", EnvBinary)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	s := &Server{Name: "versitygw-process", Verifies: true, Bucket: "recon-archive", accessKey: "outage-access",
		secretKey: "outage-secret", bin: bin, dir: t.TempDir(), addr: ln.Addr().String()}
	ln.Close()
	s.Endpoint = "http://" + s.addr
	s.Start(t)
	t.Cleanup(s.Stop)
	if _, err := s.Client(t).CreateBucket(t.Context(), &s3.CreateBucketInput{Bucket: aws.String(s.Bucket)}); err != nil {
		t.Fatal(err)
	}
	return s
}

// All returns gofakes3 and, when the integration script runs, versitygw.
func All(t *testing.T) []*Server {
	t.Helper()
	out := []*Server{Fake(t)}
	if os.Getenv(EnvEndpoint) != "" {
		out = append(out, Versity(t))
	}
	return out
}

var notBucket = regexp.MustCompile(`[^a-z0-9-]+`)

func bucketName(test string) string {
	b := make([]byte, 4)
	rand.Read(b)
	name := strings.Trim(notBucket.ReplaceAllString(strings.ToLower(test), "-"), "-")
	return "t-" + name[:min(len(name), 40)] + "-" + hex.EncodeToString(b)
}

// Env points the AWS SDK's standard chain at the server for this test, and
// away from any real configuration or credentials of the user.
func (s *Server) Env(t testing.TB) {
	t.Helper()
	empty := filepath.Join(t.TempDir(), "aws-empty")
	if err := os.WriteFile(empty, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	for k, v := range map[string]string{
		"AWS_ENDPOINT_URL_S3": s.Endpoint, "AWS_ENDPOINT_URL": "", "AWS_REGION": "us-east-1",
		"AWS_ACCESS_KEY_ID": s.accessKey, "AWS_SECRET_ACCESS_KEY": s.secretKey, "AWS_SESSION_TOKEN": "",
		"AWS_PROFILE": "", "AWS_CONFIG_FILE": empty, "AWS_SHARED_CREDENTIALS_FILE": empty,
		"AWS_EC2_METADATA_DISABLED": "true", "AWS_MAX_ATTEMPTS": "3",
	} {
		t.Setenv(k, v)
	}
}

// URL is the archive URL of a prefix in the test's bucket.
func (s *Server) URL(prefix string) string { return "s3://" + s.Bucket + "/" + prefix }

// Options are the store settings tests use: path style, short retries.
func (s *Server) Options() output.S3Options {
	return output.S3Options{ForcePathStyle: true, MaxBackoff: time.Millisecond}
}

// Client is a plain SDK client of the server, for the test's own checks.
func (s *Server) Client(t testing.TB) *s3.Client {
	t.Helper()
	cfg, err := config.LoadDefaultConfig(context.Background(), config.WithRegion("us-east-1"),
		config.WithCredentialsProvider(aws.CredentialsProviderFunc(func(context.Context) (aws.Credentials, error) {
			return aws.Credentials{AccessKeyID: s.accessKey, SecretAccessKey: s.secretKey}, nil
		})))
	if err != nil {
		t.Fatal(err)
	}
	return s3.NewFromConfig(cfg, func(o *s3.Options) {
		o.BaseEndpoint, o.UsePathStyle = aws.String(s.Endpoint), true
	})
}

func (s *Server) serve(ln net.Listener) {
	srv := &http.Server{Handler: s.handler, ReadHeaderTimeout: 10 * time.Second}
	s.mu.Lock()
	s.srv = srv
	s.mu.Unlock()
	go srv.Serve(ln)
}

// Stop shuts the server down at once, like a crash: open connections are
// cut and new ones refused until Start. versitygw is killed.
func (s *Server) Stop() {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.srv != nil {
		s.srv.Close()
		s.srv = nil
	}
	if s.cmd != nil {
		s.cmd.Process.Kill()
		s.cmd.Wait()
		s.cmd = nil
	}
}

// Start serves again on the same address, with the objects the server held.
func (s *Server) Start(t testing.TB) {
	t.Helper()
	if s.bin == "" {
		ln, err := net.Listen("tcp", s.addr)
		if err != nil {
			t.Fatalf("restart S3 on %s: %v", s.addr, err)
		}
		s.serve(ln)
		return
	}
	cmd := exec.Command(s.bin, "--port", s.addr, "--quiet", "posix", s.dir)
	cmd.Env = append(os.Environ(), "ROOT_ACCESS_KEY="+s.accessKey, "ROOT_SECRET_KEY="+s.secretKey)
	if err := cmd.Start(); err != nil {
		t.Fatalf("start versitygw: %v", err)
	}
	s.mu.Lock()
	s.cmd = cmd
	s.mu.Unlock()
	for i := 0; ; i++ { // wait until it listens
		c, err := net.Dial("tcp", s.addr)
		if err == nil {
			c.Close()
			return
		}
		if i == 200 {
			s.Stop()
			t.Fatalf("versitygw does not listen on %s: %v", s.addr, err)
		}
		time.Sleep(25 * time.Millisecond)
	}
}

// StopAfterPuts makes gofakes3 stop while it receives the n-th object
// upload from now: that request and all later ones fail.
func (s *Server) StopAfterPuts(n int64) {
	s.puts.Store(0)
	s.stopAfter.Store(n)
}

// Puts counts the object uploads received since StopAfterPuts (or the start).
func (s *Server) Puts() int64 { return s.puts.Load() }

// RefusePuts makes gofakes3 answer every upload of an object whose key
// starts with prefix (within the bucket) with 403 AccessDenied, other
// requests as before, until RefusePuts("").
func (s *Server) RefusePuts(prefix string) { s.refuse.Store(&prefix) }

func (s *Server) count(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		isObjectPut := r.Method == http.MethodPut && strings.Count(strings.Trim(r.URL.Path, "/"), "/") >= 1
		if p := s.refuse.Load(); isObjectPut && p != nil && *p != "" && strings.HasPrefix(r.URL.Path, "/"+s.Bucket+"/"+*p) {
			w.Header().Set("Content-Type", "application/xml")
			w.WriteHeader(http.StatusForbidden)
			fmt.Fprint(w, `<?xml version="1.0" encoding="UTF-8"?><Error><Code>AccessDenied</Code><Message>refused by the test</Message></Error>`)
			return
		}
		if isObjectPut {
			n := s.puts.Add(1)
			if limit := s.stopAfter.Load(); limit > 0 && n >= limit {
				s.stopAfter.Store(0)
				s.Stop()
				panic(http.ErrAbortHandler) // the connection is already closed
			}
		}
		next.ServeHTTP(w, r)
	})
}
