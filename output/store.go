// Package output writes a run's break reports and manifest and archives them
// in a store (a local folder, or S3).
package output

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
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
	// Put writes the object at key from r, which holds size bytes with the
	// hex sha256 sum; the store refuses content that does not match, and a
	// reader never sees a partial object.
	Put(ctx context.Context, key string, r io.Reader, size int64, sum string) error
	// Has reports whether key already holds an object of that size and sha256.
	Has(ctx context.Context, key string, size int64, sum string) (bool, error)
	// Get opens the object at key; a missing key gives an error wrapping fs.ErrNotExist.
	Get(ctx context.Context, key string) (io.ReadCloser, error)
	// List returns the keys under prefix, sorted.
	List(ctx context.Context, prefix string) ([]string, error)
	// URL names the store's location for messages and the run ledger.
	URL() string
}

// OpenStore returns the store for an archive URL: s3://bucket/prefix or a local folder.
func OpenStore(ctx context.Context, url string, opts S3Options) (Store, error) {
	if strings.HasPrefix(url, "s3://") {
		return NewS3Store(ctx, url, opts)
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

// Put writes key atomically, after checking size and sha256.
func (s *DirStore) Put(ctx context.Context, key string, r io.Reader, size int64, sum string) error {
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
	h := sha256.New()
	n, err := io.Copy(io.MultiWriter(tmp, h), ctxReader{ctx, r})
	if err != nil {
		tmp.Close()
		return fmt.Errorf("put %s: %w", key, err)
	}
	if got := hex.EncodeToString(h.Sum(nil)); n != size || got != sum {
		tmp.Close()
		return fmt.Errorf("put %s: content has %d bytes, sha256 %s; want %d bytes, %s", key, n, got, size, sum)
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

// PutFile puts the local file at path, of size bytes with the hex sha256
// sum, at key: as a hard link when the archive is on the same file system
// (nothing is copied; the run folder's name is removed afterwards), else
// through Put. A linked file reaches the disk with Sync, which Archive calls
// before it writes the manifest.
func (s *DirStore) PutFile(ctx context.Context, key, path string, size int64, sum string) error {
	p, err := s.path(key)
	if err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		return fmt.Errorf("put %s: %w", key, err)
	}
	tmp := filepath.Join(filepath.Dir(p), ".tmp-link-"+filepath.Base(p))
	os.Remove(tmp) // left by an archive that died
	if err := os.Link(path, tmp); err != nil {
		f, err := os.Open(path)
		if err != nil {
			return fmt.Errorf("put %s: %w", key, err)
		}
		defer f.Close()
		return s.Put(ctx, key, f, size, sum)
	}
	defer os.Remove(tmp)
	if st, err := os.Stat(tmp); err != nil || st.Size() != size {
		return fmt.Errorf("put %s: %s changed since it was described", key, path)
	}
	if err := syncLinked(tmp); err != nil {
		return fmt.Errorf("put %s: %w", key, err)
	}
	if err := os.Rename(tmp, p); err != nil {
		return fmt.Errorf("put %s: %w", key, err)
	}
	return nil
}

// Sync makes every file put so far durable (one syncfs(2) on Linux; linked
// files elsewhere were synced one by one).
func (s *DirStore) Sync(context.Context) error {
	if err := syncAll(s.root); err != nil {
		return fmt.Errorf("sync archive %s: %w", s.root, err)
	}
	return nil
}

// Has hashes the file at key, if there is one. A shared object named by
// its sha256 (ObjectKey) is only checked for its size: its bytes were
// checked when it was put, and are again whenever a replay fetches it, and
// hashing every slice of the history at every run would cost what slicing saves.
func (s *DirStore) Has(_ context.Context, key string, size int64, sum string) (bool, error) {
	p, err := s.path(key)
	if err != nil {
		return false, err
	}
	st, err := os.Stat(p)
	if errors.Is(err, fs.ErrNotExist) {
		return false, nil
	}
	if err != nil || st.Size() != size {
		return false, err
	}
	if len(sum) == 64 && key == ObjectKey(sum) {
		return true, nil
	}
	f, err := describe(filepath.Dir(p), filepath.Base(p))
	if err != nil {
		return false, err
	}
	return f.SHA256 == sum, nil
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
