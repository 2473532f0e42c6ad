package transform

import (
	"context"
	"database/sql"

	"recon/extract/raw"
)

// Source is how the loader takes the raw files of one source (raw.Source*).
// Registering a source in Sources is the one line a new source adds to this
// package, beside its Table(s) and its load function (docs/architecture.md).
type Source struct {
	Name   string   // raw.Source*
	Tables []*Table // tables its files fill
	Plain  []string // tables it fills without a Table (the statements' headers)
	// Slice keys the slices Load replaces whole, each in one transaction:
	// files with one key load together (oneFile, wholeSource, accountWindow).
	Slice func(f *raw.File) string
	// Load replaces one slice with its files and counts what each gave.
	Load func(l *Loader, ctx context.Context, conn *sql.Conn, files []raw.File) ([]FileStats, error)
	// Report: a FAILED file is a report the provider could not make; it is
	// recorded, not dropped as a source that was not pulled.
	Report bool
	// Document tells a file that is one JSON document, not a list of
	// records: it has no row count in the archive manifest
	// (FileStats.Records). Nil: every file is a list.
	Document func(f *raw.File) bool
}

// Sources registers every raw source. The order is that of the tables in
// known_values.
var Sources = []Source{
	reportSource(&PaymentOps),
	reportSource(&Recon),
	reportSource(&FailureConversion),
	{Name: raw.SourceStatement, Tables: []*Table{&StatementEntries}, Plain: []string{"statements"}, Slice: accountWindow,
		Load: (*Loader).loadStatement},
	{Name: raw.SourceLiquidation, Tables: liquidationTables, Slice: wholeSource, Load: (*Loader).loadLiquidations, Document: always},
	{Name: raw.SourcePayment, Tables: []*Table{&Payments, &PaymentFees, &PaymentExecutionResults, &PaymentQuoteElements,
		&PaymentUserInfo}, Slice: wholeSource, Load: (*Loader).loadPayments},
	keyedSource(&PaymentLabelSweep, sweptPaymentRow), // the label sweep: replaced whole by each sweep
	keyedSource(&Transfers, flatRow(nil)),
	{Name: raw.SourceBalance, Tables: []*Table{&Balances}, Slice: oneFile, Document: always,
		Load: func(l *Loader, ctx context.Context, conn *sql.Conn, files []raw.File) ([]FileStats, error) {
			return l.loadBalances(ctx, conn, files[0])
		}},
	withPlain(keyedSource(&Fees, flatRow(map[string]string{"feeId": "fee_id"})), "fee_history"),
	{Name: raw.SourceWallet, Tables: []*Table{&Wallets, &WalletBalances, &WalletTransactions, &WalletLimits, &WalletLimitMatchers},
		Slice: perAccount, Load: (*Loader).loadWallet,
		Document: func(f *raw.File) bool { k := walletFile(*f); return k == "wallet" || k == "balances" }},
	notificationSource(raw.SourceNotificationReceipt),
	notificationSource(raw.SourceNotification),
}

// notificationSource is the receipts and the notifications of the webhook
// spool: one slice, loaded into notifications without a Table.
func notificationSource(name string) Source {
	return Source{Name: name, Plain: []string{"notifications"}, Document: always, Load: (*Loader).loadNotifications,
		Slice: func(*raw.File) string { return raw.SourceNotification }}
}

// reportSource is a report type's source: each report replaces its window.
func reportSource(t *Table) Source {
	return Source{Name: t.Source, Tables: []*Table{t}, Slice: oneFile, Report: true,
		Load: func(l *Loader, ctx context.Context, conn *sql.Conn, files []raw.File) ([]FileStats, error) {
			st, err := l.loadReport(ctx, conn, t, files[0])
			return []FileStats{st}, err
		}}
}

// keyedSource is a paged server API source whose rows are replaced by key.
func keyedSource(t *Table, row rowFunc) Source {
	return Source{Name: t.Source, Tables: []*Table{t}, Slice: wholeSource,
		Load: func(l *Loader, ctx context.Context, conn *sql.Conn, files []raw.File) ([]FileStats, error) {
			return l.loadKeyed(ctx, conn, t, files, row)
		}}
}

// withPlain adds the tables a source fills besides its Tables.
func withPlain(s Source, tables ...string) Source {
	s.Plain = append(s.Plain, tables...)
	return s
}

// Slice keys: each file alone; all files of the source at once; the files
// of one account (a wallet); the pages of one account's statement over one
// window.
func oneFile(f *raw.File) string     { return f.Source + "\x00" + f.Path }
func wholeSource(f *raw.File) string { return f.Source }

// always: every file of the source is one document.
func always(*raw.File) bool { return true }

func perAccount(f *raw.File) string { return f.Source + "\x00" + f.Account }
func accountWindow(f *raw.File) string {
	return f.Source + "\x00" + f.Account + "\x00" + f.Window.String()
}

// SourceOf returns the registration of a raw source.
func SourceOf(name string) (*Source, bool) {
	for i := range Sources {
		if Sources[i].Name == name {
			return &Sources[i], true
		}
	}
	return nil, false
}

// TablesOf lists the warehouse tables the raw files of a source load.
func TablesOf(source string) []string {
	s, ok := SourceOf(source)
	if !ok {
		return nil
	}
	out := append([]string(nil), s.Plain...)
	for _, t := range s.Tables {
		out = append(out, t.Name)
	}
	return out
}

// allTables lists every table a source loads through a Table, in Sources order.
func allTables() []*Table {
	var out []*Table
	for _, s := range Sources {
		out = append(out, s.Tables...)
	}
	return out
}
