// Package sandbox simulates the payment network's token service, reporting
// service and server API on one loopback HTTP handler. Its data is generated
// deterministically from a seed, carries injected breaks, and comes with the
// ground truth of those breaks, so end-to-end tests can assert that every
// injected break is found and nothing else. docs/sandbox.md describes it.
package sandbox

import (
	"encoding/json"
	"errors"
	"io"
	"maps"
	"math/rand/v2"
	"net/http"
	"slices"
	"sync"
	"time"

	"github.com/shopspring/decimal"
)

// Config sets up a sandbox; zero fields take the defaults named beside them.
type Config struct {
	Seed           int64
	Start          time.Time        // first generated day (truncated to its UTC midnight)
	Days           int              // number of generated days (at least 1)
	PaymentsPerDay int              // default 40
	Now            func() time.Time // clock for token expiry, the 9-month rule, scheduled reports and (read in New) the truth's as-of; default time.Now
	PendingPolls   int              // GETs of a report that still answer PENDING (default 2; negative: ready at once)
	TokenTTL       time.Duration    // default 1h
	BreaksPerDay   int              // injected breaks of each rule kind per day (default 2; negative: none)

	ClientID, ClientSecret, Audience string // defaults "recon-sandbox", "sandbox-secret", "urn:ripplenet-test:sandbox"
}

// Sandbox is a simulated network; it is safe for concurrent use.
type Sandbox struct {
	cfg    Config
	start  int64 // first generated day, in days since the Unix epoch
	days   int64
	n      int                   // payments per day
	breaks map[uint64]*injection // by dayKey; read-only after New
	anchor time.Time             // Now at New: the as-of time of the truth
	truth  Truth
	mux    *http.ServeMux

	mu        sync.Mutex
	requests  map[string]int
	tokens    map[string]time.Time // token -> expiry
	tokenSeq  uint64
	reports   map[string]*report // created through the API
	reportSeq uint64
	deleted   map[string]bool            // deleted scheduled reports
	sizes     map[string]int64           // download sizes by report id
	nets      map[string]decimal.Decimal // net change of an account on a day
	stmts     map[string]*statement      // small cache of computed statements
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
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	orDefault(&cfg.PaymentsPerDay, 40)
	orDefault(&cfg.PendingPolls, 2)
	orDefault(&cfg.BreaksPerDay, 2)
	orDefault(&cfg.TokenTTL, time.Hour)
	orDefault(&cfg.ClientID, "recon-sandbox")
	orDefault(&cfg.ClientSecret, "sandbox-secret")
	orDefault(&cfg.Audience, "urn:ripplenet-test:sandbox")
	cfg.PendingPolls, cfg.BreaksPerDay = max(cfg.PendingPolls, 0), max(cfg.BreaksPerDay, 0)
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	s := &Sandbox{
		cfg: cfg, start: unixDay(cfg.Start), days: int64(cfg.Days), n: cfg.PaymentsPerDay,
		requests: map[string]int{}, tokens: map[string]time.Time{}, reports: map[string]*report{},
		deleted: map[string]bool{}, sizes: map[string]int64{}, nets: map[string]decimal.Decimal{},
		stmts: map[string]*statement{},
	}
	s.anchor = s.now()
	s.injectBreaks()
	s.routes()
	return s, nil
}

func orDefault[T comparable](v *T, def T) {
	var zero T
	if *v == zero {
		*v = def
	}
}

// Handler serves every service on one listener: the token service at
// /v2/oauth/token, the reporting service at /v1/reports and the server API
// under /v4 (RECON_AUTH_URL = RECON_REPORTING_URL = base, RECON_SERVER_URL = base+"/v4").
func (s *Sandbox) Handler() http.Handler { return s.mux }

// Accounts lists this node's accounts as account@address, the value of RECON_ACCOUNTS.
func (s *Sandbox) Accounts() []string {
	out := make([]string, len(ours))
	for i, a := range ours {
		out[i] = a.addr()
	}
	return out
}

// Requests counts the requests served per "METHOD /path-pattern".
func (s *Sandbox) Requests() map[string]int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return maps.Clone(s.requests)
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
)

func (s *Sandbox) routes() {
	s.mux = http.NewServeMux()
	s.handle("POST /v2/oauth/token", s.issueToken)
	s.handle("POST /v1/reports", s.authed(s.reportDenied, s.createReport))
	s.handle("GET /v1/reports", s.authed(s.reportDenied, s.listReports))
	s.handle("GET /v1/reports/{id}", s.authed(s.reportDenied, s.getReport))
	s.handle("DELETE /v1/reports/{id}", s.authed(s.reportDenied, s.deleteReport))
	s.handle("GET /v1/reports/download/{id}", s.authed(s.reportDenied, s.downloadReport))
	s.handle("GET /v4/statement/{account}", s.authed(serverDenied, s.getStatement))
	// The server API answers 403 when no handler is found (spec: pagination errors).
	s.handle("/v4/", func(w http.ResponseWriter, r *http.Request) {
		serverError(w, http.StatusForbidden, "A0110", "Forbidden", "no handler found for "+r.Method+" "+r.URL.Path)
	})
}

// handle registers h for pattern and counts its requests.
func (s *Sandbox) handle(pattern string, h http.HandlerFunc) {
	s.mux.HandleFunc(pattern, func(w http.ResponseWriter, r *http.Request) {
		s.mu.Lock()
		s.requests[pattern]++
		s.mu.Unlock()
		h(w, r)
	})
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v) // the client may have gone; nothing to do
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
