package extract

import (
	"cmp"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"path"
	"path/filepath"
	"strings"
	"time"

	"recon/extract/raw"
)

// Report is a report record of the reporting service.
type Report struct {
	ID           string    `json:"reportId"`
	Name         string    `json:"reportName"`
	Type         string    `json:"reportType"`
	Format       string    `json:"reportFormat"`
	Status       string    `json:"reportStatus"`
	CreatedBy    string    `json:"reportCreatedBy,omitempty"`
	DownloadLink string    `json:"downloadLink,omitempty"`
	StartDate    time.Time `json:"startDate"`
	EndDate      time.Time `json:"endDate"`
	CreatedOn    time.Time `json:"createdOn,omitzero"`
}

// Days returns the whole UTC days inside [StartDate, EndDate]; an EndDate
// up to one second short of midnight (23:59:59 or 23:59:59.999) still
// covers its day, and a month-to-date EndDate of 00:00 today covers up to
// yesterday.
func (r Report) Days() (raw.Window, error) {
	from := day(r.StartDate)
	if from.Before(r.StartDate.UTC()) {
		from = from.AddDate(0, 0, 1)
	}
	w := raw.Window{From: from, To: day(r.EndDate.Add(time.Second)).AddDate(0, 0, -1)}
	if w.To.Before(w.From) {
		return raw.Window{}, fmt.Errorf("report %s: %s..%s covers no whole day", r.ID,
			r.StartDate.UTC().Format(TimeFormat), r.EndDate.UTC().Format(TimeFormat))
	}
	return w, nil
}

// maxPollInterval caps the growing wait between report polls (unless PollInterval is longer).
const maxPollInterval = 30 * time.Second

// CreateReport asks for a report of one type and format over w (at most
// MaxReportDays). When the POST fails so that the report may have been made
// (a reset connection, a 502 or 504), it looks for that report (findCreated)
// and returns it instead of asking again.
func (c *Client) CreateReport(ctx context.Context, reportType, format string, w raw.Window) (Report, error) {
	op := fmt.Sprintf("create report %s %s", reportType, w)
	if d := w.Days(); d < 1 || d > MaxReportDays {
		return Report{}, fmt.Errorf("%s: %d days, want 1..%d", op, d, MaxReportDays)
	}
	want := Report{
		Name:      fmt.Sprintf("recon %s %s", reportType, w),
		Type:      reportType,
		Format:    format,
		StartDate: w.Start(),                      // first day 00:00:00.000Z
		EndDate:   w.End().Add(-time.Millisecond), // last day 23:59:59.999Z
	}
	body := map[string]string{
		"reportName": want.Name, "reportType": reportType, "reportFormat": format,
		"startDate": want.StartDate.Format(TimeFormat), "endDate": want.EndDate.Format(TimeFormat),
	}
	req, err := jsonRequest(ctx, http.MethodPost, c.cfg.ReportingURL+PathReports, body)
	if err != nil {
		return Report{}, fmt.Errorf("%s: %w", op, err)
	}
	since := c.cfg.Now()
	var r Report
	err = c.doPost(ctx, op, req, c.apiCall(), decodeInto(&r), func(ctx context.Context) (found bool, err error) {
		r, found, err = c.findCreated(ctx, want, since)
		return found, err
	})
	if err != nil {
		return Report{}, err
	}
	if r.ID == "" {
		return Report{}, fmt.Errorf("%s: response has no reportId", op)
	}
	c.runOf(ctx).created(r.ID)
	return r, nil
}

