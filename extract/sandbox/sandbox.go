// Package sandbox simulates the payment network's token service, reporting
// service, liquidation service and server API on one loopback HTTP handler
// (and report downloads on a second one, when asked). Its data is generated
// deterministically from a seed, carries injected breaks, and comes with the
// ground truth of those breaks, so end-to-end tests can assert that every
// injected break is found and nothing else. docs/sandbox.md describes it.
package sandbox

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"math/rand/v2"
	"net/http"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/shopspring/decimal"
)

// Config sets up a sandbox; zero fields take the defaults named beside them.
type Config struct {
	Seed           int64
	Start          time.Time        // first generated day (truncated to its UTC midnight)
	Days           int              // number of generated days (at least 1)
	PaymentsPerDay int              // default 100
	Now            func() time.Time // clock for token expiry, the 9-month rule, scheduled reports and (read in New) the truth's as-of; default time.Now
	PendingPolls   int              // GETs of a report that still answer PENDING (default 2; negative: ready at once)
	TokenTTL       time.Duration    // default 1h
	BreaksPerDay   int              // injected breaks of each rule kind per day (default 2; negative: none)
	Faults         Faults           // fault knobs (faults.go); zero: none
	FilesURL       string           // base URL where FilesHandler is served; download links point there when Faults.DownloadHost
	WebhookURL     string           // callback URL (with its path token) Deliver sends webhook notifications to ("": none; webhook.go)

	ClientID, ClientSecret, Audience string // defaults ClientID, ClientSecret, Audience (serve.go)
	// WalletAudience, when set, is a second audience the token service
	// accepts; the wallet service then admits only its tokens (RECON_WALLET_AUDIENCE).
	WalletAudience string
}

// Sandbox is a simulated network; it is safe for concurrent use. What New
// generates is read-only; each service keeps its own state under its own lock.
type Sandbox struct {
	cfg      Config
	start    int64 // first generated day, in days since the Unix epoch
	days     int64
	n        int                   // payments per day
	breaks   map[uint64]*injection // by dayKey
	memo     memo                  // network.go: the generated payments, once the breaks are placed
	returns  []uint64              // day keys of the payments with a return, in order (returns.go)
	history  []uint64              // dayKeys of the labelled payments before the window (history.go)
	anchor   time.Time             // Now at New: the as-of time of the truth
	truth    Truth
	mux      *http.ServeMux
	files    *http.ServeMux // the download host
	patterns []string       // the routes of both, as Requests names them

	requests tally            // requests served, by pattern
	faults   faultState       // faults.go: draws and what was injected
	tokens   tokenState       // token.go: the token service
	reports  reportState      // reports.go: the reporting service and its download host
	liq      liquidationState // liquidation.go: the liquidation service
	api      serverState      // statement.go, server.go: the server API's caches
	wallet   walletState      // wallet.go: the wallet service
	hooks    webhookState     // webhook.go: notifications served and deliveries planned
}

// tally is a set of counts safe for concurrent use.
type tally struct {
	mu sync.Mutex
	m  map[string]int
}

func (t *tally) add(key string) {
	t.mu.Lock()
	t.m[key]++
	t.mu.Unlock()
}

func (t *tally) snapshot() map[string]int {
	t.mu.Lock()
	defer t.mu.Unlock()
	return maps.Clone(t.m)
}

// New validates cfg, fills its defaults and generates the breaks.
func New(cfg Config) (*Sandbox, error) {
	var errs []error
	if cfg.Start.IsZero() {
		errs = append(errs, errors.New("sandbox: start day is required"))
	}
	if cfg.Days < 1 {
		errs = append(errs, errors.New("sandbox: days must be at least 1"))
	}
	if cfg.PaymentsPerDay < 0 || cfg.PaymentsPerDay > dayMS {
		errs = append(errs, errors.New("sandbox: payments per day must be 0..86400000"))
	}
	if cfg.TokenTTL < 0 {
		errs = append(errs, errors.New("sandbox: token TTL must not be negative"))
	}
	if cfg.Start.Before(time.Unix(0, 0)) {
		errs = append(errs, errors.New("sandbox: start day must not be before 1970"))
	}
	errs = append(errs, cfg.Faults.validate(cfg.FilesURL))
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	orDefault(&cfg.PaymentsPerDay, 100)
	orDefault(&cfg.PendingPolls, 2)
	orDefault(&cfg.BreaksPerDay, 2)
	orDefault(&cfg.TokenTTL, time.Hour)
	orDefault(&cfg.ClientID, ClientID)
	orDefault(&cfg.ClientSecret, ClientSecret)
	orDefault(&cfg.Audience, Audience)
	orDefault(&cfg.Faults.RetryAfter, 1)
	orDefault(&cfg.Faults.MaxConsecutive, 2)
	cfg.FilesURL = strings.TrimRight(cfg.FilesURL, "/")
	cfg.PendingPolls, cfg.BreaksPerDay = max(cfg.PendingPolls, 0), max(cfg.BreaksPerDay, 0)
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	s := &Sandbox{
		cfg: cfg, start: unixDay(cfg.Start), days: int64(cfg.Days), n: cfg.PaymentsPerDay,
		requests: tally{m: map[string]int{}},
		faults:   faultState{streaks: map[string]*streak{}, injected: map[string]int{}, on: map[string]int{}},
		tokens:   tokenState{byToken: map[string]*issued{}, expiredOn: map[string]uint64{}},
		reports: reportState{byID: map[string]*report{}, creations: map[string]int{}, deleted: map[string]bool{},
			sizes: map[string]int64{}, counted: map[string]bool{}},
		api: serverState{nets: map[string]decimal.Decimal{}, stmts: map[string]*statement{}, lists: map[string][]uint64{}},
	}
	s.anchor = s.now()
	s.api.fees = s.fees()
	s.injectBreaks()
	s.memo = newMemo(s.days, s.n) // after the breaks: they change the payments
	s.generateWallets()           // wallet.go, wallet_breaks.go: adds the wallet's truth
	s.planWebhooks()
	s.routes()
	for _, d := range cfg.Faults.Down {
		if !slices.Contains(s.patterns, d) {
			return nil, fmt.Errorf("sandbox faults: down %q is not a route (%s)", d, strings.Join(s.patterns, ", "))
		}
	}
	return s, nil
}

