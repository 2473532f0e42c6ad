package transform

import (
	"bytes"
	"cmp"
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"runtime/debug"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/decimal128"
	"golang.org/x/sync/errgroup"

	"recon/extract/raw"
)

// A server API Payment is loaded into payments and four child tables: the
// fee totals of contract.fee_info, the execution results (and the
// liquidation and push-forward ones), the quote elements and the user_info
// steps. Child rows carry their payment's file and element number as
// provenance, so the one payment row kept of a key (Payments.Keep) keeps
// its own children.

// movement are the columns an execution result shares with a quote element.
func movement() []Column {
	return cols(text("sender_address", "receiver_address"),
		one("sending_amount", Amount), one("receiving_amount", Amount),
		one("sending_fee", Amount), one("receiving_fee", Amount),
		one("sending_currency_code", Currency), one("receiving_currency_code", Currency),
		one("transfer_currency_code", Currency),
		one("fx_rate", Amount), one("fx_base_currency", Currency), one("fx_counter_currency", Currency), text("fx_type"))
}

// Payment child tables.
var (
	PaymentFees = Table{
		Name: "payment_fees", Source: raw.SourcePayment, Prov: ByRun,
		Columns: cols(required("payment_id"), one("fee_currency", Currency), one("total_fee", Amount)),
		Key:     []string{"payment_id"},
	}
	PaymentExecutionResults = Table{
		Name: "payment_execution_results", Source: raw.SourcePayment, Extra: true, Prov: ByRun,
		Columns: cols(required("payment_id"), text("result_list"), required("execution_result_id"),
			one("execution_timestamp", Time), text("execution_result_type"), one("execution_result_order", Amount),
			movement(), one("intermediary_delta", Amount), text("incentive_type"), one("incentive_value", Amount),
			text("transaction_hash", "venue_id"), one("fiat_adjusted_value", Amount), text("liquidity_payment_id"),
			text("sender_node_type", "receiver_node_type", "payment_type", "payment_method")),
		Key: []string{"payment_id"},
	}
	PaymentQuoteElements = Table{
		Name: "payment_quote_elements", Source: raw.SourcePayment, Extra: true, Prov: ByRun,
		Columns: cols(required("payment_id"), required("quote_element_id"), text("quote_element_type"),
			one("quote_element_order", Amount), movement()),
		Key: []string{"payment_id"},
	}
	PaymentUserInfo = Table{
		Name: "payment_user_info", Source: raw.SourcePayment, Prov: ByRun,
		Columns: cols(required("payment_id"), text("node_address"), required("step"), one("position", Amount),
			one("created_at", Time), text("sub_state", "json")),
		Key: []string{"payment_id"},
	}
)

// paymentTables are loaded together, payments first.
var paymentTables = []*Table{&Payments, &PaymentFees, &PaymentExecutionResults, &PaymentQuoteElements, &PaymentUserInfo}

// resultLists are the arrays of a Payment shaped as execution results, and
// the result_list value of their rows.
var resultLists = []struct{ field, name string }{
	{"execution_results", "execution"},
	{"liquidation_execution_results", "liquidation"},
	{"push_forward_execution_results", "push_forward"},
}

// userInfoSteps are the lifecycle arrays of a user_info entry (spec: User info entry).
var userInfoSteps = []string{"accepted", "locked", "lock_declined", "retry_accept", "retry_settlement", "settlement",
	"settlement_declined", "failed", "executed", "completed", "forwarded", "returned"}

// userInfoShape reads a user_info step item.
var userInfoShape = shape{renames: map[string]string{"subState": "sub_state"}}

// movementShape reads an execution result or a quote element; fx_rate is read apart.
var movementShape = shape{skip: []string{"fx_rate"}}

// fxColumns are the columns of the fields of an fx_rate object.
var fxColumns = [...]struct{ field, col string }{{"rate", "fx_rate"}, {"base_currency_code", "fx_base_currency"},
	{"counter_currency_code", "fx_counter_currency"}, {"type", "fx_type"}}

// paymentChunk is how many payment pages are staged at a time: it bounds
// the memory of a large load (the children are several rows a payment).
const paymentChunk = 100

