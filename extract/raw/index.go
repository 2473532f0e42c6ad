package raw

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
)

// IndexName is the list of a raw folder's files.
const IndexName = "index.json"

// ReadIndex reads dir/index.json as written by WriteIndex, one entry at a
// time: at 1M payments a day the index lists about 360,000 files (180 MB).
func ReadIndex(dir string) ([]File, error) {
	f, err := os.Open(filepath.Join(dir, IndexName))
	if err != nil {
		return nil, fmt.Errorf("read index: %w", err)
	}
	defer f.Close()
	files, err := decodeIndex(bufio.NewReaderSize(f, 1<<20))
	if err != nil {
		return nil, fmt.Errorf("read index %s: %w", dir, err)
	}
	for _, f := range files {
		if f.Path != "" && !filepath.IsLocal(filepath.FromSlash(f.Path)) {
			return nil, fmt.Errorf("read index %s: path %q leaves the folder", dir, f.Path)
		}
	}
	return files, nil
}

// decodeIndex decodes a JSON array of File (or null), and nothing after it.
func decodeIndex(r io.Reader) ([]File, error) {
	d := json.NewDecoder(r)
	tok, err := d.Token()
	if err != nil {
		return nil, err
	}
	var files []File
	switch tok {
	case nil: // null
	case json.Delim('['):
		files = []File{}
		for d.More() {
			var f File
			if err := d.Decode(&f); err != nil {
				return nil, err
			}
			files = append(files, f)
		}
		if _, err := d.Token(); err != nil {
			return nil, err
		}
	default:
		return nil, fmt.Errorf("want a JSON array, got %v", tok)
	}
	if _, err := d.Token(); !errors.Is(err, io.EOF) {
		return nil, errors.New("data after the array")
	}
	return files, nil
}

// WriteIndex writes dir/index.json through a temporary file, renamed into
// place once complete. The bytes are json.MarshalIndent(files, "", "  ")
// and a newline, written one entry at a time.
func WriteIndex(dir string, files []File) error {
	tmp, err := os.CreateTemp(dir, "."+IndexName+".*.tmp")
	if err != nil {
		return fmt.Errorf("write index: %w", err)
	}
	w := bufio.NewWriterSize(tmp, 1<<20)
	err = encodeIndex(w, files)
	if err == nil {
		err = w.Flush()
	}
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

// encodeIndex writes what json.MarshalIndent(files, "", "  ") writes, and a newline.
func encodeIndex(w io.Writer, files []File) error {
	if len(files) == 0 {
		b, _ := json.Marshal(files) // null or []
		_, err := w.Write(append(b, '\n'))
		return err
	}
	if _, err := io.WriteString(w, "[\n"); err != nil {
		return err
	}
	for i := range files {
		b, err := json.MarshalIndent(files[i], "  ", "  ")
		if err != nil {
			return err
		}
		sep := ",\n"
		if i == len(files)-1 {
			sep = "\n"
		}
		if _, err := fmt.Fprintf(w, "  %s%s", b, sep); err != nil {
			return err
		}
	}
	_, err := io.WriteString(w, "]\n")
	return err
}
