package transform

import (
	"bytes"
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"strings"
	"time"
	"unicode/utf8"

	"recon/extract/raw"
)

// rowFunc adds one element of a page's content to a builder.
type rowFunc func(b *builder, at pos, raw json.RawMessage) error

// flatRow maps a flat JSON object onto the table's columns by name.
func flatRow(renames map[string]string) rowFunc {
	return func(b *builder, at pos, raw json.RawMessage) error {
		_, err := b.element(at, raw, shape{renames: renames}, nil)
		return err
	}
}

// paymentJSON is the part of a server API Payment the payments table keeps.
type paymentJSON struct {
	PaymentID               value `json:"payment_id"`
	PaymentState            value `json:"payment_state"`
	PaymentType             value `json:"payment_type"`
	ContractHash            value `json:"contract_hash"`
	AcceptedAt              value `json:"accepted_at"`
	LockedAt                value `json:"locked_at"`
	ExecutedAt              value `json:"executed_at"`
	CompletedAt             value `json:"completed_at"`
	ReturnedAt              value `json:"returned_at"`
	ModifiedAt              value `json:"modified_at"`
	ReturnsPaymentWithID    value `json:"returns_payment_with_id"`
	ReturnedByPaymentWithID value `json:"returned_by_payment_with_id"`
	CryptoTransactionID     value `json:"crypto_transaction_id"`
	Contract                struct {
		SenderEndToEndID value `json:"sender_end_to_end_id"`
		CreatedAt        value `json:"created_at"`
		ExpiresAt        value `json:"expires_at"`
		Quote            struct {
			QuoteID         value `json:"quote_id"`
			Type            value `json:"type"`
			Amount          value `json:"amount"`
			CurrencyCode    value `json:"currency_code"`
			SenderAddress   value `json:"sender_address"`
			ReceiverAddress value `json:"receiver_address"`
			PaymentMethod   value `json:"payment_method"`
		} `json:"quote"`
		FeeInfo struct {
			Nodes value `json:"nodes"`
		} `json:"fee_info"`
	} `json:"contract"`
	InternalInfo struct {
		ConnectorRole value `json:"connector_role"`
		InternalID    value `json:"internal_id"`
		Labels        value `json:"labels"`
	} `json:"internal_info"`
	LiquidationDetails struct {
		ID            value `json:"id"`
		Status        value `json:"status"`
		FailureReason value `json:"failure_reason"`
	} `json:"liquidation_details"`
}

// paymentRow flattens one Payment of GET /v4/payments; doc is its objects
// as decoded once (paymentObjects): the row reads them when doc is direct
// and the text UTF-8, and decodes the text into paymentJSON otherwise (its
// decoders replace bytes that are not UTF-8, and say why a payment is not one).
func paymentRow(b *builder, at pos, raw json.RawMessage, doc paymentDoc, derived map[string]value) error {
	_, err := b.add(at, raw, func() error {
		if !doc.direct || !utf8.Valid(raw) || !paymentColumnsFrom(b, doc) {
			b.reset()
			if err := paymentColumnsDecoded(b, raw); err != nil {
				return err
			}
		}
		paymentExtra(b, doc)
		for k, v := range derived {
			b.set(k, v)
		}
		return nil
	})
	return err
}

// paymentColumns are the columns of a payments row, by the object of a
// Payment that holds each (its path in paymentDoc) and the field.
var paymentColumns = [...]struct{ col, obj, field string }{
	{"payment_id", "", "payment_id"}, {"payment_state", "", "payment_state"}, {"payment_type", "", "payment_type"},
	{"end_to_end_id", "contract", "sender_end_to_end_id"}, {"contract_hash", "", "contract_hash"},
	{"created_at", "contract", "created_at"}, {"expires_at", "contract", "expires_at"}, {"accepted_at", "", "accepted_at"},
	{"locked_at", "", "locked_at"}, {"executed_at", "", "executed_at"}, {"completed_at", "", "completed_at"},
	{"returned_at", "", "returned_at"}, {"modified_at", "", "modified_at"},
	{"connector_role", "internal_info", "connector_role"}, {"internal_id", "internal_info", "internal_id"},
	{"labels", "internal_info", "labels"}, {"quote_id", "contract.quote", "quote_id"},
	{"quote_type", "contract.quote", "type"}, {"quote_amount", "contract.quote", "amount"},
	{"quote_currency", "contract.quote", "currency_code"}, {"sender_address", "contract.quote", "sender_address"},
	{"receiver_address", "contract.quote", "receiver_address"}, {"payment_method", "contract.quote", "payment_method"},
	{"returns_payment_with_id", "", "returns_payment_with_id"},
	{"returned_by_payment_with_id", "", "returned_by_payment_with_id"},
	{"crypto_transaction_id", "", "crypto_transaction_id"}, {"liquidation_id", "liquidation_details", "id"},
	{"liquidation_status", "liquidation_details", "status"},
	{"liquidation_failure_reason", "liquidation_details", "failure_reason"},
	{"fee_nodes", "contract.fee_info", "nodes"},
}

