package raw_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"recon/extract/raw"
)

func TestIndexRoundTrip(t *testing.T) {
	day := time.Date(2026, 10, 1, 0, 0, 0, 0, time.UTC)
	full := raw.File{Source: raw.SourceBalance, Format: raw.FormatJSON, Path: "balances/balances.json", SHA256: strings.Repeat("ab", 32),
		Size: 765, Window: raw.Window{From: day, To: day.AddDate(0, 0, 1)}, Status: raw.StatusReady, ReportID: "r-1", Account: "acme_usd@rn.us.ny.acme",
		Page: 3, Request: "GET http://127.0.0.1:1/v4/config/fees?page=0&size=100 <é>", FetchedAt: day.Add(90 * time.Minute)}
	for _, tc := range []struct {
		name  string
		files []raw.File
	}{
		{"null", nil},
		{"empty", []raw.File{}},
		{"one", []raw.File{full}},
		{"several", []raw.File{full, {Source: raw.SourceLiquidation, Path: "liquidations/x.json", Status: raw.StatusFailed}, full}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			if err := raw.WriteIndex(dir, tc.files); err != nil {
				t.Fatal(err)
			}
			got, err := os.ReadFile(filepath.Join(dir, raw.IndexName))
			if err != nil {
				t.Fatal(err)
			}
			want, _ := json.MarshalIndent(tc.files, "", "  ")
			if diff := cmp.Diff(string(want)+"\n", string(got)); diff != "" {
				t.Errorf("index bytes differ from json.MarshalIndent (-want +got):\n%s", diff)
			}
			back, err := raw.ReadIndex(dir)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.files, back); diff != "" {
				t.Errorf("read back (-wrote +read):\n%s", diff)
			}
		})
	}
}

func TestReadIndexRejects(t *testing.T) {
	for _, tc := range []struct{ name, text, want string }{
		{"not an array", `{"path": "a"}`, "want a JSON array"},
		{"data after", `[] []`, "data after the array"},
		{"bad entry", `[{"size": "x"}]`, "cannot unmarshal"},
		{"truncated", `[{"path": "a"},`, "EOF"},
		{"leaves the folder", `[{"path": "../x"}]`, "leaves the folder"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			if err := os.WriteFile(filepath.Join(dir, raw.IndexName), []byte(tc.text), 0o644); err != nil {
				t.Fatal(err)
			}
			if _, err := raw.ReadIndex(dir); err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("ReadIndex(%s) = %v, want an error with %q", tc.text, err, tc.want)
			}
		})
	}
}
