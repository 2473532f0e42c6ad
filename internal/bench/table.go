package bench

import (
	"encoding/json"
	"fmt"
	"io"
	"text/tabwriter"
)

// WriteTable prints the report as one table per size, then how time and
// peak RSS grew from the smallest size to the largest.
func (r *Report) WriteTable(w io.Writer) error {
	m := r.Machine
	fmt.Fprintf(w, "machine: %d CPUs (%s), %.0f GiB, %s, %s, DuckDB %s\n", m.CPUs, m.Model, m.MemoryGiB, m.OS, m.Go, m.DuckDB)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	for _, s := range r.Sizes {
		fmt.Fprintf(tw, "\n%d payments\tphase\trows\tMB\tseconds\trows/s\tMB/s\tratio\tratio auto\tCPU s\tpeak RSS MiB\t\n", s.Payments)
		for _, p := range s.Phases {
			fmt.Fprintf(tw, "\t%s\t%s\t%s\t%.2f\t%s\t%s\t%s\t%s\t%s\t%s\t\n", p.Name, count(p.Rows), megabytes(p.Bytes), p.Seconds,
				rate(float64(p.Rows), p.Seconds), rate(mb(p.Bytes), p.Seconds), opt(p.Ratio, "%.2f"), opt(p.RatioAuto, "%.2f"),
				opt(p.CPUSeconds, "%.1f"), opt(p.PeakRSSMiB, "%.0f"))
		}
	}
	if len(r.Sizes) > 1 {
		a, b := r.Sizes[0], r.Sizes[len(r.Sizes)-1]
		fmt.Fprintf(tw, "\ngrowth %d -> %d\tphase\ttime x\tpeak RSS x\t\n", a.Payments, b.Payments)
		for _, p := range a.Phases {
			q, ok := findPhase(b, p.Name)
			if !ok || p.Seconds == 0 {
				continue
			}
			fmt.Fprintf(tw, "\t%s\t%.1f\t%s\t\n", p.Name, q.Seconds/p.Seconds, ratioOpt(q.PeakRSSMiB, p.PeakRSSMiB))
		}
	}
	if h := r.History; h != nil && len(h.Runs) > 0 {
		fmt.Fprintf(tw, "\nhistory: %d payments/day, re-check %d days\tnight\twindow\tseconds\tCPU s\tpeak RSS MiB\tarchive files\tarchive MB\tarchive s\t\n",
			h.PaymentsPerDay, h.RecheckDays)
		for _, x := range h.Runs {
			fmt.Fprintf(tw, "\t%d\t%s..%s\t%.2f\t%.1f\t%s\t%d\t%.3f\t%.2f\t\n", x.Night, x.From, x.To, x.Seconds, x.CPUSeconds,
				opt(x.PeakRSSMiB, "%.0f"), x.ArchiveFiles, mb(x.ArchiveBytes), x.ArchiveSeconds)
		}
		fmt.Fprintf(tw, "\tlast / first\t\t%.2f\t\t\t\t%.2f\t%.2f\t\n", h.SecondsRatio, h.BytesRatio, h.ArchiveSecondsRatio)
		if p := h.Replay; p != nil {
			verdict := "differs"
			if p.Identical {
				verdict = "byte-identical"
			}
			fmt.Fprintf(tw, "\treplay of night %d\t%s\t%.2f\t%.1f\t%s\t%s\t\t\t\n", p.Night, p.RunID, p.Seconds, p.CPUSeconds,
				opt(p.PeakRSSMiB, "%.0f"), verdict)
		}
	}
	fmt.Fprintf(tw, "\ntotal\t%.0f s\t\n", r.Seconds)
	return tw.Flush()
}

// WriteJSON writes the report as indented JSON.
func (r *Report) WriteJSON(w io.Writer) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(r)
}

func findPhase(s Size, name string) (Phase, bool) {
	for _, p := range s.Phases {
		if p.Name == name {
			return p, true
		}
	}
	return Phase{}, false
}

func mb(b int64) float64 { return float64(b) / 1e6 }

func megabytes(b int64) string { return opt(mb(b), "%.0f") }

func count(n int64) string { return opt(float64(n), "%.0f") }

func rate(x, seconds float64) string {
	if x == 0 || seconds == 0 {
		return ""
	}
	return fmt.Sprintf("%.0f", x/seconds)
}

func opt(x float64, format string) string {
	if x == 0 {
		return ""
	}
	return fmt.Sprintf(format, x)
}

func ratioOpt(a, b float64) string {
	if a == 0 || b == 0 {
		return ""
	}
	return fmt.Sprintf("%.1f", a/b)
}