// paymentColumnsFrom sets the columns from a direct doc; false when a
// value cannot be read (decoding says why).
func paymentColumnsFrom(b *builder, doc paymentDoc) bool {
	for _, c := range paymentColumns {
		v, err := jsonValue(doc.objs[c.obj][c.field])
		if err != nil {
			return false
		}
		b.set(c.col, v)
	}
	return true
}

// paymentColumnsDecoded sets the columns from the text decoded into
// paymentJSON, or says why it is not a payment.
func paymentColumnsDecoded(b *builder, raw json.RawMessage) error {
	var p paymentJSON
	if err := decodeJSON(raw, &p); err != nil {
		var id struct {
			PaymentID value `json:"payment_id"`
		}
		if json.Unmarshal(raw, &id) == nil {
			b.set("payment_id", id.PaymentID) // keep the key for the quarantine row
		}
		return fmt.Errorf("not a payment: %s", jsonProblem(err))
	}
	q, in := p.Contract.Quote, p.InternalInfo
	for _, f := range [...]struct {
		name string
		v    value
	}{
		{"payment_id", p.PaymentID}, {"payment_state", p.PaymentState}, {"payment_type", p.PaymentType},
		{"end_to_end_id", p.Contract.SenderEndToEndID}, {"contract_hash", p.ContractHash},
		{"created_at", p.Contract.CreatedAt}, {"expires_at", p.Contract.ExpiresAt}, {"accepted_at", p.AcceptedAt},
		{"locked_at", p.LockedAt}, {"executed_at", p.ExecutedAt}, {"completed_at", p.CompletedAt},
		{"returned_at", p.ReturnedAt}, {"modified_at", p.ModifiedAt}, {"connector_role", in.ConnectorRole},
		{"internal_id", in.InternalID}, {"labels", in.Labels}, {"quote_id", q.QuoteID}, {"quote_type", q.Type},
		{"quote_amount", q.Amount}, {"quote_currency", q.CurrencyCode}, {"sender_address", q.SenderAddress},
		{"receiver_address", q.ReceiverAddress}, {"payment_method", q.PaymentMethod},
		{"returns_payment_with_id", p.ReturnsPaymentWithID}, {"returned_by_payment_with_id", p.ReturnedByPaymentWithID},
		{"crypto_transaction_id", p.CryptoTransactionID}, {"liquidation_id", p.LiquidationDetails.ID},
		{"liquidation_status", p.LiquidationDetails.Status}, {"liquidation_failure_reason", p.LiquidationDetails.FailureReason},
		{"fee_nodes", p.Contract.FeeInfo.Nodes},
	} {
		b.set(f.name, f.v)
	}
	return nil
}

// sweptPaymentRow flattens one payment of the label sweep.
func sweptPaymentRow(b *builder, at pos, raw json.RawMessage) error {
	return paymentRow(b, at, raw, paymentObjects(raw, nil), nil)
}

// readPage returns the items of a server API page (raw.Content), the raw
// file file at path.
func readPage(path, file string) ([]json.RawMessage, error) {
	body, err := readDoc(path)
	if err != nil {
		return nil, err
	}
	if items, ok := scanContent(body); ok {
		return items, nil
	}
	items, err := raw.Content.Items(body)
	return items, unreadable(file, err)
}

// contentFields are the fields of a page envelope (raw.Content) that
// decoding it reads, and the first bytes their values may start with.
var contentFields = []struct{ name, starts string }{
	{"content", "["}, {"results", "[n"}, {"last", "tfn"}, {"number", "-0123456789n"}, {"totalElements", "-0123456789n"},
}

