package extract

import (
	"context"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"

	"recon/extract/raw"
)

// Reuse takes the raw files of an earlier extraction instead of calling
// the network: src holds index.json and the files it lists, as Extract
// wrote them (the inputs/ folder of an archived run, for one). Each file is
// copied into dst and checked against the index (size and sha256); then
// dst/index.json is written. A source that was FAILED then makes the run
// incomplete now, named in Result.Incomplete.
func Reuse(ctx context.Context, src, dst string) (*Result, error) {
	files, err := raw.ReadIndex(src)
	if err != nil {
		return nil, fmt.Errorf("reuse raw files: %w", err)
	}
	res := &Result{Files: files}
	for _, f := range files {
		if err := ctx.Err(); err != nil {
			return nil, fmt.Errorf("reuse raw files: %w", err)
		}
		if f.Status == raw.StatusFailed {
			res.Incomplete = append(res.Incomplete, fmt.Sprintf("%s %s is FAILED in %s", f.Source, f.Window, src))
		}
		if f.Path == "" {
			continue
		}
		if err := copyChecked(src, dst, f); err != nil {
			return nil, fmt.Errorf("reuse %s: %w", f.Path, err)
		}
	}
	if err := os.MkdirAll(dst, 0o755); err != nil {
		return nil, fmt.Errorf("reuse raw files: %w", err)
	}
	if err := raw.WriteIndex(dst, files); err != nil {
		return nil, fmt.Errorf("reuse raw files: %w", err)
	}
	return res, nil
}

// copyChecked copies src/<f.Path> to dst/<f.Path>, failing when its size or
// sha256 is not what the index says.
func copyChecked(src, dst string, f raw.File) error {
	in, err := os.Open(filepath.Join(src, filepath.FromSlash(f.Path)))
	if err != nil {
		return err
	}
	defer in.Close()
	name := filepath.Join(dst, filepath.FromSlash(f.Path))
	if err := os.MkdirAll(filepath.Dir(name), 0o755); err != nil {
		return err
	}
	sum, n, err := writeFile(name, in, -1)
	switch {
	case err != nil:
		return err
	case n != f.Size:
		err = fmt.Errorf("%d bytes, index.json lists %d", n, f.Size)
	case sum != f.SHA256:
		err = fmt.Errorf("sha256 %s, index.json lists %s", sum, f.SHA256)
	}
	if err != nil {
		os.Remove(name)
	}
	return err
}

// ReportSpan is the window the report files of an extraction cover, from
// the first day of the earliest to the last day of the latest; false when
// there is no report file.
func ReportSpan(files []raw.File) (raw.Window, bool) {
	reports := slices.Collect(maps.Values(reportSources))
	var span raw.Window
	found := false
	for _, f := range files {
		if !slices.Contains(reports, f.Source) {
			continue
		}
		if !found || f.Window.From.Before(span.From) {
			span.From = f.Window.From
		}
		if !found || f.Window.To.After(span.To) {
			span.To = f.Window.To
		}
		found = true
	}
	return span, found
}
