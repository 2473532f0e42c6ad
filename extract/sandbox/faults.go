package sandbox

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"hash/fnv"
	"io"
	"maps"
	"net/http"
	"slices"
	"strconv"
	"sync"
	"time"
)

// Faults are the sandbox's fault knobs (docs/sandbox.md). Every draw is a
// pure function of the seed and the request (its method, URL and body, and
// how many times that same request came before), never of arrival order, so
// a test sees the same faults on every run. No knob changes the generated
// data: faults add failures, waits and extra malformed rows only.
type Faults struct {
	RateLimit      float64  `json:"rate_limit"`          // share of requests answered 429 with Retry-After
	RetryAfter     int      `json:"retry_after"`         // seconds in Retry-After of 429 and 503 (default 1)
	ServerErrors   float64  `json:"server_errors"`       // share answered 502, 503 or 504
	MaxConsecutive int      `json:"max_consecutive"`     // faults in a row on one request before it passes (default 2)
	Latency        Duration `json:"latency"`             // added before every answer
	TokenUses      int      `json:"token_uses"`          // requests a token serves before it expires (0: TokenTTL only)
	FailedReports  float64  `json:"failed_reports"`      // share of reports that end FAILED
	EmptyReports   float64  `json:"empty_reports"`       // share of reports that end EMPTY although they have rows
	Truncate       float64  `json:"truncated_downloads"` // share of downloads cut off halfway
	MalformedRows  float64  `json:"malformed_rows"`      // share of report rows followed by a malformed copy
	DownloadHost   bool     `json:"download_host"`       // download links point to Config.FilesURL, a second listener
	Down           []string `json:"down"`                // routes (patterns as Requests names them) answering 503 to every request: an outage
	// LiquidationSummaries: the liquidation list serves summaries (no
	// trade_requests), so a client must call GET /liquidations/{id} for each;
	// by default list items are whole records.
	LiquidationSummaries bool `json:"liquidation_summaries"`
}

// ModerateFaults is every network fault at a moderate rate, with data faults
// (malformed rows) too: what `recon sandbox --faults moderate` serves and
// the end-to-end fault tests use. EMPTY reports are left out: an EMPTY
// answer for a window with rows is data loss no client can tell from an
// empty window.
func ModerateFaults() Faults {
	return Faults{
		RateLimit: 0.08, RetryAfter: 1, ServerErrors: 0.08, MaxConsecutive: 2, Latency: Duration(5 * time.Millisecond),
		TokenUses: 40, FailedReports: 0.2, Truncate: 0.3, MalformedRows: 0.02, DownloadHost: true,
	}
}

// Duration is a time.Duration written in JSON as text ("250ms").
type Duration time.Duration

// MarshalJSON writes the duration as text.
func (d Duration) MarshalJSON() ([]byte, error) { return json.Marshal(time.Duration(d).String()) }

// UnmarshalJSON reads text such as "250ms" or "1h".
func (d *Duration) UnmarshalJSON(b []byte) error {
	var s string
	if err := json.Unmarshal(b, &s); err != nil {
		return fmt.Errorf("duration: want text such as \"250ms\": %w", err)
	}
	v, err := time.ParseDuration(s)
	if err != nil {
		return err
	}
	*d = Duration(v)
	return nil
}

// LoadProfile reads a JSON fault profile into cfg: the Faults fields, and
// pending_polls (0: ready at once) and token_ttl for Config.PendingPolls and
// Config.TokenTTL. Unknown keys are an error.
func LoadProfile(r io.Reader, cfg *Config) error {
	var p struct {
		Faults
		PendingPolls *int      `json:"pending_polls"`
		TokenTTL     *Duration `json:"token_ttl"`
	}
	dec := json.NewDecoder(r)
	dec.DisallowUnknownFields()
	if err := dec.Decode(&p); err != nil {
		return fmt.Errorf("fault profile: %w", err)
	}
	cfg.Faults = p.Faults
	if p.PendingPolls != nil {
		cfg.PendingPolls = *p.PendingPolls
		if cfg.PendingPolls == 0 {
			cfg.PendingPolls = -1 // Config's "ready at once"
		}
	}
	if p.TokenTTL != nil {
		cfg.TokenTTL = time.Duration(*p.TokenTTL)
	}
	return nil
}