// scanContent splits the items of a server API page in one pass of the
// strict scanner, without copying them; ok is false for a page it cannot
// read as decoding it would (raw.Content.Items reads those): a content
// that is not an array, an envelope field twice, in another case or of
// another kind (a number that is not a plain integer of up to 18 digits).
func scanContent(body []byte) ([]json.RawMessage, bool) {
	b := bytes.TrimSpace(body)
	if len(b) < 2 || b[0] != '{' {
		return nil, false
	}
	items := make([]json.RawMessage, 0, 100)
	seen := make([]bool, len(contentFields))
	end, ok := scanSeq(b, 1, '}', func(j int) (int, bool) {
		key, start, ok := scanKey(b, j)
		if !ok || !plainKey(key) || start >= len(b) {
			return 0, false
		}
		f := -1
		for i, cf := range contentFields {
			if string(key) == cf.name {
				f = i
			} else if strings.EqualFold(string(key), cf.name) {
				return 0, false
			}
		}
		if f < 0 {
			return scanValue(b, start, 0)
		}
		if seen[f] || !strings.ContainsRune(contentFields[f].starts, rune(b[start])) {
			return 0, false
		}
		seen[f] = true
		switch contentFields[f].name {
		case "content":
			return scanSeq(b, start+1, ']', func(i int) (int, bool) {
				end, ok := scanValue(b, i, 1)
				if ok {
					items = append(items, json.RawMessage(b[i:end:end]))
				}
				return end, ok
			})
		case "number", "totalElements":
			end, ok := scanValue(b, start, 0)
			if v := string(b[start:end]); ok && v != "null" && (len(v) > 18 || strings.ContainsAny(v, ".eE")) {
				return 0, false
			}
			return end, ok
		}
		return scanValue(b, start, 0)
	})
	return items, ok && end == len(b) && seen[0]
}

