package output

import (
	"bufio"
	"encoding/csv"
	"errors"
	"io"
	"os"
	"path/filepath"

	"github.com/apache/arrow-go/v18/parquet/file"
	gojson "github.com/goccy/go-json"
)

// countRows returns the data rows of a file the run wrote (the raw files'
// come from the loader: Rows): CSV records after the header, Parquet rows,
// elements of a JSON array (index.json). Other files, and CSV files too
// malformed to count, have no row count (nil).
func countRows(path string) (*int64, error) {
	var n int64
	var err error
	switch filepath.Ext(path) {
	case ".csv":
		n, err = csvRows(path)
		if errors.Is(err, errUncountable) {
			return nil, nil
		}
	case ".parquet":
		n, err = parquetRows(path)
	case ".json":
		var ok bool
		n, ok, err = jsonRows(path)
		if !ok && err == nil {
			return nil, nil
		}
	default:
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	return &n, nil
}

var errUncountable = errors.New("not countable")

func csvRows(path string) (int64, error) {
	f, err := os.Open(path)
	if err != nil {
		return 0, err
	}
	defer f.Close()
	r := csv.NewReader(bufio.NewReader(f))
	r.FieldsPerRecord, r.LazyQuotes, r.ReuseRecord = -1, true, true
	var n int64
	for {
		_, err := r.Read()
		if err == io.EOF {
			break
		}
		var pe *csv.ParseError
		if errors.As(err, &pe) {
			return 0, errUncountable
		}
		if err != nil {
			return 0, err
		}
		n++
	}
	return max(n-1, 0), nil
}

func parquetRows(path string) (int64, error) {
	r, err := file.OpenParquetFile(path, false)
	if err != nil {
		return 0, err
	}
	defer r.Close()
	return r.NumRows(), nil
}

// jsonRows counts a top-level array's elements as it streams; ok is false
// for any other JSON document.
func jsonRows(path string) (n int64, ok bool, err error) {
	f, err := os.Open(path)
	if err != nil {
		return 0, false, err
	}
	defer f.Close()
	dec := gojson.NewDecoder(bufio.NewReader(f))
	tok, err := dec.Token()
	if err != nil {
		return 0, false, nil // empty or not JSON: not a table
	}
	if tok != gojson.Delim('[') {
		return 0, false, nil
	}
	for dec.More() {
		var skip gojson.RawMessage
		if err := dec.Decode(&skip); err != nil {
			return 0, false, nil
		}
		n++
	}
	return n, true, nil
}
