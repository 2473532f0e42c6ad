package extract

import (
	"context"
	"fmt"
	"strings"

	"recon/extract/raw"
)

// candidate is a scheduled report and the whole days it covers.
type candidate struct {
	r    Report
	days raw.Window
}

// collectReports plans collect mode: it lists the SCHEDULER reports once and
// returns, per report type, a job for each report chosen to cover req.Reports,
// and for each run of days no report of the requested format covers a
// FAILED RawFile without a report id and a reason: those days are a gap in
// the source, as a FAILED report's are.
func (c *Client) collectReports(ctx context.Context, req Request, dir string) ([]job, outcome, error) {
	all, err := c.ListReports(ctx, CreatedByScheduler)
	if err != nil {
		return nil, outcome{}, err
	}
	var (
		jobs []job
		gaps outcome
	)
	for _, typ := range req.ReportTypes {
		var cands []candidate
		for _, r := range all {
			if r.Type != typ || !strings.EqualFold(r.Format, req.Format) {
				continue
			}
			days, err := r.Days()
			if err != nil {
				c.log.Warn("scheduled report ignored", "report", r.ID, "err", err)
				continue
			}
			cands = append(cands, candidate{r, days})
		}
		chosen, uncovered := cover(cands, req.Reports)
		for _, cd := range chosen {
			call := Call{What: typ, Window: cd.days, Request: "GET " + c.reportURL(cd.r.ID), Then: "download it when READY"}
			jobs = append(jobs, job{call: call, run: func(ctx context.Context) (outcome, error) {
				r, err := c.GetReport(ctx, cd.r.ID) // the listing has no downloadLink
				if err != nil {
					return outcome{}, err
				}
				f, err := c.finishReport(ctx, r, cd.days, dir)
				if err != nil {
					return outcome{}, err
				}
				o := outcome{files: []raw.File{f}}
				if f.Status == raw.StatusFailed {
					o.incomplete = []string{fmt.Sprintf("report %s %s (%s) FAILED", typ, cd.days, r.ID)}
				}
				return o, nil
			}})
		}
		for _, g := range uncovered {
			gaps.files = append(gaps.files, raw.File{Source: reportSources[typ], Format: req.Format, Window: g, Status: raw.StatusFailed,
				Request: "GET " + c.cfg.ReportingURL + PathReports + "?created-by=" + CreatedByScheduler})
			gaps.incomplete = append(gaps.incomplete, fmt.Sprintf("no %s report of %s (%s) covers %s", CreatedByScheduler, typ, req.Format, g))
		}
		c.log.Info("collect", "type", typ, "window", req.Reports.String(), "reports", len(chosen), "gaps", len(uncovered))
	}
	return jobs, gaps, nil
}

// cover picks, day by day through w, the candidate covering the day that
// reaches furthest (then the newest, then the smallest id), and returns the
// picks in order and the runs of days no candidate covers.
func cover(cands []candidate, w raw.Window) (chosen []candidate, gaps []raw.Window) {
	for d := w.From; !d.After(w.To); {
		var best *candidate
		for i := range cands {
			c := &cands[i]
			if c.days.From.After(d) || c.days.To.Before(d) {
				continue
			}
			if best == nil || c.days.To.After(best.days.To) || c.days.To.Equal(best.days.To) &&
				(c.r.CreatedOn.After(best.r.CreatedOn) || c.r.CreatedOn.Equal(best.r.CreatedOn) && c.r.ID < best.r.ID) {
				best = c
			}
		}
		if best != nil {
			chosen = append(chosen, *best)
			d = best.days.To.AddDate(0, 0, 1)
			continue
		}
		next := w.End()
		for _, c := range cands {
			if c.days.From.After(d) && c.days.From.Before(next) {
				next = c.days.From
			}
		}
		gaps = append(gaps, raw.Window{From: d, To: next.AddDate(0, 0, -1)})
		d = next
	}
	return chosen, gaps
}