// paymentParsers is how many goroutines parse a chunk's pages (page k goes
// to parser k mod paymentParsers).
const paymentParsers = 2

// paymentParser is one parser's builders, one per table of paymentTables,
// and the record batches they flushed.
type paymentParser struct {
	bs   []*builder
	recs [][]arrow.RecordBatch
	maps fieldMaps // of the payment being read
}

func newPaymentParser() *paymentParser {
	p := &paymentParser{bs: make([]*builder, len(paymentTables)), recs: make([][]arrow.RecordBatch, len(paymentTables))}
	for i, t := range paymentTables {
		p.bs[i] = newBuilder(t, func(rec arrow.RecordBatch) error { p.recs[i] = append(p.recs[i], rec); return nil })
	}
	return p
}

// release frees the parser's builders and records; it may be called again.
func (p *paymentParser) release() {
	for i := range p.bs {
		p.bs[i].release()
		for _, r := range p.recs[i] {
			r.Release()
		}
		p.recs[i] = nil
	}
	p.bs = nil
}

// page adds the payments of one page, with their children.
func (p *paymentParser) page(l *Loader, f raw.File) error {
	content, err := readPage(l.path(f), f.Path)
	if err != nil {
		return fmt.Errorf("read payments pages: %s: %w", f.Path, err)
	}
	since := raw.PaymentsSince(f)
	for j, item := range content {
		doc := paymentObjects(item, &p.maps)
		if since && !paymentInWindow(doc, f.Window) {
			p.maps.recycle()
			continue
		}
		at := pos{file: f.Path, n: int64(j + 1), path: pathAt("content", j)}
		err := paymentRows(p.bs, at, item, doc)
		p.maps.recycle() // the rows are built: doc is read no more
		if err != nil {
			return fmt.Errorf("read payments pages: %w", err)
		}
	}
	return nil
}

// loadPayments loads all pages of payments, with their children, in one
// transaction: every payment brought replaces its row and its children.
// The rows are staged first: appended straight into their tables, a
// hundred chunks in one transaction ran out of DuckDB's 512 MB at a
// million payments.
func (l *Loader) loadPayments(ctx context.Context, conn *sql.Conn, files []raw.File) ([]FileStats, error) {
	parsers := make([]*paymentParser, paymentParsers)
	for w := range parsers {
		parsers[w] = newPaymentParser()
		defer parsers[w].release()
	}
	// A chunk is staged while the parsers read the next one: DuckDB's
	// appends leave part of a core the parse can use.
	appended := make(chan error, 1)
	appended <- nil
	for start := 0; start < len(files); start += paymentChunk {
		end := min(start+paymentChunk, len(files))
		var g errgroup.Group
		for w, p := range parsers {
			g.Go(func() error {
				for k := start + w; k < end; k += paymentParsers {
					if err := p.page(l, files[k]); err != nil {
						return err
					}
				}
				for _, b := range p.bs {
					if err := b.finish(); err != nil {
						return err
					}
				}
				return nil
			})
		}
		perr, aerr := g.Wait(), <-appended
		if err := cmp.Or(perr, aerr); err != nil {
			return nil, err
		}
		recs := make([][]arrow.RecordBatch, len(paymentTables))
		for i := range paymentTables {
			for _, p := range parsers {
				recs[i] = append(recs[i], p.recs[i]...)
				p.recs[i] = nil
			}
		}
		go func(first bool) { appended <- stagePayments(ctx, conn, parsers[0].bs, recs, first) }(start == 0)
	}
	if err := <-appended; err != nil {
		return nil, err
	}
	var bad []quarantined
	for i := range paymentTables {
		for _, p := range parsers {
			bad = append(bad, p.bs[i].bad...)
		}
	}
	payments := make([]*builder, len(parsers))
	for w, p := range parsers {
		payments[w] = p.bs[0]
	}
	stats := fileStats(files, payments...) // the payments of each page; their children are not rows of the file
	// The final inserts are DuckDB's peak: the parse's memory goes back to
	// the system first, not when Go's scavenger gets to it.
	for _, p := range parsers {
		p.release()
	}
	debug.FreeOSMemory()
	if err := stageRecord(ctx, conn, bad, stats); err != nil {
		return nil, err
	}
	tx, err := conn.BeginTx(ctx, nil)
	if err != nil {
		return nil, err
	}
	defer tx.Rollback()
	args := []any{sql.Named("source", raw.SourcePayment), sql.Named("run_id", l.runID),
		sql.Named("account", nil), sql.Named("report_id", nil)}
	var once bool // no payment staged twice: every staged row is kept, without ranking copies
	if err := tx.QueryRowContext(ctx, `SELECT count(*) = count(DISTINCT payment_id) FROM stage_payments`).Scan(&once); err != nil {
		return nil, fmt.Errorf("load payments: %w", err)
	}
	stmts := replacePaymentsSQL(once)
	stmts = append(stmts, `DELETE FROM quarantine q USING stage_files f
		WHERE q.source = $source AND q.window_from >= f.window_from AND q.window_to <= f.window_to`)
	if err := execAll(ctx, tx, args, append(stmts, recordFilesSQL...)...); err != nil {
		return nil, fmt.Errorf("load payments: %w", err)
	}
	return stats, tx.Commit()
}