func orDefault[T comparable](v *T, def T) {
	var zero T
	if *v == zero {
		*v = def
	}
}

// Handler serves every service on one listener: the token service at
// /v2/oauth/token, the reporting service at /v1/reports, the liquidation
// service at /liquidations and the server API under /v4 (RECON_AUTH_URL =
// RECON_REPORTING_URL = RECON_LIQUIDATION_URL = base, RECON_SERVER_URL = base+"/v4").
func (s *Sandbox) Handler() http.Handler { return s.mux }

// FilesHandler serves report downloads behind signed links, as a storage
// host apart from the services would: serve it at Config.FilesURL. It
// needs no token and records any Authorization header it receives.
func (s *Sandbox) FilesHandler() http.Handler { return s.files }

// FilesAuthorization returns the Authorization headers the download host
// received; a client that keeps its token to the services sends none.
func (s *Sandbox) FilesAuthorization() []string {
	s.reports.mu.Lock()
	defer s.reports.mu.Unlock()
	return slices.Clone(s.reports.filesAuth)
}

// InjectedOn counts the 429 and 5xx answers of one pattern (as in Requests).
func (s *Sandbox) InjectedOn(pattern string) int {
	return s.faults.onPattern(pattern)
}

// Injected counts the faults injected so far, by kind: rate_limit,
// server_error, truncated_download, token_expired, failed_report,
// empty_report, malformed_row (rows in the reports sized for download) and
// down (answers of a route that is down).
func (s *Sandbox) Injected() map[string]int {
	return s.faults.snapshot()
}

// Accounts lists this node's accounts as account@address, the value of RECON_ACCOUNTS.
func (s *Sandbox) Accounts() []string {
	out := make([]string, len(ours))
	for i, a := range ours {
		out[i] = a.addr()
	}
	return out
}

// Requests counts the requests served per "METHOD /path-pattern" (the
// download host's pattern is "GET /files/{name}").
func (s *Sandbox) Requests() map[string]int {
	return s.requests.snapshot()
}

func (s *Sandbox) now() time.Time { return s.cfg.Now().UTC() }

// rng returns the generator of one deterministic stream: tag names its use, a and b its key.
func (s *Sandbox) rng(tag, a, b uint64) *rand.Rand {
	return rand.New(rand.NewPCG(mix(uint64(s.cfg.Seed), tag), mix(a, b)))
}

// mix hashes its arguments with the splitmix64 finaliser.
func mix(a, b uint64) uint64 {
	h := uint64(0x9E3779B97F4A7C15)
	for _, v := range [2]uint64{a, b} {
		h ^= v
		h += 0x9E3779B97F4A7C15
		h = (h ^ h>>30) * 0xBF58476D1CE4E5B9
		h = (h ^ h>>27) * 0x94D049BB133111EB
		h ^= h >> 31
	}
	return h
}

// Stream tags for rng.
const (
	tagPayment = iota + 1
	tagRecon
	tagFailure
	tagTransfer
	tagBreaks
	tagToken
	tagReport
	tagScheduled
	tagFault
	tagReportFault
	tagMalformed
	tagLiquidation
	tagAPIPayment
	tagFee
	tagSign
	tagRetry
	tagWallet
	tagWebhook
	tagReturn
)

