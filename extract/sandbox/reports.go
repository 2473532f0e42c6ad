package sandbox

import (
	"bufio"
	"cmp"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/google/uuid"

	"recon/extract"
	"recon/extract/raw"
)

// Reporting error codes (extract/provider.go).
const (
	rptInvalid  = "RPT_1"
	rptRange    = "RPT_2"
	rptTooOld   = "RPT_3"
	rptNotFound = "RPT_4"
	rptNotReady = "RPT_5"
	rptType     = "RPT_7"
)

var formats = []string{raw.FormatCSV, raw.FormatJSON}

// report is one report record.
type report struct {
	id, name, typ, format, status, createdBy string
	start, end, created                      time.Time // end is inclusive
	polls                                    int       // GETs answered so far
	fault                                    string    // FAILED or EMPTY by Faults, else ""
}

type reportJSON struct {
	ReportID        string `json:"reportId"`
	ReportName      string `json:"reportName"`
	ReportType      string `json:"reportType"`
	ReportFormat    string `json:"reportFormat"`
	ReportStatus    string `json:"reportStatus"`
	StartDate       string `json:"startDate"`
	EndDate         string `json:"endDate"`
	CreatedOn       string `json:"createdOn"`
	DownloadLink    string `json:"downloadLink,omitempty"`
	ReportCreatedBy string `json:"reportCreatedBy"`
}

func (rp *report) json(link string) reportJSON {
	return reportJSON{rp.id, rp.name, rp.typ, rp.format, rp.status, ts(rp.start), ts(rp.end), ts(rp.created), link, rp.createdBy}
}

// until is the exclusive end of the rows a report holds.
func (rp *report) until() time.Time { return rp.end.Truncate(time.Millisecond).Add(time.Millisecond) }

// reportState is the reporting service's: the reports created through the
// API, and what the download host saw.
type reportState struct {
	mu        sync.Mutex
	byID      map[string]*report
	creations map[string]int   // reports created per type, format and window
	deleted   map[string]bool  // deleted scheduled reports
	sizes     map[string]int64 // reports generated whole once, by id, with their size when declared (Faults.Truncate)
	counted   map[string]bool  // report faults already counted, by report id
	filesAuth []string         // Authorization headers the download host received
}

// resolve sets the status a finished report has: its fault, else READY, or
// EMPTY without rows. The caller holds s.reports.mu.
func (s *Sandbox) resolve(rp *report) {
	switch {
	case rp.fault != "":
		rp.status = rp.fault
		if !s.reports.counted[rp.id] {
			s.reports.counted[rp.id] = true
			s.faults.add(map[string]string{raw.StatusFailed: faultFailed, raw.StatusEmpty: faultEmpty}[rp.fault], 1)
		}
	case s.hasRows(rp.typ, rp.start, rp.until()):
		rp.status = raw.StatusReady
	default:
		rp.status = raw.StatusEmpty
	}
}

// reportFault draws whether a report ends FAILED or EMPTY (Faults); key
// names the report's request, n how many came before it.
func (s *Sandbox) reportFault(key string, n int) string {
	x := s.rng(tagReportFault, hash(key), uint64(n)).Float64()
	switch f := s.cfg.Faults; {
	case x < f.FailedReports:
		return raw.StatusFailed
	case x < f.FailedReports+f.EmptyReports:
		return raw.StatusEmpty
	}
	return ""
}

// scheduled returns the reports the provider generates by itself (created by
// SCHEDULER): the two previous full months and the month to date, for every
// type and format; the run at 00:00 UTC is available about one minute later.
// The caller holds s.reports.mu.
func (s *Sandbox) scheduled() []*report {
	today := dayTime(unixDay(s.now().Add(-time.Minute)))
	month := time.Date(today.Year(), today.Month(), 1, 0, 0, 0, 0, time.UTC)
	type period struct {
		from, to time.Time
		kind     string
	}
	periods := []period{
		{month.AddDate(0, -2, 0), month.AddDate(0, -1, 0), "month"},
		{month.AddDate(0, -1, 0), month, "month"},
	}
	if today.After(month) {
		periods = append(periods, period{month, today, "month to date"})
	}
	var out []*report
	for _, p := range periods {
		for ti, typ := range raw.ReportTypes {
			for fi, format := range formats {
				id := newUUID(s.rng(tagScheduled, mix(uint64(unixDay(p.from)), uint64(unixDay(p.to))), uint64(ti*len(formats)+fi)))
				if s.reports.deleted[id] {
					continue
				}
				rp := &report{id: id, name: fmt.Sprintf("%s %s %s", typ, p.from.Format("2006-01"), p.kind),
					typ: typ, format: format, createdBy: "SCHEDULER",
					start: p.from, end: p.to.Add(-time.Millisecond), created: p.to, fault: s.reportFault(id, 0)}
				s.resolve(rp)
				out = append(out, rp)
			}
		}
	}
	return out
}