// stagePayments appends each table's records (recs, by table of
// paymentTables; bs are builders of them) to its stage table, created by
// the first chunk, and releases them.
func stagePayments(ctx context.Context, conn *sql.Conn, bs []*builder, recs [][]arrow.RecordBatch, first bool) error {
	defer func() {
		for _, rs := range recs {
			for _, r := range rs {
				r.Release()
			}
		}
	}()
	for i, t := range paymentTables {
		q := fmt.Sprintf(`INSERT INTO stage_%[1]s SELECT * FROM stage_%[1]s_arrow`, t.Name)
		if first {
			q = fmt.Sprintf(`CREATE OR REPLACE TEMP TABLE stage_%[1]s AS SELECT * FROM stage_%[1]s_arrow`, t.Name)
		}
		if err := appendRecords(ctx, conn, "stage_"+t.Name, bs[i].schema, recs[i], q); err != nil {
			return err
		}
	}
	return nil
}

// replacePaymentsSQL replaces the staged payments and their children: the
// copy of a payment kept (Payments.Keep) with its own children only, or,
// when no payment was staged twice (once), every staged row as it is.
func replacePaymentsSQL(once bool) []string {
	ids := `(SELECT payment_id FROM stage_payments)`
	stmts := []string{`DELETE FROM quarantine WHERE source = $source AND record_key IN (SELECT record_key FROM stage_quarantine)`,
		`DELETE FROM quarantine WHERE source = $source AND record_key IN ` + ids}
	for _, t := range paymentTables {
		stmts = append(stmts, fmt.Sprintf(`DELETE FROM %s WHERE payment_id IN %s`, t.Name, ids))
	}
	all := Payments
	all.Keep = "" // every row of the stage given
	if once {
		stmts = append(stmts, insertSQL(&all, "stage_payments"))
		for _, t := range paymentTables[1:] {
			stmts = append(stmts, insertSQL(t, "stage_"+t.Name))
		}
		return stmts
	}
	// The copy of each payment kept is ranked on a few columns, then copied
	// whole by its row id: a window over whole rows ran out of DuckDB's
	// memory on an older 1M day, whose two lists stage 2M payments.
	stmts = append(stmts, `CREATE OR REPLACE TEMP TABLE stage_kept AS SELECT rowid AS _row, payment_id, _file, _line FROM stage_payments
		QUALIFY row_number() OVER (PARTITION BY payment_id ORDER BY `+Payments.Keep+`) = 1`)
	stmts = append(stmts, insertSQL(&all, `(SELECT * FROM stage_payments WHERE rowid IN (SELECT _row FROM stage_kept))`))
	// The children of the payment row kept, and of no other copy of it.
	for _, t := range paymentTables[1:] {
		stmts = append(stmts, insertSQL(t, fmt.Sprintf(`(SELECT c.* FROM stage_%s c SEMI JOIN stage_kept k
			ON k.payment_id = c.payment_id AND k._file = c._file AND k._line = c._line)`, t.Name)))
	}
	return stmts
}