// loadKeyed loads all pages of a keyed source (transfers, fees, the label
// sweep) in one transaction: every key brought replaces its row, a key on
// two pages keeps one row (Table.Keep), and a snapshot (Table.Whole: the fee
// configuration, the label sweep) is replaced whole.
func (l *Loader) loadKeyed(ctx context.Context, conn *sql.Conn, t *Table, files []raw.File, row rowFunc) ([]FileStats, error) {
	b := newBuilder(t, nil)
	defer b.release()
	err := stageRows(ctx, conn, "stage", b, func(b *builder) error {
		for _, f := range files {
			content, err := readPage(l.path(f), f.Path)
			if err != nil {
				return fmt.Errorf("%s: %w", f.Path, err)
			}
			for j, raw := range content {
				if err := row(b, pos{file: f.Path, n: int64(j + 1), path: pathAt("content", j)}, raw); err != nil {
					return err
				}
			}
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("read %s pages: %w", t.Source, err)
	}
	stats := fileStats(files, b)
	if err := stageRecord(ctx, conn, b.bad, stats); err != nil {
		return nil, err
	}

	tx, err := conn.BeginTx(ctx, nil)
	if err != nil {
		return nil, err
	}
	defer tx.Rollback()
	key := t.Key[0]
	args := []any{sql.Named("source", t.Source), sql.Named("run_id", l.runID), sql.Named("account", nil), sql.Named("report_id", nil)}
	stmts := []string{
		fmt.Sprintf(`DELETE FROM %s WHERE %s IN (SELECT %s FROM stage)`, t.Name, key, key),
		`DELETE FROM quarantine WHERE source = $source AND record_key IN (SELECT record_key FROM stage_quarantine)`,
		fmt.Sprintf(`DELETE FROM quarantine WHERE source = $source AND record_key IN (SELECT %s FROM stage)`, key),
	}
	if t.Whole {
		stmts = []string{`DELETE FROM ` + t.Name, `DELETE FROM quarantine WHERE source = $source`}
	}
	if t.Source == raw.SourceFee {
		args = append(args, sql.Named("fetched_at", snapshotTime(files)))
	}
	// The quarantine rows of the pages' windows go before any is added.
	stmts = append(stmts, insertSQL(t, "stage"), `DELETE FROM quarantine q USING stage_files f
		WHERE q.source = $source AND q.window_from >= f.window_from AND q.window_to <= f.window_to`)
	if t.Source == raw.SourceFee {
		stmts = append(stmts, feeHistorySQL...)
	}
	if err := execAll(ctx, tx, args, append(stmts, recordFilesSQL...)...); err != nil {
		return nil, fmt.Errorf("load %s: %w", t.Name, err)
	}
	return stats, tx.Commit()
}

// balancesJSON is GET /v4/monitor/balances (DESIGN.md §3).
type balancesJSON struct {
	LocalBalance   json.RawMessage   `json:"local_balance"` // an institution, or a one-element array of one
	RemoteBalances []json.RawMessage `json:"remote_balances"`
	Errors         []json.RawMessage `json:"errors"`
}

// loadBalances replaces one balances snapshot, keyed by the time of the response.
func (l *Loader) loadBalances(ctx context.Context, conn *sql.Conn, f raw.File) ([]FileStats, error) {
	if f.FetchedAt.IsZero() {
		return nil, fmt.Errorf("balances %s: no fetched_at in the index (the snapshot's time is its key)", f.Path)
	}
	body, err := readDoc(l.path(f))
	if err != nil {
		return nil, err
	}
	var doc balancesJSON
	if err := json.Unmarshal(body, &doc); err != nil {
		return nil, fmt.Errorf("balances %s: %w", f.Path, unreadable(f.Path, err))
	}
	snapshot := f.FetchedAt.UTC().Format(time.RFC3339Nano)
	b := newBuilder(&Balances, nil)
	defer b.release()
	err = stageRows(ctx, conn, "stage", b, func(b *builder) error {
		switch d := strings.TrimSpace(string(doc.LocalBalance)); {
		case d == "" || d == "null":
		case strings.HasPrefix(d, "["):
			var local []json.RawMessage
			if err := json.Unmarshal(doc.LocalBalance, &local); err != nil {
				return unreadable(f.Path, fmt.Errorf("local_balance: %w", err))
			}
			for i, inst := range local {
				if err := institutionRows(b, f.Path, pathAt("local_balance", i), "local", snapshot, inst); err != nil {
					return err
				}
			}
		default:
			if err := institutionRows(b, f.Path, pathAt("local_balance", -1), "local", snapshot, doc.LocalBalance); err != nil {
				return err
			}
		}
		for i, inst := range doc.RemoteBalances {
			if err := institutionRows(b, f.Path, pathAt("remote_balances", i), "remote", snapshot, inst); err != nil {
				return err
			}
		}
		for i, e := range doc.Errors {
			_, err := b.add(pos{file: f.Path, n: int64(i + 1), path: pathAt("errors", i)}, e, func() error {
				b.set("fetched_at", textValue(snapshot))
				b.set("side", textValue("error"))
				if fs, ok := object(e); ok {
					for _, f := range fs {
						b.setExtra(string(f.key), f.raw)
					}
				} else {
					b.setExtra("error", e)
				}
				return nil
			})
			if err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("read balances %s: %w", f.Path, err)
	}
	stats := fileStats([]raw.File{f}, b)
	if err := stageRecord(ctx, conn, b.bad, stats); err != nil {
		return nil, err
	}
	tx, err := conn.BeginTx(ctx, nil)
	if err != nil {
		return nil, err
	}
	defer tx.Rollback()
	args := append(windowArgs(f), sql.Named("fetched", f.FetchedAt), sql.Named("key", snapshot),
		sql.Named("source", raw.SourceBalance), sql.Named("run_id", l.runID), sql.Named("file", f.Path),
		sql.Named("account", nil), sql.Named("report_id", nil))
	if err := execAll(ctx, tx, args, append([]string{
		`DELETE FROM balances WHERE fetched_at = $fetched`,
		`DELETE FROM quarantine WHERE source = $source AND record_key = $key`,
		insertSQL(&Balances, "stage"),
	}, recordFilesSQL...)...); err != nil {
		return nil, fmt.Errorf("load balances %s: %w", f.Path, err)
	}
	return stats, tx.Commit()
}

// institutionRows adds one row per account balance of an institution; a
// currency without accounts gives one row without account fields.
func institutionRows(b *builder, file string, path jsonPath, side, snapshot string, raw json.RawMessage) error {
	reject := func(reason string) error {
		return b.reject(quarantined{file: file, line: 1, path: path.String(), key: snapshot, reason: reason, raw: string(raw)})
	}
	fs, ok := object(raw)
	if !ok {
		return reject("institution is not a JSON object")
	}
	inst := fs.toMap()
	var cbs []json.RawMessage
	if cb, ok := inst["currency_balances"]; ok {
		if err := json.Unmarshal(cb, &cbs); err != nil {
			return reject("currency_balances is not an array")
		}
	}
	delete(inst, "currency_balances")
	institution := value{}
	if len(inst) > 0 {
		institution = textValue(extraJSON(inst))
	}
	for i, cbRaw := range cbs {
		cbPath := path.at("currency_balances", i)
		cb, ok := object(cbRaw)
		if !ok {
			if err := b.reject(quarantined{file: file, line: int64(i + 1), path: cbPath.String(), key: snapshot, reason: "not a JSON object", raw: string(cbRaw)}); err != nil {
				return err
			}
			continue
		}
		fixed := map[string]value{"fetched_at": textValue(snapshot), "side": textValue(side), "institution": institution}
		for _, k := range []string{"currency", "aggregate_balance"} {
			v, err := jsonValue(cb.get(k))
			if err != nil {
				return err
			}
			fixed[k] = v
		}
		var accounts []json.RawMessage
		if ab := cb.get("account_balances"); ab != nil && string(ab) != "null" {
			if err := json.Unmarshal(ab, &accounts); err != nil {
				if err := b.reject(quarantined{file: file, line: int64(i + 1), path: cbPath.String(), key: snapshot, reason: "account_balances is not an array", raw: string(cbRaw)}); err != nil {
					return err
				}
				continue
			}
		}
		if len(accounts) == 0 {
			if _, err := b.add(pos{file: file, n: int64(i + 1), path: cbPath}, cbRaw, func() error {
				for k, v := range fixed {
					b.set(k, v)
				}
				return nil
			}); err != nil {
				return err
			}
			continue
		}
		for j, a := range accounts {
			at := pos{file: file, n: int64(j + 1), path: cbPath.at("account_balances", j)}
			if _, err := b.element(at, a, shape{renames: map[string]string{"currency": "account_currency"}}, fixed); err != nil {
				return err
			}
		}
	}
	return nil
}

// microsTime converts microseconds since the epoch to a UTC time.
func microsTime(us int64) time.Time { return time.UnixMicro(us).UTC() }

// snapshotTime is when the fee configuration was fetched: the latest
// fetched_at of its pages, or nil when the index has none (an older archive).
func snapshotTime(files []raw.File) any {
	var at time.Time
	for _, f := range files {
		if f.FetchedAt.After(at) {
			at = f.FetchedAt
		}
	}
	if at.IsZero() {
		return nil
	}
	return at.UTC()
}

// feeColumns are the fields of a fee that make its version.
const feeColumns = `value, currency_code, role_type, payment_type, node_type, fee_type, partner_name, account_name,
	upper_limit, lower_limit, payout_method, fee_category, fee_description`

// feeHistorySQL keeps fee_history after the fees snapshot is replaced: the
// versions the snapshot no longer shows end at its fetched_at, the ones it
// shows first begin there. A snapshot without a time takes the latest
// version's start (it replaces the previous one without dating the change);
// one older than the latest version (a replay of an older run) leaves the
// history as it is.
var feeHistorySQL = []string{
	`CREATE OR REPLACE TEMP TABLE fee_snapshot AS
		SELECT coalesce(CAST($fetched_at AS TIMESTAMPTZ), (SELECT max(valid_from) FROM fee_history),
			TIMESTAMPTZ '1970-01-01 00:00:00+00') AS at,
			(SELECT max(valid_from) FROM fee_history) AS latest`,
	`UPDATE fee_history h SET valid_to = s.at FROM fee_snapshot s
		WHERE h.valid_to IS NULL AND (s.latest IS NULL OR s.at >= s.latest)
		AND NOT EXISTS (SELECT 1 FROM fees f WHERE f.fee_id = h.fee_id AND (` + prefixed("f.", feeColumns) + `) IS NOT DISTINCT FROM (` + prefixed("h.", feeColumns) + `))`,
	`INSERT INTO fee_history SELECT f.fee_id, ` + prefixed("f.", feeColumns) + `, s.at, NULL, f.source_file, f.source_line, f.run_id
		FROM fees f, fee_snapshot s
		WHERE (s.latest IS NULL OR s.at >= s.latest)
		AND NOT EXISTS (SELECT 1 FROM fee_history h WHERE h.valid_to IS NULL AND h.fee_id = f.fee_id
			AND (` + prefixed("f.", feeColumns) + `) IS NOT DISTINCT FROM (` + prefixed("h.", feeColumns) + `))`,
	`DROP TABLE fee_snapshot`,
}

// prefixed qualifies each name of a comma-separated list.
func prefixed(p, names string) string {
	var out []string
	for _, n := range strings.Split(names, ",") {
		out = append(out, p+strings.TrimSpace(n))
	}
	return strings.Join(out, ", ")
}