func (s *Sandbox) routes() {
	s.mux = http.NewServeMux()
	s.handle(s.mux, "POST /v2/oauth/token", s.issueToken)
	s.handle(s.mux, "POST /v1/reports", s.authed(s.reportDenied, s.createReport))
	s.handle(s.mux, "GET /v1/reports", s.authed(s.reportDenied, s.listReports))
	s.handle(s.mux, "GET /v1/reports/{id}", s.authed(s.reportDenied, s.getReport))
	s.handle(s.mux, "DELETE /v1/reports/{id}", s.authed(s.reportDenied, s.deleteReport))
	s.handle(s.mux, "GET /v1/reports/download/{id}", s.authed(s.reportDenied, s.downloadReport))
	s.handle(s.mux, "GET /liquidations", s.authed(s.liquidationDenied, s.listLiquidations))
	s.handle(s.mux, "GET /liquidations/{id}", s.authed(s.liquidationDenied, s.getLiquidation))
	s.handle(s.mux, "GET /liquidations/network-payment-id/{id}", s.authed(s.liquidationDenied, s.paymentLiquidations))
	s.handle(s.mux, "GET /v4/statement/{account}", s.authed(serverDenied, s.getStatement))
	s.handle(s.mux, "GET /v4/payments", s.authed(serverDenied, s.listPayments))
	s.handle(s.mux, "GET /v4/transfers", s.authed(serverDenied, s.listTransfers))
	s.handle(s.mux, "GET /v4/monitor/balances", s.authed(serverDenied, s.getBalances))
	s.handle(s.mux, "GET /v4/config/fees", s.authed(serverDenied, s.listFees))
	s.walletRoutes()
	s.handle(s.mux, "GET /v4/orchestration/payment/notification/{msg_id}", s.authed(serverDenied, s.getNotification))
	// The server API answers 403 when no handler is found (spec: pagination errors).
	s.handle(s.mux, "/v4/", func(w http.ResponseWriter, r *http.Request) {
		serverError(w, http.StatusForbidden, "A0110", "Forbidden", "no handler found for "+r.Method+" "+r.URL.Path)
	})
	s.files = http.NewServeMux()
	s.handle(s.files, "GET /files/{name}", s.downloadFile)
}

// handle registers h for pattern on mux behind the fault knobs, counts its
// requests, and dates its answers by the sandbox's clock.
func (s *Sandbox) handle(mux *http.ServeMux, pattern string, h http.HandlerFunc) {
	download := mux == s.files || strings.Contains(pattern, "/download/")
	s.patterns = append(s.patterns, pattern)
	faulty := s.inject(pattern, download, h)
	mux.HandleFunc(pattern, func(w http.ResponseWriter, r *http.Request) {
		s.requests.add(pattern)
		w.Header().Set("Date", s.now().Format(http.TimeFormat))
		faulty(w, r)
	})
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_, _ = w.Write(append(mustJSON(v), '\n')) // the client may have gone; nothing to do
}

// serverError writes the server API's error body; codes follow the provider's catalogue.
func serverError(w http.ResponseWriter, status int, code, title, detail string) {
	finality := "PERMANENT"
	if status >= 500 {
		finality = "TRANSIENT"
	}
	writeJSON(w, status, struct {
		Type     string `json:"type"`
		Title    string `json:"title"`
		Detail   string `json:"detail"`
		Status   int    `json:"status"`
		Code     string `json:"ripplenet_error_code"`
		Finality string `json:"finality"`
	}{"urn:recon-sandbox:error:" + code, title, detail, status, code, finality})
}

func serverDenied(w http.ResponseWriter, detail string) {
	serverError(w, http.StatusUnauthorized, "A0110", "Unauthorized", detail)
}

// reportError writes the reporting service's error body.
func (s *Sandbox) reportError(w http.ResponseWriter, status int, code, title, detail string) {
	writeJSON(w, status, struct {
		Type      string `json:"type"`
		ErrorCode string `json:"errorCode"`
		Title     string `json:"title"`
		Detail    string `json:"detail"`
		Time      string `json:"time"`
	}{"urn:recon-sandbox:error:" + code, code, title, detail, ts(s.now())})
}

func (s *Sandbox) reportDenied(w http.ResponseWriter, detail string) {
	s.reportError(w, http.StatusUnauthorized, rptInvalid, "Unauthorized", detail)
}

// Truth lists the injected breaks as a run with as_of AsOf over the
// generated days sees them, each list sorted by rule_id, payment_id, account.
type Truth struct {
	AsOf    time.Time    `json:"as_of"`   // the sandbox's Now when it was made
	Breaks  []TruthBreak `json:"breaks"`  // what the rules must report, and nothing else
	Pending []TruthBreak `json:"pending"` // unmatched items still inside their grace period at AsOf
	Decoys  []TruthBreak `json:"decoys"`  // near misses no rule may report (an amount exactly at its tolerance)
}

// TruthBreak is one injected break: the key a rule reports it under.
type TruthBreak struct {
	RuleID    string `json:"rule_id"`
	PaymentID string `json:"payment_id"`
	Account   string `json:"account,omitempty"`
}

// Truth returns the injected breaks.
func (s *Sandbox) Truth() Truth {
	return Truth{AsOf: s.truth.AsOf, Breaks: slices.Clone(s.truth.Breaks),
		Pending: slices.Clone(s.truth.Pending), Decoys: slices.Clone(s.truth.Decoys)}
}

// WriteJSON writes t as indented JSON, the ground-truth file of a run.
func (t Truth) WriteJSON(w io.Writer) error {
	for _, l := range []*[]TruthBreak{&t.Breaks, &t.Pending, &t.Decoys} {
		if *l == nil {
			*l = []TruthBreak{}
		}
	}
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(t)
}