// paymentInWindow reports whether an item of a page modified since w's
// start is one the two lists over w would hold: executed or last modified
// in w (raw.InPaymentWindow). An item whose times cannot be read is kept,
// for the loader to judge.
func paymentInWindow(doc paymentDoc, w raw.Window) bool {
	modified, err := jsonValue(doc.objs[""]["modified_at"])
	if doc.objs == nil || err != nil || !modified.set {
		return true
	}
	for _, name := range []string{"executed_at", "modified_at"} {
		v, err := jsonValue(doc.objs[""][name])
		if err != nil || !v.set {
			continue
		}
		t, err := time.Parse(time.RFC3339Nano, v.s)
		if err != nil || raw.InPaymentWindow(w, t) {
			return true
		}
	}
	return false
}

// paymentDoc is a Payment's objects decoded once, by their path in
// paymentKnown ("" the payment, "contract.quote" its quote): the row, the
// child rows and the extra read them, not the text again.
type paymentDoc struct {
	objs  map[string]map[string]json.RawMessage
	lists map[listKey][]listed // a direct doc's lists (paymentLists)
	// direct: the objects hold what decoding the text into paymentJSON
	// would (paymentRow reads them instead): the scanner read it in one
	// pass, no known object has a key twice or a key that differs from a
	// known field only in case, and every known object is one or null.
	direct bool
}

// listKey names a list of a Payment: its object's path and its field.
type listKey struct{ obj, field string }

// paymentLists are the lists of a Payment that child rows come from.
var paymentLists = map[listKey]bool{
	{"", "execution_results"}: true, {"", "liquidation_execution_results"}: true,
	{"", "push_forward_execution_results"}: true, {"", "user_info"}: true,
	{"contract.quote", "quote_elements"}: true, {"contract.fee_info", "total_fees"}: true,
}

// each calls fn with the path and every element of a list of the
// payment at at (each), read from the doc when it is direct.
func (doc paymentDoc) each(k listKey, at jsonPath, fn func(jsonPath, listed) error) error {
	name := k.field
	if k.obj != "" {
		name = k.obj + "." + k.field
	}
	if !doc.direct {
		return each(doc.objs[k.obj][k.field], at, name, fn)
	}
	for i, e := range doc.lists[k] {
		if err := fn(at.at(name, i), e); err != nil {
			return err
		}
	}
	return nil
}

// paymentObjects decodes the objects of a Payment that paymentKnown names,
// the scanner's field maps from maps (nil: new ones); objs is nil when the
// payment is not an object.
func paymentObjects(raw json.RawMessage, maps *fieldMaps) paymentDoc {
	if doc, ok := scanPayment(bytes.TrimSpace(raw), maps); ok {
		return doc
	}
	return decodePayment(raw)
}

// decodePayment is paymentObjects for any text: each known object is
// decoded on its own, by the scanner or goccy/go-json (object).
func decodePayment(raw json.RawMessage) paymentDoc {
	fs, ok := object(raw)
	if !ok {
		return paymentDoc{}
	}
	doc := paymentDoc{objs: map[string]map[string]json.RawMessage{"": fs.toMap()}}
	var walk func(prefix string, m map[string]json.RawMessage)
	walk = func(prefix string, m map[string]json.RawMessage) {
		for k, v := range m {
			name := k
			if prefix != "" {
				name = prefix + "." + k
			}
			if _, nested := paymentKnown[name]; nested {
				if sub, ok := object(v); ok {
					doc.objs[name] = sub.toMap()
					walk(name, doc.objs[name])
				}
			}
		}
	}
	walk("", doc.objs[""])
	return doc
}

