package extract_test

import (
	"crypto/sha256"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"recon/extract"
	"recon/extract/raw"
)

func TestReuse(t *testing.T) {
	day := time.Date(2026, 10, 1, 0, 0, 0, 0, time.UTC)
	w, _ := raw.NewWindow(day, day.AddDate(0, 0, 1))
	body := "network_payment_id\r\np1\r\n"
	files := []raw.File{
		{Source: raw.SourcePaymentOps, Format: raw.FormatCSV, Path: "reports/PAYMENT_OPS/r1.csv", SHA256: fmt.Sprintf("%x", sha256.Sum256([]byte(body))),
			Size: int64(len(body)), Window: w, Status: raw.StatusReady, ReportID: "r1"},
		{Source: raw.SourceRecon, Format: raw.FormatCSV, Window: w, Status: raw.StatusFailed, ReportID: "r2"},
	}
	tests := []struct {
		name    string
		onDisk  string // the bytes of r1.csv
		wantErr string
	}{
		{"as listed", body, ""},
		{"changed", strings.Replace(body, "p1", "p2", 1), "sha256"},
		{"shorter", body[:10], "10 bytes, index.json lists 24"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			src, dst := t.TempDir(), t.TempDir()
			b, _ := json.Marshal(files)
			if err := os.WriteFile(filepath.Join(src, "index.json"), b, 0o644); err != nil {
				t.Fatal(err)
			}
			name := filepath.Join(src, "reports", "PAYMENT_OPS", "r1.csv")
			if err := os.MkdirAll(filepath.Dir(name), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(name, []byte(tt.onDisk), 0o644); err != nil {
				t.Fatal(err)
			}
			res, err := extract.Reuse(t.Context(), src, dst)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("err %v, want %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if len(res.Incomplete) != 1 || !strings.Contains(res.Incomplete[0], "recon") {
				t.Errorf("incomplete %q, want the FAILED RECON report", res.Incomplete)
			}
			got, err := os.ReadFile(filepath.Join(dst, "reports", "PAYMENT_OPS", "r1.csv"))
			if err != nil || string(got) != body {
				t.Errorf("copied file %q (%v), want %q", got, err, body)
			}
			index, err := raw.ReadIndex(dst)
			if err != nil || len(index) != len(files) {
				t.Errorf("index of the copy: %d files (%v), want %d", len(index), err, len(files))
			}
		})
	}
}
