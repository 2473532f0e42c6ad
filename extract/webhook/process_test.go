package webhook_test

import (
	"bufio"
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"errors"
	"fmt"
	"io"
	"math/big"
	"net"
	"net/http"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/google/uuid"

	"recon/extract/webhook"
)

// selfSigned writes a self-signed certificate for 127.0.0.1 and its key.
func selfSigned(t *testing.T) (certFile, keyFile string, pool *x509.CertPool) {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "recon webhook test"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
		IPAddresses: []net.IP{net.ParseIP("127.0.0.1")}, KeyUsage: x509.KeyUsageDigitalSignature,
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	kder, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	certFile, keyFile = filepath.Join(dir, "cert.pem"), filepath.Join(dir, "key.pem")
	writeFile(t, certFile, string(pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der})))
	writeFile(t, keyFile, string(pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: kder})))
	cert, _ := x509.ParseCertificate(der)
	pool = x509.NewCertPool()
	pool.AddCert(cert)
	return certFile, keyFile, pool
}

func TestTLS(t *testing.T) {
	certFile, keyFile, pool := selfSigned(t)
	url, spool := receiver(t, webhook.Config{}, certFile, keyFile)
	c := &http.Client{Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool}}}
	id := uuid.NewString()
	if got := post(t, c, http.MethodPost, url, `{"msg_id":"`+id+`"}`); got != 200 {
		t.Fatalf("status %d over TLS", got)
	}
	if r := read(t, spool, 0); len(r.Entries) != 1 || r.Entries[0].MsgID != id {
		t.Fatalf("read %+v, want %s", r, id)
	}
	// Plain HTTP to the TLS port is not served.
	plain := "http" + strings.TrimPrefix(url, "https")
	if resp, err := http.Post(plain, "application/json", strings.NewReader(`{"msg_id":"`+uuid.NewString()+`"}`)); err == nil {
		resp.Body.Close()
		if resp.StatusCode == 200 {
			t.Fatal("plain HTTP answered 200 on the TLS port")
		}
	}
	if r := read(t, spool, 0); r.Lines != 1 {
		t.Fatalf("spool has %d lines, want 1", r.Lines)
	}
}

func TestTLSBadCertificate(t *testing.T) {
	rc, err := webhook.New(webhook.Config{Spool: filepath.Join(t.TempDir(), "spool"), Token: testToken})
	if err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	if err := rc.Serve(t.Context(), ln, filepath.Join(t.TempDir(), "none.pem"), "none.key"); err == nil {
		t.Fatal("Serve with a missing certificate: no error")
	}
}

// childEnv makes the test binary a receiver process (TestChildReceiver).
const childEnv = "RECON_WEBHOOK_TEST_CHILD_SPOOL"

// TestChildReceiver is the receiver process of the kill and stop tests: it
// prints its address, serves until SIGTERM, prints "stopped" and exits 0.
func TestChildReceiver(t *testing.T) {
	spool := os.Getenv(childEnv)
	if spool == "" {
		t.Skip("runs only as the child of TestKill9 and TestSIGTERM")
	}
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM)
	defer stop()
	rc, err := webhook.New(webhook.Config{Spool: spool, Token: testToken})
	if err != nil {
		fmt.Println("error:", err)
		os.Exit(1)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		fmt.Println("error:", err)
		os.Exit(1)
	}
	fmt.Println(ln.Addr().String())
	if err := rc.Serve(ctx, ln, "", ""); err != nil {
		fmt.Println("error:", err)
		os.Exit(1)
	}
	fmt.Println("stopped")
	os.Exit(0)
}

// child starts the receiver process on spool and returns it, its delivery
// URL and its remaining output.
func child(t *testing.T, spool string) (*exec.Cmd, string, *bufio.Reader) {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^TestChildReceiver$", "-test.count=1")
	cmd.Env = append(os.Environ(), childEnv+"="+spool)
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	br := bufio.NewReader(out)
	addr, err := br.ReadString('\n')
	if err != nil || strings.HasPrefix(addr, "error") {
		t.Fatalf("child: %q %v", addr, err)
	}
	return cmd, "http://" + strings.TrimSpace(addr) + webhook.PathPrefix + testToken.Reveal(), br
}

