// Package output writes a run's break reports and manifest and archives them
// in a store (a local folder, or S3).
package output

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
)

// Store is where runs are archived. Keys are slash-separated paths.
type Store interface {
	// Put writes the object at key; a reader never sees a partial object.
	Put(ctx context.Context, key string, r io.Reader) error
	// Get opens the object at key; a missing key gives an error wrapping fs.ErrNotExist.
	Get(ctx context.Context, key string) (io.ReadCloser, error)
	// List returns the keys under prefix, sorted.
	List(ctx context.Context, prefix string) ([]string, error)
	// URL names the store's location for messages and the run ledger.
	URL() string
}

// OpenStore returns the store for an archive URL: s3://bucket/prefix or a local folder.
func OpenStore(ctx context.Context, url string) (Store, error) {
	if strings.HasPrefix(url, "s3://") {
		return nil, fmt.Errorf("archive %s: S3 is not supported yet", url)
	}
	if url == "" {
		return nil, errors.New("archive URL is empty")
	}
	return NewDirStore(url)
}

// DirStore keeps objects as files under a folder; Put renames a temporary
// file into place, so an object appears whole or not at all.
type DirStore struct{ root string }

// NewDirStore returns a store rooted at dir, creating it.
func NewDirStore(dir string) (*DirStore, error) {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return nil, err
	}
	if err := os.MkdirAll(abs, 0o755); err != nil {
		return nil, fmt.Errorf("archive folder %s: %w", abs, err)
	}
	return &DirStore{root: abs}, nil
}

func (s *DirStore) path(key string) (string, error) {
	clean := filepath.FromSlash(strings.TrimPrefix(key, "/"))
	if !filepath.IsLocal(clean) {
		return "", fmt.Errorf("archive key %q leaves the archive", key)
	}
	return filepath.Join(s.root, clean), nil
}

// Put writes key atomically.
func (s *DirStore) Put(ctx context.Context, key string, r io.Reader) error {
	p, err := s.path(key)
	if err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		return fmt.Errorf("put %s: %w", key, err)
	}
	tmp, err := os.CreateTemp(filepath.Dir(p), ".tmp-*")
	if err != nil {
		return fmt.Errorf("put %s: %w", key, err)
	}
	defer os.Remove(tmp.Name())
	if _, err := io.Copy(tmp, ctxReader{ctx, r}); err != nil {
		tmp.Close()
		return fmt.Errorf("put %s: %w", key, err)
	}
	if err := tmp.Sync(); err != nil {
		tmp.Close()
		return fmt.Errorf("put %s: %w", key, err)
	}
	if err := tmp.Close(); err != nil {
		return fmt.Errorf("put %s: %w", key, err)
	}
	if err := os.Rename(tmp.Name(), p); err != nil {
		return fmt.Errorf("put %s: %w", key, err)
	}
	return nil
}

// Get opens key.
func (s *DirStore) Get(_ context.Context, key string) (io.ReadCloser, error) {
	p, err := s.path(key)
	if err != nil {
		return nil, err
	}
	f, err := os.Open(p)
	if err != nil {
		return nil, fmt.Errorf("get %s: %w", key, err)
	}
	return f, nil
}

// List returns the keys under prefix.
func (s *DirStore) List(_ context.Context, prefix string) ([]string, error) {
	var keys []string
	err := filepath.WalkDir(s.root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() || strings.HasPrefix(d.Name(), ".tmp-") {
			return nil
		}
		rel, err := filepath.Rel(s.root, p)
		if err != nil {
			return err
		}
		if k := filepath.ToSlash(rel); strings.HasPrefix(k, prefix) {
			keys = append(keys, k)
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("list %s: %w", prefix, err)
	}
	return keys, nil // WalkDir visits in lexical order
}

// URL returns the folder.
func (s *DirStore) URL() string { return s.root }

// ctxReader stops a copy when ctx is cancelled.
type ctxReader struct {
	ctx context.Context
	r   io.Reader
}

func (c ctxReader) Read(p []byte) (int, error) {
	if err := c.ctx.Err(); err != nil {
		return 0, err
	}
	return c.r.Read(p)
}
