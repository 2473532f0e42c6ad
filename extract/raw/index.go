package raw

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
)

// IndexName is the list of a raw folder's files.
const IndexName = "index.json"

// ReadIndex reads dir/index.json as written by WriteIndex.
func ReadIndex(dir string) ([]File, error) {
	b, err := os.ReadFile(filepath.Join(dir, IndexName))
	if err != nil {
		return nil, fmt.Errorf("read index: %w", err)
	}
	var files []File
	if err := json.Unmarshal(b, &files); err != nil {
		return nil, fmt.Errorf("read index %s: %w", dir, err)
	}
	for _, f := range files {
		if f.Path != "" && !filepath.IsLocal(filepath.FromSlash(f.Path)) {
			return nil, fmt.Errorf("read index %s: path %q leaves the folder", dir, f.Path)
		}
	}
	return files, nil
}

// WriteIndex writes dir/index.json through a temporary file, renamed into
// place once complete.
func WriteIndex(dir string, files []File) error {
	b, err := json.MarshalIndent(files, "", "  ")
	if err != nil {
		return err
	}
	b = append(b, '\n')
	tmp, err := os.CreateTemp(dir, "."+IndexName+".*.tmp")
	if err != nil {
		return fmt.Errorf("write index: %w", err)
	}
	_, err = tmp.Write(b)
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(tmp.Name(), filepath.Join(dir, IndexName))
	}
	if err != nil {
		os.Remove(tmp.Name())
		return fmt.Errorf("write index: %w", err)
	}
	return nil
}
