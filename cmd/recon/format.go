package main

import (
	"bufio"
	"encoding/csv"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"iter"
	"maps"
	"slices"
	"strings"
	"text/tabwriter"

	"recon/output"
)

// formats of the listing commands.
var formats = []string{"table", "csv", "json"}

// table is a listing: column names and rows of text, a nil cell for NULL.
// The rows are read as they are written (a listing of every break is
// never held whole, but for the aligned table).
type table struct {
	cols []string
	rows iter.Seq[[]*string]
}

// aligned prints a table: cells separated by tabs, columns aligned two
// spaces apart. Its output is buffered, since tabwriter writes each cell
// apart (a listing of 600,000 breaks was 13 s of write calls): call Flush.
type aligned struct {
	*tabwriter.Writer
	buf *bufio.Writer
}

func newAligned(w io.Writer) *aligned {
	buf := bufio.NewWriter(w)
	return &aligned{Writer: tabwriter.NewWriter(buf, 0, 4, 2, ' ', 0), buf: buf}
}

// Flush writes the table out.
func (a *aligned) Flush() error {
	return errors.Join(a.Writer.Flush(), a.buf.Flush())
}

// write prints t as an aligned table, RFC 4180 CSV (CRLF line ends, every
// cell neutralised against spreadsheet formulas as breaks.csv is), or a JSON
// array of objects whose values are strings or null (amounts stay exact text).
func (t table) write(w io.Writer, format string) error {
	switch format {
	case "table":
		tw := newAligned(w)
		fmt.Fprintln(tw, strings.ToUpper(strings.Join(t.cols, "\t")))
		for r := range t.rows {
			cells := make([]string, len(r))
			for i, c := range r {
				if c != nil {
					cells[i] = *c
				}
			}
			fmt.Fprintln(tw, strings.Join(cells, "\t"))
		}
		return tw.Flush()
	case "csv":
		cw := csv.NewWriter(w)
		cw.UseCRLF = true
		cw.Write(t.cols)
		for r := range t.rows {
			cells := make([]string, len(r))
			for i, c := range r {
				if c != nil {
					cells[i] = output.Neutralise(*c)
				}
			}
			cw.Write(cells)
		}
		cw.Flush()
		return cw.Error()
	case "json":
		return t.writeJSON(w)
	}
	return usageErr("--format %q: want table, csv or json", format)
}

// writeJSON writes t's rows one at a time, with the bytes a json.Encoder
// indenting by two spaces gives for them as a []map[string]*string (keys
// sorted, HTML escaped, NULL as null): a map a row, encoded whole, took
// 5.9 GB for a listing of 600,000 breaks.
func (t table) writeJSON(w io.Writer) error {
	// a map holds one value per key, the last column's
	last := map[string]int{}
	for i, c := range t.cols {
		last[c] = i
	}
	keys := slices.Sorted(maps.Keys(last))
	names := make([][]byte, len(keys))
	for k, c := range keys {
		b, err := json.Marshal(c)
		if err != nil {
			return err
		}
		names[k] = b
	}
	bw := bufio.NewWriter(w)
	n := 0
	for row := range t.rows {
		if n++; n == 1 {
			bw.WriteString("[\n")
		} else {
			bw.WriteString(",\n")
		}
		if len(keys) == 0 {
			bw.WriteString("  {}")
			continue
		}
		bw.WriteString("  {\n")
		for k, c := range keys {
			bw.WriteString("    ")
			bw.Write(names[k])
			bw.WriteString(": ")
			if v := row[last[c]]; v == nil {
				bw.WriteString("null")
			} else if b, err := json.Marshal(*v); err != nil {
				return err
			} else {
				bw.Write(b)
			}
			if k < len(keys)-1 {
				bw.WriteByte(',')
			}
			bw.WriteByte('\n')
		}
		bw.WriteString("  }")
	}
	if n == 0 {
		bw.WriteString("[]\n")
	} else {
		bw.WriteString("\n]\n")
	}
	return bw.Flush()
}