func (f Faults) validate(filesURL string) error {
	var errs []error
	for _, r := range []struct {
		name string
		v    float64
	}{{"rate_limit", f.RateLimit}, {"server_errors", f.ServerErrors}, {"failed_reports", f.FailedReports},
		{"empty_reports", f.EmptyReports}, {"truncated_downloads", f.Truncate}, {"malformed_rows", f.MalformedRows}} {
		if r.v < 0 || r.v > 1 {
			errs = append(errs, fmt.Errorf("sandbox faults: %s must be 0..1", r.name))
		}
	}
	if f.RateLimit+f.ServerErrors+f.Truncate > 1 || f.FailedReports+f.EmptyReports > 1 {
		errs = append(errs, errors.New("sandbox faults: rate_limit + server_errors + truncated_downloads and failed_reports + empty_reports must each be at most 1"))
	}
	if f.RetryAfter < 0 || f.MaxConsecutive < 0 || f.Latency < 0 || f.TokenUses < 0 {
		errs = append(errs, errors.New("sandbox faults: retry_after, max_consecutive, latency and token_uses must not be negative"))
	}
	if f.DownloadHost && filesURL == "" {
		errs = append(errs, errors.New("sandbox faults: download_host needs Config.FilesURL"))
	}
	return errors.Join(errs...)
}

// Kinds of injected faults, the keys of Injected.
const (
	faultRateLimit   = "rate_limit"
	faultServerError = "server_error"
	faultTruncated   = "truncated_download"
	faultTokenExpiry = "token_expired"
	faultFailed      = "failed_report"
	faultEmpty       = "empty_report"
	faultMalformed   = "malformed_row"
	faultDown        = "down"
)

// faultState is what the faults keep: the draws per distinct request and
// the faults injected, by kind and (429 and 5xx) by route pattern.
type faultState struct {
	mu       sync.Mutex
	streaks  map[string]*streak
	injected map[string]int
	on       map[string]int
}

// add counts n faults of kind that no route pattern answers for (an
// expired token, a report's fault, a cut download, malformed rows); the
// kind is listed by Injected even when n is 0.
func (f *faultState) add(kind string, n int) {
	f.mu.Lock()
	f.injected[kind] += n
	f.mu.Unlock()
}

func (f *faultState) snapshot() map[string]int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return maps.Clone(f.injected)
}

func (f *faultState) onPattern(pattern string) int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.on[pattern]
}

// streak is what the fault draw keeps per distinct request.
type streak struct{ seen, faults int }

// requestKey identifies a request for the fault draws: method, URL and, for
// a body, its hash. It restores the body it reads.
func requestKey(r *http.Request) string {
	key := r.Method + " " + r.URL.RequestURI()
	if r.Body != nil && r.Body != http.NoBody {
		b, _ := io.ReadAll(io.LimitReader(r.Body, 1<<20))
		r.Body = io.NopCloser(bytes.NewReader(b))
		key += " " + strconv.FormatUint(hash(string(b)), 16)
	}
	return key
}

func hash(s string) uint64 {
	h := fnv.New64a()
	h.Write([]byte(s))
	return h.Sum64()
}