// scanPayment is paymentObjects in one pass of the scanner, for a Payment
// it can make direct; ok is false for any other.
func scanPayment(b []byte, maps *fieldMaps) (paymentDoc, bool) {
	if len(b) < 2 || b[0] != '{' {
		return paymentDoc{}, false
	}
	objs := make(map[string]map[string]json.RawMessage, len(paymentKnown))
	lists := map[listKey][]listed{}
	var obj func(i int, name string, depth int) (int, bool)
	obj = func(i int, name string, depth int) (int, bool) {
		m := maps.get()
		objs[name] = m
		nested := paymentNested[name]
		return scanSeq(b, i+1, '}', func(j int) (int, bool) {
			key, start, ok := scanKey(b, j)
			if !ok || !plainKey(key) {
				return 0, false
			}
			if foldsToKnown(key, paymentKnown[name]) {
				return 0, false
			}
			end := 0
			switch child := nested[string(key)]; {
			case child != "" && start < len(b) && b[start] == '{':
				end, ok = obj(start, child, depth+1)
			case child != "" && !(start < len(b) && b[start] == 'n'):
				return 0, false // a known object that is not one (null is no object)
			case start < len(b) && b[start] == '[' && paymentLists[listKey{name, string(key)}]:
				var items []listed
				items, end, ok = scanList(b, start, depth+1, maps)
				lists[listKey{name, string(key)}] = items
			default:
				end, ok = scanValue(b, start, depth)
			}
			n := len(m)
			m[keyString(key)] = json.RawMessage(b[start:end:end])
			return end, ok && len(m) > n
		})
	}
	end, ok := obj(0, "", 0)
	if !ok || end != len(b) {
		return paymentDoc{}, false
	}
	return paymentDoc{objs: objs, lists: lists, direct: true}, true
}

// scanList splits the array at b[i] (at depth) into its elements, those
// that are objects into their fields, and returns its end. The elements
// and their fields are kept in maps (nil: slices of their own).
func scanList(b []byte, i, depth int, maps *fieldMaps) ([]listed, int, bool) {
	var own []listed
	items, arena := &own, (*[]field)(nil)
	if maps != nil {
		items, arena = &maps.items, &maps.arena
	}
	from := len(*items)
	end, ok := scanSeq(b, i+1, ']', func(j int) (int, bool) {
		if j < len(b) && b[j] == '{' {
			if fs, end, ok := scanFieldsAt(b, j, depth+1, arena); ok {
				*items = append(*items, listed{b[j:end:end], fs, true})
				return end, true
			}
		}
		end, ok := scanValue(b, j, depth)
		*items = append(*items, listed{raw: b[j:end:end]})
		return end, ok
	})
	to := len(*items)
	return (*items)[from:to:to], end, ok
}

// foldsToKnown reports whether key is a known field in another case (and
// not the field itself).
func foldsToKnown(key []byte, known []string) bool {
	if contains(known, string(key)) {
		return false
	}
	for _, k := range known {
		if strings.EqualFold(string(key), k) {
			return true
		}
	}
	return false
}

// paymentKnown are the fields of a Payment (and of its nested objects, as
// object.field) that a column or a child table holds; the others go to extra.
var paymentKnown = map[string][]string{
	"": {"payment_id", "payment_state", "payment_type", "contract_hash", "accepted_at", "locked_at", "executed_at",
		"completed_at", "returned_at", "modified_at", "returns_payment_with_id", "returned_by_payment_with_id",
		"crypto_transaction_id", "contract", "internal_info", "liquidation_details", "execution_results",
		"liquidation_execution_results", "push_forward_execution_results", "user_info"},
	"contract":            {"sender_end_to_end_id", "created_at", "expires_at", "quote", "fee_info"},
	"contract.quote":      {"quote_id", "type", "amount", "currency_code", "sender_address", "receiver_address", "payment_method", "quote_elements"},
	"contract.fee_info":   {"nodes", "total_fees"},
	"internal_info":       {"connector_role", "internal_id", "labels"},
	"liquidation_details": {"id", "status", "failure_reason"},
}

// paymentNested names, by object and key, the known objects nested in
// each ("contract" → "quote" → "contract.quote").
var paymentNested = func() map[string]map[string]string {
	nested := map[string]map[string]string{}
	for name := range paymentKnown {
		nested[name] = map[string]string{}
	}
	for name := range paymentKnown {
		if name != "" {
			parent, key := "", name
			if i := strings.LastIndexByte(name, '.'); i >= 0 {
				parent, key = name[:i], name[i+1:]
			}
			nested[parent][key] = name
		}
	}
	return nested
}()