// lookup finds a report by id; the caller holds s.reports.mu.
func (s *Sandbox) lookup(id string) *report {
	if rp := s.reports.byID[id]; rp != nil {
		return rp
	}
	for _, rp := range s.scheduled() {
		if rp.id == id {
			return rp
		}
	}
	return nil
}

// reportID reads and checks the path id; it writes the error and returns "" when bad.
func (s *Sandbox) reportID(w http.ResponseWriter, r *http.Request) string {
	id := r.PathValue("id")
	if _, err := uuid.Parse(id); err != nil {
		s.reportError(w, http.StatusBadRequest, rptInvalid, "Bad Request", "report id must be a uuid")
		return ""
	}
	return id
}

func (s *Sandbox) createReport(w http.ResponseWriter, r *http.Request) {
	var req struct {
		ReportName   string `json:"reportName"`
		StartDate    string `json:"startDate"`
		EndDate      string `json:"endDate"`
		ReportType   string `json:"reportType"`
		ReportFormat string `json:"reportFormat"`
	}
	if err := json.NewDecoder(io.LimitReader(r.Body, 1<<20)).Decode(&req); err != nil {
		s.reportError(w, http.StatusBadRequest, rptInvalid, "Bad Request", "request body is not a JSON report request")
		return
	}
	start, err1 := parseTime(req.StartDate)
	end, err2 := parseTime(req.EndDate)
	now := s.now()
	bad := func(code, detail string) { s.reportError(w, http.StatusBadRequest, code, "Bad Request", detail) }
	switch n := utf8.RuneCountInString(req.ReportName); {
	case n < 1 || n > 256:
		bad(rptInvalid, "reportName must be 1..256 characters")
	case !slices.Contains(raw.ReportTypes, req.ReportType):
		bad(rptType, "unsupported reportType "+strconv.Quote(req.ReportType))
	case !slices.Contains(formats, req.ReportFormat):
		bad(rptType, "unsupported reportFormat "+strconv.Quote(req.ReportFormat))
	case err1 != nil || err2 != nil:
		bad(rptInvalid, "startDate and endDate must be date-times such as 2026-10-01T00:00:00.000Z")
	case !end.After(start):
		bad(rptRange, "endDate must be after startDate")
	case unixDay(end)-unixDay(start)+1 > extract.MaxReportDays:
		bad(rptRange, fmt.Sprintf("a report covers at most %d calendar days", extract.MaxReportDays))
	case dayTime(unixDay(start)).Before(dayTime(unixDay(now)).AddDate(0, -extract.ReportWindowMonths, 0)):
		bad(rptTooOld, fmt.Sprintf("startDate is more than %d months back", extract.ReportWindowMonths))
	default:
		// The id and the fault are drawn from what is asked and how often
		// it was asked before, never from the order of concurrent requests.
		key := req.ReportType + " " + req.ReportFormat + " " + ts(start) + " " + ts(end)
		s.reports.mu.Lock()
		n := s.reports.creations[key]
		s.reports.creations[key]++
		rp := &report{id: newUUID(s.rng(tagReport, hash(key), uint64(n))), name: req.ReportName,
			typ: req.ReportType, format: req.ReportFormat, status: extract.StatusPending,
			createdBy: "API", start: start, end: end, created: now, fault: s.reportFault(key, n)}
		if s.cfg.PendingPolls == 0 {
			s.resolve(rp)
		}
		s.reports.byID[rp.id] = rp
		body := rp.json("")
		s.reports.mu.Unlock()
		writeJSON(w, http.StatusOK, body)
	}
}

