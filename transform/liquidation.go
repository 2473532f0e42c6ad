package transform

import (
	"bytes"
	"cmp"
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"path"
	"strings"
	"sync"
	"unicode"

	"github.com/apache/arrow-go/v18/arrow"

	"recon/extract/raw"
)

// liquidationChunk is how many liquidation files, liquidationChunkBytes how
// many of their bytes, are staged and replaced per transaction at most (a
// chunk holds one file at least); they bound the memory of a large load,
// which holds two chunks at a time (one stored, the next parsed).
const (
	liquidationChunk      = 10000
	liquidationChunkBytes = 32 << 20
)

// liquidationParts are the nested objects of a liquidation flattened into
// its row as <part>_<snake_case field>.
var liquidationParts = []string{"execution_strategy", "execution_summary", "trading_summary"}

// loadLiquidations replaces each liquidation, with its trades and executions,
// by id. A raw file is one liquidation (GET /liquidations/{id}, and every
// file of runs archived before list pages were kept) or a list page: of a
// page, each item that carries its trade_requests is loaded at its id's
// first occurrence, in files order, as extract reads the list; a summary is
// loaded from its own file, and a later repeat of an id is skipped.
// A chunk is parsed while the one before is stored: parsing is one core,
// DuckDB's appends and commit most of another.
func (l *Loader) loadLiquidations(ctx context.Context, conn *sql.Conn, files []raw.File) ([]FileStats, error) {
	parsed := make(chan *liquidationBatch) // unbuffered: one chunk parsed ahead at most
	stop := make(chan struct{})            // closed when a store fails
	var perr error                         // the parser's, read once parsed is closed
	go func() {
		defer close(parsed)
		listed := map[string]bool{} // ids met in the list pages
		for start := 0; start < len(files); {
			end, size := start+1, files[start].Size
			for end < len(files) && end-start < liquidationChunk && size+files[end].Size <= liquidationChunkBytes {
				size += files[end].Size
				end++
			}
			c, err := l.parseLiquidations(files[start:end], listed)
			if err != nil {
				perr = err
				return
			}
			select {
			case parsed <- c:
			case <-stop:
				c.release()
				return
			}
			start = end
		}
	}()
	// Every chunk parsed before a file that cannot be read is stored, as
	// when chunks were parsed and stored in turn.
	var out []FileStats
	var serr error
	for c := range parsed {
		if serr == nil {
			var fs []FileStats
			if fs, serr = l.storeLiquidations(ctx, conn, c); serr != nil {
				close(stop)
			}
			out = append(out, fs...)
		}
		c.release()
	}
	if err := cmp.Or(serr, perr); err != nil {
		return nil, err
	}
	return out, nil
}

var liquidationTables = []*Table{&Liquidations, &LiquidationTrades, &TradeExecutions}

// liquidationBatch is a chunk of liquidation files parsed: one builder and
// its record batches per table of liquidationTables, and each file's items.
type liquidationBatch struct {
	files []raw.File
	bs    []*builder
	recs  [][]arrow.RecordBatch
	items []*int64
}

func (c *liquidationBatch) release() {
	for i := range c.bs {
		c.bs[i].release()
		for _, r := range c.recs[i] {
			r.Release()
		}
	}
}

// parseLiquidations reads the rows of a chunk of files.
func (l *Loader) parseLiquidations(files []raw.File, listed map[string]bool) (*liquidationBatch, error) {
	c := &liquidationBatch{files: files, bs: make([]*builder, len(liquidationTables)),
		recs: make([][]arrow.RecordBatch, len(liquidationTables)), items: make([]*int64, len(files))}
	for i, t := range liquidationTables {
		c.bs[i] = newBuilder(t, func(rec arrow.RecordBatch) error { c.recs[i] = append(c.recs[i], rec); return nil })
	}
	err := func() error {
		for i, f := range files {
			body, err := readDoc(l.path(f))
			if err != nil {
				return err
			}
			if c.items[i], err = liquidationFileRows(c.bs, f.Path, body, listed); err != nil {
				return fmt.Errorf("liquidation %s: %w", f.Path, err)
			}
		}
		for _, b := range c.bs {
			if err := b.finish(); err != nil {
				return err
			}
		}
		return nil
	}()
	if err != nil {
		c.release()
		return nil, err
	}
	return c, nil
}

