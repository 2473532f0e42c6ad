package output

import (
	"context"
	"database/sql"
	_ "embed"
	"fmt"
	"html/template"
	"os"
	"slices"
	"time"

	"recon/extract/raw"
)

//go:embed summary.html.tmpl
var summaryTemplate string

var summaryPage = template.Must(template.New("summary").Funcs(template.FuncMap{
	"sevClass": func(sev string) string { return "sev-" + sev },
}).Parse(summaryTemplate))

// trendRuns is how many runs the trend chart shows, this one included.
const trendRuns = 30

// TrendPoint is one run in the trend chart.
type TrendPoint struct {
	RunID    string
	Day      string // as-of day
	Open     int64
	New      int64 // breaks first seen by the run
	Resolved int64 // breaks the run resolved (and no later run reopened)
}

// openBreak is a row of the page's list of open breaks.
type openBreak struct {
	Severity, Rule, EventDate, Payment, Account, Currency, Difference, Detail, Status string
	Workflow, Reason, By                                                              string
	Days                                                                              int
}

// page is what summary.html shows.
type page struct {
	Summary
	Window     string
	AsOf       string
	Started    string
	Severities []sevRow
	Trend      chart
	Ageing     chart
	Oldest     []openBreak
	MoreOpen   int64
}

type sevRow struct {
	Severity string
	Counts
}

// chart is an SVG chart laid out in Go: the template only draws it.
type chart struct {
	Width, Height int
	Bars          []bar
	Lines         []line
	Ticks         []tick
}

type bar struct {
	X, Y, W, H float64
	Label      string
	Value      int64
	Title      string
	LabelX     float64
	LabelY     float64
	ValueX     float64
}

type line struct {
	Class  string
	Points string
	Dots   []dot
}

type dot struct {
	X, Y  float64
	Title string
}

type tick struct {
	Y     float64
	Label string
}

func writeHTML(ctx context.Context, conn *sql.Conn, s Summary, path string) error {
	p := page{Summary: s, Window: s.Run.Window.String(), AsOf: s.Run.AsOf.UTC().Format(time.RFC3339),
		Started: s.Run.StartedAt.UTC().Format(time.RFC3339)}
	for _, sev := range []string{"P1", "P2", "P3", "P4"} {
		p.Severities = append(p.Severities, sevRow{sev, s.BySeverity[sev]})
	}
	trend, err := readTrend(ctx, conn, s)
	if err != nil {
		return fmt.Errorf("trend: %w", err)
	}
	p.Trend = trendChart(trend)
	p.Ageing = ageingChart(s.Ageing)
	err = query(ctx, conn, `SELECT severity, rule_id, strftime(event_date, '%Y-%m-%d'), coalesce(payment_id, ''),
			coalesce(account, ''), coalesce(currency, ''), CAST(difference AS VARCHAR), coalesce(detail, ''), status,
			workflow_status, coalesce(last_reason, ''), coalesce(last_by, ''), date_diff('day', event_date, CAST($as_of AS DATE))
		FROM run_breaks WHERE status <> 'resolved' AND `+openWorkflow+`
		ORDER BY workflow_status <> 'open', severity, event_date, rule_id, break_id LIMIT 25`,
		[]any{sql.Named("as_of", s.Run.AsOf.UTC().Format(raw.DateLayout))}, func(rows *sql.Rows) error {
			var b openBreak
			var diff sql.NullString
			if err := rows.Scan(&b.Severity, &b.Rule, &b.EventDate, &b.Payment, &b.Account, &b.Currency, &diff,
				&b.Detail, &b.Status, &b.Workflow, &b.Reason, &b.By, &b.Days); err != nil {
				return err
			}
			b.Difference = decimalText(diff)
			p.Oldest = append(p.Oldest, b)
			return nil
		})
	if err != nil {
		return err
	}
	p.MoreOpen = s.Breaks.Open - int64(len(p.Oldest))
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	defer f.Close()
	if err := summaryPage.Execute(f, p); err != nil {
		return err
	}
	return f.Close()
}