// parseTime reads the provider's 24-character timestamps and any other RFC 3339 date-time.
func parseTime(v string) (time.Time, error) {
	t, err := time.Parse(extract.TimeFormat, v)
	if err != nil {
		t, err = time.Parse(time.RFC3339Nano, v)
	}
	return t.UTC(), err
}

func (s *Sandbox) listReports(w http.ResponseWriter, r *http.Request) {
	by := r.URL.Query().Get("created-by")
	if !slices.Contains([]string{"", "API", "SCHEDULER", "USER"}, by) {
		s.reportError(w, http.StatusBadRequest, rptInvalid, "Bad Request", "created-by must be API, SCHEDULER or USER")
		return
	}
	s.reports.mu.Lock()
	var all []*report
	if by == "" || by == "SCHEDULER" { // only reports listed count as injected faults
		all = s.scheduled()
	}
	for _, rp := range s.reports.byID {
		all = append(all, rp)
	}
	out := []reportJSON{}
	for _, rp := range all {
		if by == "" || by == rp.createdBy {
			out = append(out, rp.json(""))
		}
	}
	s.reports.mu.Unlock()
	slices.SortFunc(out, func(a, b reportJSON) int {
		return cmp.Or(cmp.Compare(a.CreatedOn, b.CreatedOn), cmp.Compare(a.ReportID, b.ReportID))
	})
	writeJSON(w, http.StatusOK, map[string]any{"reports": out})
}

// getReport answers PENDING for the first PendingPolls GETs, then READY or EMPTY.
func (s *Sandbox) getReport(w http.ResponseWriter, r *http.Request) {
	id := s.reportID(w, r)
	if id == "" {
		return
	}
	s.reports.mu.Lock()
	rp := s.lookup(id)
	var body reportJSON
	if rp != nil {
		if rp.status == extract.StatusPending {
			if rp.polls++; rp.polls > s.cfg.PendingPolls {
				s.resolve(rp)
			}
		}
		link := ""
		if rp.status == raw.StatusReady {
			link = s.downloadLink(r, rp)
		}
		body = rp.json(link)
	}
	s.reports.mu.Unlock()
	if rp == nil {
		s.reportError(w, http.StatusNotFound, rptNotFound, "Not Found", "no report "+id)
		return
	}
	writeJSON(w, http.StatusOK, body)
}

func (s *Sandbox) deleteReport(w http.ResponseWriter, r *http.Request) {
	id := s.reportID(w, r)
	if id == "" {
		return
	}
	s.reports.mu.Lock()
	rp := s.lookup(id)
	if rp != nil {
		if rp.createdBy == "SCHEDULER" { // made anew on every lookup
			s.reports.deleted[id] = true
		}
		delete(s.reports.byID, id)
	}
	s.reports.mu.Unlock()
	if rp == nil {
		s.reportError(w, http.StatusNotFound, rptNotFound, "Not Found", "no report "+id)
		return
	}
	w.WriteHeader(http.StatusNoContent)
}

// downloadLink is where a READY report downloads: the reporting host, or
// with Faults.DownloadHost a signed link on the download host.
func (s *Sandbox) downloadLink(r *http.Request, rp *report) string {
	if !s.cfg.Faults.DownloadHost {
		scheme := "http"
		if r.TLS != nil {
			scheme = "https"
		}
		return scheme + "://" + r.Host + extract.PathReportDownload + rp.id
	}
	ext := map[string]string{raw.FormatCSV: ".csv", raw.FormatJSON: ".json"}[rp.format]
	expires := strconv.FormatInt(s.now().Add(time.Hour).Unix(), 10)
	return s.cfg.FilesURL + "/files/" + rp.id + ext + "?" + url.Values{
		"expires": {expires}, "signature": {s.sign(rp.id, expires)}}.Encode()
}

// sign is the signature of a download link (deterministic from the seed).
func (s *Sandbox) sign(id, expires string) string {
	return strconv.FormatUint(mix(mix(uint64(s.cfg.Seed), tagSign), hash(id+"|"+expires)), 16)
}