// storeLiquidations replaces, in one transaction, the liquidations of a
// parsed chunk with its rows.
func (l *Loader) storeLiquidations(ctx context.Context, conn *sql.Conn, c *liquidationBatch) ([]FileStats, error) {
	tx, err := conn.BeginTx(ctx, nil)
	if err != nil {
		return nil, err
	}
	defer tx.Rollback()
	last := make([]int64, len(liquidationTables))
	var bad []quarantined
	for i, t := range liquidationTables {
		if last[i], err = lastRowid(ctx, tx, t); err != nil {
			return nil, fmt.Errorf("load liquidations: %w", err)
		}
		if err := appendRecords(ctx, conn, "stage_"+t.Name, c.bs[i].schema, c.recs[i], insertSQL(t, "stage_"+t.Name+"_arrow"),
			sql.Named("run_id", l.runID)); err != nil {
			return nil, err
		}
		bad = append(bad, c.bs[i].bad...)
	}
	stats := fileStats(c.files, c.bs...)
	for i := range stats {
		stats[i].Items = c.items[i]
	}
	if err := stageRecord(ctx, conn, bad, stats); err != nil {
		return nil, err
	}
	args := []any{sql.Named("source", raw.SourceLiquidation), sql.Named("run_id", l.runID),
		sql.Named("account", nil), sql.Named("report_id", nil)}
	// The chunk's rows went straight into their tables; the rows there
	// before (rowid up to last) of a liquidation it brings are replaced.
	ids := fmt.Sprintf(`(SELECT liquidation_id FROM liquidations WHERE rowid > %d UNION SELECT record_key FROM stage_quarantine)`, last[0])
	stmts := []string{`DELETE FROM quarantine WHERE source = $source AND record_key IN ` + ids}
	for i, t := range liquidationTables {
		stmts = append(stmts, fmt.Sprintf(`DELETE FROM %s WHERE rowid <= %d AND liquidation_id IN %s`, t.Name, last[i], ids))
	}
	if err := execAll(ctx, tx, args, append(stmts, recordFilesSQL...)...); err != nil {
		return nil, fmt.Errorf("load liquidations: %w", err)
	}
	return stats, tx.Commit()
}

// liquidationFileRows flattens the liquidations of one raw file: the one
// it is, or the items of the list page it is that are loaded (see
// loadLiquidations). An item is positioned by its place in the page. It
// returns the items of a page, nil for a single liquidation.
func liquidationFileRows(bs []*builder, file string, body []byte, listed map[string]bool) (*int64, error) {
	items, isPage, err := LiquidationPage(body)
	if !isPage {
		return nil, liquidationRows(bs, pos{file: file, n: 1}, strings.TrimSuffix(path.Base(file), ".json"), body, nil)
	}
	if err != nil {
		return nil, unreadable(file, err)
	}
	for j, item := range items {
		id, whole, m := listedLiquidation(item)
		if id != "" {
			if listed[id] {
				continue // a repeat: the first occurrence is the record
			}
			listed[id] = true
			if !whole {
				continue // a summary: its own file is the record
			}
		} // without an id, the item is rejected with its place
		at := pos{file: file, n: int64(j + 1), path: pathAt("results", j)}
		if err := liquidationRows(bs, at, "", item, m); err != nil {
			return nil, err
		}
	}
	n := int64(len(items))
	return &n, nil
}

// LiquidationPage reads a liquidation raw file: isPage tells a list page
// (an object with results and no id) from one liquidation, items are the
// page's results.
func LiquidationPage(body []byte) (items []json.RawMessage, isPage bool, err error) {
	m, isObject := object(bytes.TrimPrefix(body, bom))
	results := m.get("results")
	if !isObject || m.has("id") || !m.has("results") {
		return nil, false, nil
	}
	if err := decodeJSON(results, &items); err != nil || items == nil {
		return nil, true, errors.New("a liquidation list page whose results is not an array")
	}
	return items, true, nil
}

// listedLiquidation is the id of a list item and whether it carries its
// trade requests (an array), as extract reads it, and its fields (nil when
// it is not an object).
func listedLiquidation(item json.RawMessage) (id string, whole bool, m fields) {
	m, ok := object(item)
	if !ok {
		return "", false, nil
	}
	if v, _ := jsonValue(m.get("id")); v.set && !v.isJSON && strings.TrimSpace(v.s) != "" {
		id = v.s
	}
	tr := bytes.TrimSpace(m.get("trade_requests"))
	return id, len(tr) > 0 && tr[0] == '[', m
}

