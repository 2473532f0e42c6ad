package extract

import "recon/extract/raw"

// Merge aid, to delete once the branches written before extract/raw are
// merged: the raw-file contract under its old names. New code imports
// recon/extract/raw.
type (
	// Deprecated: use raw.Window.
	Window = raw.Window
	// Deprecated: use raw.File.
	RawFile = raw.File
)

// Deprecated: use the names of package raw.
const (
	DateLayout                = raw.DateLayout
	SourcePaymentOps          = raw.SourcePaymentOps
	SourceRecon               = raw.SourceRecon
	SourceFailureConversion   = raw.SourceFailureConversion
	SourceStatement           = raw.SourceStatement
	SourceLiquidation         = raw.SourceLiquidation
	SourcePayment             = raw.SourcePayment
	SourceTransfer            = raw.SourceTransfer
	SourceBalance             = raw.SourceBalance
	SourceFee                 = raw.SourceFee
	SourceWallet              = raw.SourceWallet
	SourceNotification        = raw.SourceNotification
	SourceNotificationReceipt = raw.SourceNotificationReceipt
	FormatCSV                 = raw.FormatCSV
	FormatJSON                = raw.FormatJSON
	StatusReady               = raw.StatusReady
	StatusFailed              = raw.StatusFailed
	StatusNotConfigured       = raw.StatusNotConfigured
	StatusEmpty               = raw.StatusEmpty
)

// Deprecated: use raw.NewWindow, raw.ParseWindow, raw.ReadIndex.
var (
	NewWindow   = raw.NewWindow
	ParseWindow = raw.ParseWindow
	ReadIndex   = raw.ReadIndex
)
