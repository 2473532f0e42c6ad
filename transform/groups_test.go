package transform

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	"recon/extract/raw"
)

// TestGroups: files split into the slices Load replaces, in order of first
// appearance; slices that are runs of the input are not copied.
func TestGroups(t *testing.T) {
	liq := func(p string) raw.File { return raw.File{Source: raw.SourceLiquidation, Path: p} }
	rep := func(p string) raw.File { return raw.File{Source: raw.SourceRecon, Path: p} }
	paths := func(gs [][]raw.File) [][]string {
		var out [][]string
		for _, g := range gs {
			var ps []string
			for _, f := range g {
				ps = append(ps, f.Path)
			}
			out = append(out, ps)
		}
		return out
	}
	tests := []struct {
		name   string
		files  []raw.File
		want   [][]string
		shared bool // the slices are views of the input
	}{
		{"runs", []raw.File{rep("r1"), liq("l1"), liq("l2"), liq("l3"), rep("r2")},
			[][]string{{"r1"}, {"l1", "l2", "l3"}, {"r2"}}, true},
		{"interleaved", []raw.File{liq("l1"), rep("r1"), liq("l2")},
			[][]string{{"l1", "l2"}, {"r1"}}, false},
		{"none", nil, nil, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := groups(tt.files)
			if diff := cmp.Diff(tt.want, paths(got)); diff != "" {
				t.Errorf("groups (-want +got):\n%s", diff)
			}
			for _, g := range got {
				if shared := &g[0] == &tt.files[indexOf(tt.files, g[0].Path)]; shared != tt.shared {
					t.Errorf("group of %s shares the input: %v, want %v", g[0].Path, shared, tt.shared)
				}
			}
		})
	}
}

func indexOf(files []raw.File, path string) int {
	for i, f := range files {
		if f.Path == path {
			return i
		}
	}
	return -1
}