// findCreated looks, among the reports created through the API, for one
// that a POST of want sent at since may have made: same type, format, start
// and end (and name, when the list gives it), created no earlier than
// since less CreatedSkew, and not already used by this run. The newest wins.
func (c *Client) findCreated(ctx context.Context, want Report, since time.Time) (Report, bool, error) {
	all, err := c.ListReports(ctx, CreatedByAPI)
	if err != nil {
		return Report{}, false, err
	}
	run := c.runOf(ctx)
	var best *Report
	for i, r := range all {
		if r.Type != want.Type || !strings.EqualFold(r.Format, want.Format) || !r.StartDate.Equal(want.StartDate) ||
			!r.EndDate.Equal(want.EndDate) || (r.Name != "" && r.Name != want.Name) ||
			(!r.CreatedOn.IsZero() && r.CreatedOn.Before(since.Add(-CreatedSkew))) || run.used(r.ID) {
			continue
		}
		if best == nil || r.CreatedOn.After(best.CreatedOn) || r.CreatedOn.Equal(best.CreatedOn) && r.ID > best.ID {
			best = &all[i]
		}
	}
	if best == nil {
		return Report{}, false, nil
	}
	c.log.Warn("found the report a failed create made", "report", best.ID, "type", want.Type)
	return *best, true, nil
}

// ListReports lists the reports created by createdBy (CreatedByScheduler,
// CreatedByAPI or USER; "" for all).
func (c *Client) ListReports(ctx context.Context, createdBy string) ([]Report, error) {
	u := c.cfg.ReportingURL + PathReports
	if createdBy != "" {
		u += "?" + url.Values{"created-by": {createdBy}}.Encode()
	}
	var out struct {
		Reports *[]Report `json:"reports"`
	}
	if err := c.doJSON(ctx, "list reports created by "+cmp.Or(createdBy, "anyone"), http.MethodGet, u, nil, &out); err != nil {
		return nil, err
	}
	if out.Reports == nil {
		return nil, fmt.Errorf("list reports: response has no reports field")
	}
	return *out.Reports, nil
}

// DeleteReport deletes a report.
func (c *Client) DeleteReport(ctx context.Context, id string) error {
	op := "delete report " + id
	req, err := http.NewRequestWithContext(ctx, http.MethodDelete, c.reportURL(id), nil)
	if err != nil {
		return fmt.Errorf("%s: %w", op, err)
	}
	return c.do(ctx, op, req, c.apiCall(), func(*http.Response) error { return nil })
}

// GetReport fetches a report record, with its downloadLink once READY.
func (c *Client) GetReport(ctx context.Context, id string) (Report, error) {
	var r Report
	err := c.doJSON(ctx, "get report "+id, http.MethodGet, c.reportURL(id), nil, &r)
	return r, err
}

func (c *Client) reportURL(id string) string {
	return c.cfg.ReportingURL + PathReports + "/" + url.PathEscape(id)
}

// WaitReport polls a PENDING report until it is READY, EMPTY or FAILED. The
// first poll comes after Config.PollInterval, each next wait doubles up to
// 30s; after Config.PollTimeout it returns ErrPollTimeout.
func (c *Client) WaitReport(ctx context.Context, id string) (Report, error) {
	pctx, cancel := context.WithTimeout(ctx, c.cfg.PollTimeout)
	defer cancel()
	timedOut := func(err error) error {
		if ctx.Err() == nil && pctx.Err() != nil {
			return fmt.Errorf("wait report %s: %w after %v", id, ErrPollTimeout, c.cfg.PollTimeout)
		}
		return err
	}
	interval := c.cfg.PollInterval
	for {
		if err := c.wait(pctx, interval); err != nil {
			return Report{}, timedOut(fmt.Errorf("wait report %s: %w", id, err))
		}
		r, err := c.GetReport(pctx, id)
		if err != nil {
			return Report{}, timedOut(err)
		}
		traceOf(ctx).polled(id, r.Status)
		switch r.Status {
		case raw.StatusReady, raw.StatusEmpty, raw.StatusFailed:
			return r, nil
		case StatusPending:
		default:
			return Report{}, fmt.Errorf("wait report %s: unknown status %q", id, r.Status)
		}
		c.log.Debug("report pending", "report", id, "waited", interval)
		interval = min(2*interval, max(maxPollInterval, c.cfg.PollInterval))
	}
}