// draw decides the fault of one request: "" (none), faultDown,
// faultRateLimit, faultServerError or, for downloads, faultTruncated. After
// MaxConsecutive faults in a row the same request passes, unless its route is down.
func (s *Sandbox) draw(pattern, key string, download bool) string {
	f := s.cfg.Faults
	s.faults.mu.Lock()
	defer s.faults.mu.Unlock()
	if slices.Contains(f.Down, pattern) {
		s.faults.injected[faultDown]++
		s.faults.on[pattern]++
		return faultDown
	}
	st := s.faults.streaks[key]
	if st == nil {
		st = &streak{}
		s.faults.streaks[key] = st
	}
	n := st.seen
	st.seen++
	if st.faults >= f.MaxConsecutive {
		st.faults = 0
		return ""
	}
	x := s.rng(tagFault, hash(key), uint64(n)).Float64()
	kind := ""
	switch {
	case x < f.RateLimit:
		kind = faultRateLimit
	case x < f.RateLimit+f.ServerErrors:
		kind = faultServerError
	case download && x < f.RateLimit+f.ServerErrors+f.Truncate:
		kind = faultTruncated
	}
	if kind == "" {
		st.faults = 0
		return ""
	}
	st.faults++
	if kind != faultTruncated { // counted when the body is actually cut
		s.faults.injected[kind]++
		s.faults.on[pattern]++
	}
	return kind
}

// inject wraps h, the handler of pattern, with the request-level faults:
// latency, 429, 5xx and truncated bodies.
func (s *Sandbox) inject(pattern string, download bool, h http.HandlerFunc) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		if d := time.Duration(s.cfg.Faults.Latency); d > 0 {
			t := time.NewTimer(d)
			select {
			case <-t.C:
			case <-r.Context().Done():
				t.Stop()
				return
			}
		}
		key := requestKey(r)
		switch s.draw(pattern, key, download) {
		case faultRateLimit:
			w.Header().Set("Retry-After", strconv.Itoa(s.cfg.Faults.RetryAfter))
			writeJSON(w, http.StatusTooManyRequests, map[string]any{"type": "urn:recon-sandbox:error:rate_limited",
				"title": "Too Many Requests", "status": http.StatusTooManyRequests, "detail": "rate limit exceeded, retry later"})
			return
		case faultDown:
			w.Header().Set("Retry-After", strconv.Itoa(s.cfg.Faults.RetryAfter))
			writeJSON(w, http.StatusServiceUnavailable, map[string]any{"type": "urn:recon-sandbox:error:unavailable",
				"title": "Service Unavailable", "status": http.StatusServiceUnavailable, "detail": "the service is down"})
			return
		case faultServerError:
			switch code := []int{502, 503, 504}[s.rng(tagFault, hash(key), 1<<32).IntN(3)]; code {
			case http.StatusServiceUnavailable:
				w.Header().Set("Retry-After", strconv.Itoa(s.cfg.Faults.RetryAfter))
				writeJSON(w, code, map[string]any{"type": "urn:recon-sandbox:error:unavailable",
					"title": "Service Unavailable", "status": code, "detail": "the service is restarting"})
			default: // a proxy's page
				w.Header().Set("Content-Type", "text/html")
				w.WriteHeader(code)
				fmt.Fprintf(w, "<html><head><title>%d %s</title></head><body><h1>%[1]d %[2]s</h1></body></html>\n", code, http.StatusText(code))
			}
			return
		case faultTruncated:
			w = &truncator{ResponseWriter: w, s: s}
		}
		h(w, r)
	}
}

// errCut ends the body of a truncated download.
var errCut = errors.New("sandbox: download cut off")

// truncator passes the first half of a 200 body with a Content-Length and
// then fails every write, so the server drops the connection short.
type truncator struct {
	http.ResponseWriter
	s           *Sandbox
	started, on bool
	left        int64
}

func (t *truncator) WriteHeader(code int) {
	if !t.started {
		t.started = true
		if n, err := strconv.ParseInt(t.Header().Get("Content-Length"), 10, 64); err == nil && code == http.StatusOK && n > 1 {
			t.on, t.left = true, n/2
			t.s.faults.add(faultTruncated, 1)
		}
	}
	t.ResponseWriter.WriteHeader(code)
}

func (t *truncator) Write(b []byte) (int, error) {
	if !t.started {
		t.WriteHeader(http.StatusOK)
	}
	if !t.on {
		return t.ResponseWriter.Write(b)
	}
	if t.left <= 0 {
		return 0, errCut
	}
	n, err := t.ResponseWriter.Write(b[:min(int64(len(b)), t.left)])
	t.left -= int64(n)
	if err == nil && n < len(b) {
		err = errCut
	}
	return n, err
}