// paymentRows adds one Payment to payments and its children to the child
// builders. A payment that is not one is rejected alone; a bad child is
// rejected alone, under its payment's id. The children come first: the
// payment row carries fee_totals_differ, read from the children loaded.
func paymentRows(bs []*builder, at pos, raw json.RawMessage, doc paymentDoc) error {
	m := doc.objs[""]
	idv, _ := jsonValue(m["payment_id"])
	if m == nil || !utf8.Valid(raw) || !idv.set || idv.isJSON { // no children (invalid UTF-8: quarantined whole)
		return paymentRow(bs[0], at, raw, doc, nil)
	}
	parent := map[string]value{"payment_id": idv}
	quote := doc.objs["contract.quote"]
	fees := feeTotals{}
	if err := doc.each(listKey{"contract.fee_info", "total_fees"}, at.path, func(p jsonPath, e listed) error {
		if fs, err := bs[1].elementOf(pos{at.file, at.n, p}, e, shape{}, parent); fs == nil || err != nil {
			return err
		}
		fees.add(bs[1].last("fee_currency"), bs[1].last("total_fee"), 0)
		return nil
	}); err != nil {
		return err
	}
	fixed := map[string]value{"payment_id": idv} // one map a payment, list values set per list
	fixed["payment_type"], _ = jsonValue(m["payment_type"])
	fixed["payment_method"], _ = jsonValue(quote["payment_method"])
	for _, rl := range resultLists {
		fixed["result_list"] = textValue(rl.name)
		if err := resultRows(bs[2], at, doc, rl.field, fixed, fees); err != nil {
			return err
		}
	}
	if err := doc.each(listKey{"contract.quote", "quote_elements"}, at.path, func(p jsonPath, e listed) error {
		_, err := movementRow(bs[3], pos{at.file, at.n, p}, e, parent)
		return err
	}); err != nil {
		return err
	}
	n := 0
	fixed = map[string]value{"payment_id": idv}
	if err := doc.each(listKey{"", "user_info"}, at.path, func(p jsonPath, e listed) error {
		entry, _ := e.fields()
		node, _ := jsonValue(entry.get("node_address"))
		for _, step := range userInfoSteps {
			if err := each(entry.get(step), p, step, func(sp jsonPath, item listed) error {
				n++
				fixed["node_address"], fixed["step"], fixed["position"] = node, textValue(step), textValue(strconv.Itoa(n))
				_, err := bs[4].elementOf(pos{at.file, at.n, sp}, item, userInfoShape, fixed)
				return err
			}); err != nil {
				return err
			}
		}
		return nil
	}); err != nil {
		return err
	}
	return paymentRow(bs[0], at, raw, doc, map[string]value{"fee_totals_differ": textValue(strconv.FormatBool(fees.differ()))})
}

