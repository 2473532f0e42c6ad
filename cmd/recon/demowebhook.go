package main

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"time"

	"recon/extract"
	"recon/extract/sandbox"
	"recon/extract/webhook"
)

// demoReceiver is the demo's webhook receiver: recon webhook serve's
// Receiver on a loopback port, with a random path token and a spool in a
// temporary folder. Its receipts are stamped at the clock given (inside
// the demo's window, so the notification rules judge them).
type demoReceiver struct {
	URL, Spool string
	rc         *webhook.Receiver
	srv        *http.Server
	dir        string
}

func startDemoReceiver(at func() time.Time) (*demoReceiver, error) {
	tok := make([]byte, 16)
	if _, err := rand.Read(tok); err != nil {
		return nil, err
	}
	dir, err := os.MkdirTemp("", "recon-demo-webhook-")
	if err != nil {
		return nil, err
	}
	d := &demoReceiver{Spool: filepath.Join(dir, "recon-webhook.spool"), dir: dir}
	token := hex.EncodeToString(tok)
	if d.rc, err = webhook.New(webhook.Config{Spool: d.Spool, Token: extract.Secret(token), Now: at}); err != nil {
		os.RemoveAll(dir)
		return nil, err
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		d.rc.Close()
		os.RemoveAll(dir)
		return nil, err
	}
	d.URL = "http://" + ln.Addr().String() + webhook.PathPrefix + token
	d.srv = &http.Server{Handler: d.rc, ReadHeaderTimeout: 10 * time.Second}
	go d.srv.Serve(ln)
	return d, nil
}

// deliver has the sandbox send its webhooks and waits until all settled.
func (d *demoReceiver) deliver(ctx context.Context, sb *sandbox.Sandbox) (string, error) {
	n, err := sb.Deliver(ctx)
	if err != nil {
		return "", fmt.Errorf("webhook deliveries: %w", err)
	}
	return fmt.Sprintf("%d webhook deliveries received (%d refused after retries)", n.Sent, n.Failed), nil
}

// Close stops the receiver and removes its spool.
func (d *demoReceiver) Close() {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	d.srv.Shutdown(ctx)
	d.rc.Close()
	os.RemoveAll(d.dir)
}