// DownloadReport streams a READY report to dir/reports/<TYPE>/<reportId>.<ext>
// through a temporary file, hashing it on the way. It follows r.DownloadLink
// (without the token unless it is a service host), else the download path.
// A 204 answer gives a RawFile with Status EMPTY and no file.
func (c *Client) DownloadReport(ctx context.Context, r Report, dir string, source string) (raw.File, error) {
	op := "download report " + r.ID
	format := strings.ToUpper(r.Format)
	ext, ok := map[string]string{raw.FormatCSV: ".csv", raw.FormatJSON: ".json"}[format]
	if !ok {
		return raw.File{}, fmt.Errorf("%s: unknown format %q", op, r.Format)
	}
	w, err := r.Days()
	if err != nil {
		return raw.File{}, fmt.Errorf("%s: %w", op, err)
	}
	link := r.DownloadLink
	if link == "" {
		link = c.cfg.ReportingURL + PathReportDownload + url.PathEscape(r.ID)
	}
	u, err := c.reporting.Parse(link) // a relative link is relative to the reporting service
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") {
		return raw.File{}, fmt.Errorf("%s: bad download link", op)
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u.String(), nil)
	if err != nil {
		return raw.File{}, fmt.Errorf("%s: %w", op, err)
	}
	rel := path.Join("reports", safeName(r.Type), safeName(r.ID)+ext)
	run := c.runOf(ctx)
	if err := run.claim(rel, r.ID); err != nil {
		return raw.File{}, fmt.Errorf("%s: %w", op, err)
	}
	name := filepath.Join(dir, filepath.FromSlash(rel))
	if err := os.MkdirAll(filepath.Dir(name), 0o755); err != nil {
		return raw.File{}, fmt.Errorf("%s: %w", op, err)
	}
	f := raw.File{Source: source, Format: format, Window: w, ReportID: r.ID, Request: "GET " + c.redact(u)}
	err = c.do(ctx, op, req, c.download(), func(resp *http.Response) error {
		if resp.StatusCode == http.StatusNoContent {
			f.Status = raw.StatusEmpty
			return nil
		}
		body := &budgetReader{r: traceOf(ctx).reader(resp.Body), b: run.budget}
		sum, n, err := writeFile(name, body, resp.ContentLength)
		if err != nil {
			run.budget.give(body.booked) // the temporary file is gone
		}
		f.Status, f.Path, f.SHA256, f.Size = raw.StatusReady, rel, sum, n
		return err
	})
	if err != nil {
		return raw.File{}, err
	}
	return f, nil
}

// writeFile copies r to name through a temporary file in the same folder,
// renamed into place once complete. want is the expected size, or -1.
func writeFile(name string, r io.Reader, want int64) (sum string, n int64, err error) {
	tmp, err := os.CreateTemp(filepath.Dir(name), "."+filepath.Base(name)+".*.tmp")
	if err != nil {
		return "", 0, err
	}
	defer func() {
		if err != nil {
			tmp.Close()
			os.Remove(tmp.Name())
		}
	}()
	h := sha256.New()
	n, err = io.Copy(io.MultiWriter(tmp, h), r)
	switch {
	case errors.Is(err, io.ErrUnexpectedEOF):
		return "", n, fmt.Errorf("%w after %d bytes: %w", ErrTruncated, n, err)
	case err != nil:
		return "", n, err
	case want >= 0 && n != want:
		return "", n, fmt.Errorf("%w: %d of %d bytes", ErrTruncated, n, want)
	}
	if err = tmp.Close(); err != nil {
		return "", n, err
	}
	if err = os.Rename(tmp.Name(), name); err != nil {
		return "", n, err
	}
	return hex.EncodeToString(h.Sum(nil)), n, nil
}

// safeName makes s usable as one file name: characters other than letters,
// digits and "@._-" become "_", and a leading dot is escaped.
func safeName(s string) string {
	b := []byte(s)
	for i, ch := range b {
		if !(ch >= 'a' && ch <= 'z' || ch >= 'A' && ch <= 'Z' || ch >= '0' && ch <= '9' || strings.IndexByte("@._-", ch) >= 0) {
			b[i] = '_'
		}
	}
	if len(b) == 0 || b[0] == '.' {
		return "_" + string(b)
	}
	return string(b)
}

// day is t's UTC day, at 00:00.
func day(t time.Time) time.Time {
	w, _ := raw.NewWindow(t, t) // a window of one instant is never empty
	return w.From
}