// blast posts n distinct ids at once and calls signal once after the
// after-th acknowledgement. It returns the acknowledged ids, and the
// statuses other than 200 received (transport errors are not statuses).
func blast(url string, n, after int, signal func()) (acked []string, others []int, errs int) {
	c := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: n}, Timeout: time.Minute}
	var mu sync.Mutex
	var count atomic.Int64
	var once sync.Once
	var wg sync.WaitGroup
	for range n {
		wg.Go(func() {
			id := uuid.NewString()
			resp, err := c.Post(url, "application/json", strings.NewReader(`{"msg_id":"`+id+`"}`))
			mu.Lock()
			defer mu.Unlock()
			if err != nil {
				errs++
				return
			}
			io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
			if resp.StatusCode != 200 {
				others = append(others, resp.StatusCode)
				return
			}
			acked = append(acked, id)
			if count.Add(1) == int64(after) {
				once.Do(signal)
			}
		})
	}
	wg.Wait()
	return acked, others, errs
}

// TestKill9 kills the receiver process mid-way through 2,000 concurrent
// deliveries: every id that got a 200 is in the spool.
func TestKill9(t *testing.T) {
	spool := filepath.Join(t.TempDir(), "recon-webhook.spool")
	cmd, url, _ := child(t, spool)
	acked, others, errs := blast(url, 2000, 300, func() { cmd.Process.Signal(syscall.SIGKILL) })
	err := cmd.Wait()
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.Sys().(syscall.WaitStatus).Signal() != syscall.SIGKILL {
		t.Fatalf("child ended with %v, want killed", err)
	}
	lost := missing(t, spool, acked)
	t.Logf("kill -9: %d acknowledged, %d other statuses, %d transport errors, %d acknowledged ids lost", len(acked), len(others), errs, len(lost))
	if len(acked) < 300 {
		t.Fatalf("%d acknowledged, want at least 300", len(acked))
	}
	if len(lost) != 0 {
		t.Fatalf("%d acknowledged ids lost after kill -9: %v", len(lost), lost[:min(5, len(lost))])
	}
	// The receiver starts again on the killed spool and keeps every id.
	_, url, _ = child(t, spool)
	more, _, _ := blast(url, 10, 0, func() {})
	if lost := missing(t, spool, append(acked, more...)); len(lost) != 0 || len(more) != 10 {
		t.Fatalf("after restart: %d of 10 acknowledged, %d lost", len(more), len(lost))
	}
}

// TestSIGTERM stops the receiver mid-way through 1,000 concurrent
// deliveries: it exits 0, every delivery it took in answers 200 (none 5xx)
// and every acknowledged id is in the spool.
func TestSIGTERM(t *testing.T) {
	spool := filepath.Join(t.TempDir(), "recon-webhook.spool")
	cmd, url, out := child(t, spool)
	acked, others, errs := blast(url, 1000, 100, func() { cmd.Process.Signal(syscall.SIGTERM) })
	rest, _ := io.ReadAll(out)
	if err := cmd.Wait(); err != nil {
		t.Fatalf("child ended with %v, want exit 0; output %s", err, rest)
	}
	if !strings.Contains(string(rest), "stopped") {
		t.Fatalf("child output %q, want stopped", rest)
	}
	t.Logf("SIGTERM: %d acknowledged, %d other statuses, %d refused after the stop", len(acked), len(others), errs)
	if len(others) != 0 {
		t.Fatalf("statuses other than 200 during the stop: %v", others)
	}
	if lost := missing(t, spool, acked); len(lost) != 0 {
		t.Fatalf("%d acknowledged ids lost after SIGTERM", len(lost))
	}
}
