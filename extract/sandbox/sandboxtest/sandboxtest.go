// Package sandboxtest serves a sandbox for the length of a test.
package sandboxtest

import (
	"net/http"
	"testing"

	"recon/extract/sandbox"
)

// Serve serves the sandbox of cfg on a loopback port until tb ends; wrap as in sandbox.Serve.
func Serve(tb testing.TB, cfg sandbox.Config, wrap ...func(http.Handler) http.Handler) *sandbox.Served {
	tb.Helper()
	s, err := sandbox.Serve(cfg, "127.0.0.1:0", wrap...)
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { s.Close() })
	return s
}
