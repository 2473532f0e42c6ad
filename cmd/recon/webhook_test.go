package main

import (
	"bufio"
	"encoding/json"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"recon/extract/webhook"
)

// TestWebhookServe runs 'recon webhook serve' as a process: the spool lands
// beside the database, a delivery is spooled, the token is in no output,
// and SIGTERM ends it with exit 0.
func TestWebhookServe(t *testing.T) {
	dir := t.TempDir()
	const token = "cli-test-token-0123456789abcdef"
	child := exec.Command(os.Args[0], "webhook", "serve", "--addr", "127.0.0.1:0", "--log-format", "json",
		"--db", filepath.Join(dir, "recon.duckdb"))
	child.Env = append(os.Environ(), "RECON_TEST_MAIN=1", "RECON_WEBHOOK_TOKEN="+token)
	stderr, err := child.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := child.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { child.Process.Kill() })
	lines := bufio.NewScanner(stderr)
	var out strings.Builder
	var addr string
	for addr == "" && lines.Scan() {
		out.WriteString(lines.Text() + "\n")
		var l struct{ Msg, Addr string }
		if json.Unmarshal(lines.Bytes(), &l) == nil && l.Msg == "webhook receiver listening" {
			addr = l.Addr
		}
	}
	if addr == "" {
		t.Fatalf("no listening line:\n%s", out.String())
	}
	const id = "8f6d3f3e-2b1c-4c8e-9a53-2f0e6f1d2c4b"
	resp, err := http.Post("http://"+addr+webhook.PathPrefix+token, "application/json", strings.NewReader(`{"msg_id":"`+id+`"}`))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 200 {
		t.Fatalf("status %d", resp.StatusCode)
	}
	child.Process.Signal(syscall.SIGTERM)
	rest, _ := io.ReadAll(stderr)
	out.Write(rest)
	if err := child.Wait(); err != nil {
		t.Fatalf("exit %v after SIGTERM, want 0:\n%s", err, out.String())
	}
	if strings.Contains(out.String(), token) {
		t.Fatalf("the token is in the log:\n%s", out.String())
	}
	if !strings.Contains(out.String(), `"msg_id":"`+id+`","status":200`) {
		t.Errorf("no delivery line in the log:\n%s", out.String())
	}
	r, err := webhook.ReadSpool(filepath.Join(dir, "recon-webhook.spool"), 0)
	if err != nil || len(r.Entries) != 1 || r.Entries[0].MsgID != id {
		t.Fatalf("spool beside the database: %+v, %v", r, err)
	}
}

func TestWebhookServeUsage(t *testing.T) {
	const good = "cli-test-token-0123456789abcdef"
	for _, tt := range []struct {
		name, token, allow string
		args               []string
		want               string
	}{
		{name: "no token", want: "RECON_WEBHOOK_TOKEN: want at least 16"},
		{name: "short token", token: "short", want: "RECON_WEBHOOK_TOKEN: want at least 16"},
		{name: "bad CIDR", token: good, allow: "10.0.0.0/33", want: `RECON_WEBHOOK_ALLOW "10.0.0.0/33"`},
		{name: "bad address", token: good, args: []string{"--addr", "8090"}, want: `RECON_WEBHOOK_ADDR "8090"`},
		{name: "cert without key", token: good, args: []string{"--tls-cert", "c.pem"}, want: "--tls-cert and --tls-key go together"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Setenv("RECON_WEBHOOK_TOKEN", tt.token)
			t.Setenv("RECON_WEBHOOK_ALLOW", tt.allow)
			args := append([]string{"webhook", "serve", "--db", filepath.Join(t.TempDir(), "recon.duckdb")}, tt.args...)
			code, _, stderr := run(t, args...)
			if code != exitUsage || !strings.Contains(stderr, tt.want) {
				t.Errorf("exit %d, stderr %q; want exit 2 and %q", code, stderr, tt.want)
			}
			if tt.token != "" && strings.Contains(stderr, tt.token) {
				t.Errorf("stderr shows the token: %q", stderr)
			}
		})
	}
}