// downloadReport streams the report from the reporting host.
func (s *Sandbox) downloadReport(w http.ResponseWriter, r *http.Request) {
	if id := s.reportID(w, r); id != "" {
		s.serveReport(w, id)
	}
}

// downloadFile serves a signed download link: no token needed, any
// Authorization header recorded (and ignored).
func (s *Sandbox) downloadFile(w http.ResponseWriter, r *http.Request) {
	if a := r.Header.Get("Authorization"); a != "" {
		s.reports.mu.Lock()
		s.reports.filesAuth = append(s.reports.filesAuth, a)
		s.reports.mu.Unlock()
	}
	id := strings.TrimSuffix(strings.TrimSuffix(r.PathValue("name"), ".csv"), ".json")
	q := r.URL.Query()
	exp, err := strconv.ParseInt(q.Get("expires"), 10, 64)
	if err != nil || q.Get("signature") != s.sign(id, q.Get("expires")) || !s.now().Before(time.Unix(exp, 0)) {
		w.Header().Set("Content-Type", "application/xml")
		w.WriteHeader(http.StatusForbidden)
		fmt.Fprintln(w, `<?xml version="1.0" encoding="UTF-8"?><Error><Code>AccessDenied</Code><Message>Request has expired or the signature does not match</Message></Error>`)
		return
	}
	s.serveReport(w, id)
}

// serveReport streams a report; EMPTY answers 204. The report streams as
// it is generated (chunked, no Content-Length), so a large one starts at
// once and is never held in memory. With truncated downloads configured, a
// cut needs a declared length: the first download then counts the bytes in
// a first pass, and every download sends Content-Length. With malformed
// rows configured, that first pass also counts them.
func (s *Sandbox) serveReport(w http.ResponseWriter, id string) {
	s.reports.mu.Lock()
	rp := s.lookup(id)
	var cp report
	if rp != nil {
		cp = *rp
	}
	size, sized := s.reports.sizes[id]
	s.reports.mu.Unlock()
	switch {
	case rp == nil:
		s.reportError(w, http.StatusNotFound, rptNotFound, "Not Found", "no report "+id)
		return
	case cp.status == raw.StatusEmpty:
		w.WriteHeader(http.StatusNoContent)
		return
	case cp.status != raw.StatusReady:
		s.reportError(w, http.StatusConflict, rptNotReady, "Conflict", "report "+id+" is "+cp.status)
		return
	}
	declare := s.cfg.Faults.Truncate > 0
	if !sized {
		// The first download counts the report's bytes and malformed rows
		// before it sends any: a client can have the whole body, and the
		// test its injected count, before this handler would reach its end.
		var c counter
		var junk int
		if declare || s.cfg.Faults.MalformedRows > 0 {
			var err error
			if _, junk, err = s.writeReport(&c, cp.typ, cp.format, cp.start, cp.until()); err != nil {
				s.reportError(w, http.StatusInternalServerError, "RPT_8", "Internal Server Error", err.Error())
				return
			}
		}
		size = c.n
		s.reports.mu.Lock()
		if _, again := s.reports.sizes[id]; !again {
			s.faults.add(faultMalformed, junk)
			s.reports.sizes[id] = size
		}
		s.reports.mu.Unlock()
	}
	ext, ctype := "csv", "text/csv; charset=utf-8"
	if cp.format == raw.FormatJSON {
		ext, ctype = "json", "application/json"
	}
	w.Header().Set("Content-Type", ctype)
	if declare {
		w.Header().Set("Content-Length", strconv.FormatInt(size, 10))
	}
	w.Header().Set("Content-Disposition", fmt.Sprintf("attachment; filename=%q", id+"."+ext))
	bw := bufio.NewWriterSize(w, 64<<10)
	if _, _, err := s.writeReport(bw, cp.typ, cp.format, cp.start, cp.until()); err == nil {
		_ = bw.Flush() // a client gone mid-body retries
	}
}

// counter is a writer that only counts bytes.
type counter struct{ n int64 }

func (c *counter) Write(p []byte) (int, error) { c.n += int64(len(p)); return len(p), nil }
