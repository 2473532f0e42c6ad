package main

import (
	"bufio"
	"encoding/csv"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"

	"recon/output"
)

// formats of the listing commands.
var formats = []string{"table", "csv", "json"}

// table is a listing: column names and rows of text, a nil cell for NULL.
type table struct {
	cols []string
	rows [][]*string
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
		for _, r := range t.rows {
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
		for _, r := range t.rows {
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
		out := make([]map[string]*string, len(t.rows))
		for i, r := range t.rows {
			out[i] = make(map[string]*string, len(r))
			for j, c := range r {
				out[i][t.cols[j]] = c
			}
		}
		enc := json.NewEncoder(w)
		enc.SetIndent("", "  ")
		return enc.Encode(out)
	}
	return usageErr("--format %q: want table, csv or json", format)
}