// resultRows adds the execution results of one list of a payment. Those of
// execution_results get their node types: the sender of the first (lowest
// execution_result_order) is INITIAL, the receiver of the last TERMINAL,
// any other side INTERMEDIATE (DESIGN §3, the fee configuration's
// node_type). The fees of its TRANSFER results loaded go into fees.
func resultRows(b *builder, at pos, doc paymentDoc, field string, fixed map[string]value, fees feeTotals) error {
	type element struct {
		path  jsonPath
		e     listed
		order typed
	}
	var elems []element
	order := &PaymentExecutionResults.Columns[PaymentExecutionResults.index("execution_result_order")]
	var first, last decimal128.Num
	ends := false
	if err := doc.each(listKey{"", field}, at.path, func(p jsonPath, e listed) error {
		el := element{path: p, e: e, order: typed{null: true}}
		el.e.fs, el.e.obj = e.fields()
		if v, err := jsonValue(el.e.fs.get("execution_result_order")); err == nil {
			var t typed
			if why := order.check(v, &t); why == "" && !t.null {
				el.order = t
				if !ends || t.amount.Less(first) {
					first = t.amount
				}
				if !ends || last.Less(t.amount) {
					last = t.amount
				}
				ends = true
			}
		}
		elems = append(elems, el)
		return nil
	}); err != nil {
		return err
	}
	execution := fixed["result_list"].s == "execution"
	for _, el := range elems {
		delete(fixed, "sender_node_type")
		delete(fixed, "receiver_node_type")
		if execution {
			fixed["sender_node_type"], fixed["receiver_node_type"] = textValue("INTERMEDIATE"), textValue("INTERMEDIATE")
			if ends && !el.order.null && el.order.amount == first {
				fixed["sender_node_type"] = textValue("INITIAL")
			}
			if ends && !el.order.null && el.order.amount == last {
				fixed["receiver_node_type"] = textValue("TERMINAL")
			}
		}
		ok, err := movementRow(b, pos{at.file, at.n, el.path}, el.e, fixed)
		if err != nil {
			return err
		}
		if ok && execution && b.last("execution_result_type").s == "TRANSFER" {
			fees.add(b.last("transfer_currency_code"), b.last("sending_fee"), 1)
			fees.add(b.last("transfer_currency_code"), b.last("receiving_fee"), 1)
		}
	}
	return nil
}

// feeTotals adds up, per currency, a payment's fee_info.total_fees (side 0)
// and its TRANSFER execution results' fees (side 1), as loaded.
type feeTotals map[string]*[2]decimal128.Num

// add adds amount (null: nothing) to side of currency (null is a currency of its own).
func (f feeTotals) add(currency, amount typed, side int) {
	if amount.null {
		return
	}
	key := "\x00null"
	if !currency.null {
		key = currency.s
	}
	t := f[key]
	if t == nil {
		t = &[2]decimal128.Num{}
		f[key] = t
	}
	t[side] = t[side].Add(amount.amount)
}

// differ is true when the two sides differ in some currency.
func (f feeTotals) differ() bool {
	for _, t := range f {
		if t[0] != t[1] {
			return true
		}
	}
	return false
}

// each calls fn with the path and text of every element of a JSON array,
// the member name of at (fn splits an element itself); null or absent is
// no element, and anything else is ignored here (the payment's extra keeps
// what is not an array).
func each(raw json.RawMessage, at jsonPath, name string, fn func(jsonPath, listed) error) error {
	items, err := elements(raw)
	if err != nil {
		return nil
	}
	for i, e := range items {
		if err := fn(at.at(name, i), listed{raw: e}); err != nil {
			return err
		}
	}
	return nil
}

// movementRow adds an execution result or a quote element; fx_rate is an
// object {rate, base_currency_code, counter_currency_code, type} or a
// number. It reports whether the row loaded.
func movementRow(b *builder, at pos, e listed, fixed map[string]value) (bool, error) {
	return b.add(at, e.raw, func() error {
		defer func() { // last: an element may not override its payment's values, and a rejected one keeps them
			for k, v := range fixed {
				b.set(k, v)
			}
		}()
		fs, ok := e.fields()
		if !ok {
			return fmt.Errorf("not a JSON object")
		}
		if err := b.setFields(fs, movementShape); err != nil {
			return err
		}
		if fx, ok := object(fs.get("fx_rate")); ok {
			for _, f := range fxColumns {
				v, err := jsonValue(fx.get(f.field))
				if err != nil {
					return fmt.Errorf("fx_rate.%s: %w", f.field, err)
				}
				b.set(f.col, v)
			}
		} else if v, err := jsonValue(fs.get("fx_rate")); err == nil {
			b.set("fx_rate", v)
		}
		return nil
	})
}

// paymentExtra keeps the fields of a Payment that no column or child table
// holds, named by their path (contract.quote.price_guarantee).
func paymentExtra(b *builder, doc paymentDoc) {
	for prefix, m := range doc.objs {
		known := paymentKnown[prefix]
		for k, v := range m {
			if contains(known, k) {
				continue
			}
			name := k
			if prefix != "" {
				name = prefix + "." + k
			}
			if _, nested := doc.objs[name]; !nested {
				b.setExtra(name, v)
			}
		}
	}
}