// liquidationRows flattens one liquidation at at into its row, its trades
// and their executions; id is its id when the document does not say. A bad
// liquidation is rejected whole (its trades with it); a bad trade is
// rejected with its executions; a bad execution alone. Every rejected row
// keeps the liquidation's id, so a reload replaces it. m is body's fields
// when the caller has them, nil otherwise.
func liquidationRows(bs []*builder, at pos, id string, body []byte, m fields) error {
	lb, tb, eb := bs[0], bs[1], bs[2]
	file := at.file
	isObject := m != nil
	if !isObject {
		m, isObject = object(body)
	}
	if isObject {
		if v, _ := jsonValue(m.get("id")); v.set && !v.isJSON && strings.TrimSpace(v.s) != "" {
			id = v.s
		}
	}
	var trades []json.RawMessage
	ok, err := lb.add(at, body, func() error {
		if !isObject {
			return errors.New("not a JSON object")
		}
		if err := lb.setFields(m, liquidationShape); err != nil {
			return err
		}
		for _, part := range liquidationParts {
			if err := lb.setPart(part, m.get(part)); err != nil {
				return err
			}
		}
		if tr := m.get("trade_requests"); tr != nil && string(tr) != "null" {
			var err error
			if trades, err = elements(tr); err != nil {
				return errors.New("trade_requests is not an array")
			}
		}
		return nil
	})
	if err != nil || !ok {
		if !ok {
			lb.bad[len(lb.bad)-1].key = id
		}
		return err
	}
	parent := map[string]value{"liquidation_id": textValue(id)}
	for j, tr := range trades {
		tp := at.path.at("trade_requests", j)
		t, err := tb.element(pos{file: file, n: int64(j + 1), path: tp}, tr, tradeShape, parent)
		if err != nil || t == nil {
			return err
		}
		ex := t.get("trade_executions")
		if ex == nil || string(ex) == "null" {
			continue
		}
		execs, err := elements(ex)
		if err != nil {
			if err := eb.reject(quarantined{file: file, line: int64(j + 1), path: tp.at("trade_executions", -1).String(), key: id,
				reason: "trade_executions is not an array", raw: string(ex)}); err != nil {
				return err
			}
			continue
		}
		tradeID, _ := jsonValue(t.get("id"))
		keys := map[string]value{"liquidation_id": textValue(id), "trade_id": tradeID}
		for k, e := range execs {
			at := pos{file: file, n: int64(k + 1), path: tp.at("trade_executions", k)}
			if _, err := eb.element(at, e, executionShape, keys); err != nil {
				return err
			}
		}
	}
	return nil
}

// The shapes of a liquidation, its trade requests and their executions.
var (
	liquidationShape = shape{renames: map[string]string{"id": "liquidation_id"},
		skip: append([]string{"trade_requests"}, liquidationParts...)}
	tradeShape     = shape{renames: map[string]string{"id": "trade_id"}, skip: []string{"trade_executions"}}
	executionShape = shape{renames: map[string]string{"id": "execution_id"}}
)

// partColumns caches the column of a part's field (setPart).
var partColumns sync.Map // partField → string

type partField struct{ part, field string }

// setPart flattens a nested object of a liquidation into columns named
// <part>_<snake_case field>; its unknown fields go to extra as part.field.
func (b *builder) setPart(part string, raw json.RawMessage) error {
	if len(raw) == 0 || string(raw) == "null" {
		return nil
	}
	sub, ok := object(raw)
	if !ok {
		return fmt.Errorf("%s is not a JSON object", part)
	}
	for _, f := range sub {
		k, v := string(f.key), f.raw
		val, err := jsonValue(v)
		if err != nil {
			return fmt.Errorf("%s.%s: %w", part, k, err)
		}
		col, ok := partColumns.Load(partField{part, k})
		if !ok {
			col, _ = partColumns.LoadOrStore(partField{part, k}, part+"_"+snake(k))
		}
		if !b.set(col.(string), val) {
			b.setExtra(part+"."+k, v)
		}
	}
	return nil
}

// snake turns camelCase into snake_case (maxAmountPerTrade: max_amount_per_trade).
func snake(s string) string {
	var sb strings.Builder
	for i, r := range s {
		if unicode.IsUpper(r) {
			if i > 0 {
				sb.WriteByte('_')
			}
			r = unicode.ToLower(r)
		}
		sb.WriteRune(r)
	}
	return sb.String()
}