// readTrend returns the last runs of the ledger, oldest first, and this run.
func readTrend(ctx context.Context, conn *sql.Conn, s Summary) ([]TrendPoint, error) {
	var out []TrendPoint
	err := query(ctx, conn, `SELECT run_id, strftime(as_of, '%Y-%m-%d'), coalesce(breaks_open, 0),
			(SELECT count(*) FROM breaks b WHERE b.first_seen_run = r.run_id),
			(SELECT count(*) FROM breaks b WHERE b.resolved_run = r.run_id)
		FROM runs r WHERE run_id <> $run_id ORDER BY started_at DESC, run_id DESC LIMIT $n`,
		[]any{sql.Named("run_id", s.Run.ID), sql.Named("n", trendRuns-1)}, func(rows *sql.Rows) error {
			var t TrendPoint
			if err := rows.Scan(&t.RunID, &t.Day, &t.Open, &t.New, &t.Resolved); err != nil {
				return err
			}
			out = append(out, t)
			return nil
		})
	if err != nil {
		return nil, err
	}
	slices.Reverse(out)
	cur := TrendPoint{RunID: s.Run.ID, Day: s.Run.AsOf.UTC().Format(raw.DateLayout), Open: s.Breaks.Open}
	if err := conn.QueryRowContext(ctx, `SELECT count(*) FILTER (WHERE first_seen_run = $run_id),
			count(*) FILTER (WHERE resolved_run = $run_id) FROM breaks`,
		sql.Named("run_id", s.Run.ID)).Scan(&cur.New, &cur.Resolved); err != nil {
		return nil, err
	}
	return append(out, cur), nil
}

// Chart geometry, in SVG user units.
const (
	chartW, chartH     = 760, 240
	padL, padR         = 44, 12
	padT, padB         = 14, 40
	ageW, ageRow, ageL = 240, 28, 84
)

func trendChart(points []TrendPoint) chart {
	c := chart{Width: chartW, Height: chartH}
	var top int64 = 1
	for _, p := range points {
		top = max(top, p.Open, p.New, p.Resolved)
	}
	top = niceCeil(top)
	plotW, plotH := float64(chartW-padL-padR), float64(chartH-padT-padB)
	y := func(v int64) float64 { return padT + plotH - plotH*float64(v)/float64(top) }
	for i := 0; i <= 4; i++ {
		v := top * int64(i) / 4
		c.Ticks = append(c.Ticks, tick{Y: y(v), Label: fmt.Sprint(v)})
	}
	step := plotW / float64(max(len(points), 12))
	every := max(1, len(points)/10)
	newLine, resLine := line{Class: "new"}, line{Class: "resolved"}
	for i, p := range points {
		x := padL + step*float64(i)
		b := bar{X: x + step*0.15, W: step * 0.7, Y: y(p.Open), H: padT + plotH - y(p.Open), Value: p.Open,
			Title: fmt.Sprintf("%s (%s): %d open, %d new, %d resolved", p.RunID, p.Day, p.Open, p.New, p.Resolved)}
		if i%every == 0 && (i == 0 || p.Day != points[i-1].Day) { // one label a day
			b.Label, b.LabelX, b.LabelY = p.Day[5:], x+step/2, chartH-padB+16
		}
		c.Bars = append(c.Bars, b)
		cx := x + step/2
		newLine.Points += fmt.Sprintf("%.1f,%.1f ", cx, y(p.New))
		newLine.Dots = append(newLine.Dots, dot{cx, y(p.New), fmt.Sprintf("%s: %d new", p.RunID, p.New)})
		resLine.Points += fmt.Sprintf("%.1f,%.1f ", cx, y(p.Resolved))
		resLine.Dots = append(resLine.Dots, dot{cx, y(p.Resolved), fmt.Sprintf("%s: %d resolved", p.RunID, p.Resolved)})
	}
	c.Lines = []line{newLine, resLine}
	return c
}

func ageingChart(buckets []Bucket) chart {
	c := chart{Width: ageW + ageL + 40, Height: len(buckets)*ageRow + 10}
	var top int64 = 1
	for _, b := range buckets {
		top = max(top, b.Open)
	}
	for i, b := range buckets {
		w := float64(ageW) * float64(b.Open) / float64(top)
		y := float64(i*ageRow + 5)
		c.Bars = append(c.Bars, bar{X: ageL, Y: y, W: w, H: ageRow - 8, Label: b.Label, Value: b.Open,
			Title: fmt.Sprintf("%s: %d open", b.Label, b.Open), LabelX: ageL - 8, LabelY: y + ageRow/2,
			ValueX: ageL + w + 6})
	}
	return c
}

// niceCeil rounds v up to 1, 2 or 5 times a power of ten, for axis ticks.
func niceCeil(v int64) int64 {
	for p := int64(1); ; p *= 10 {
		for _, m := range []int64{1, 2, 5} {
			if m*p*4 >= v {
				return m * p * 4
			}
		}
	}
}
