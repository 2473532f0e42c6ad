package main

import (
	"bufio"
	"fmt"
	"os"
	"time"

	"recon/extract/raw"
	"recon/extract/sandbox"
)

func main() {
	day := time.Date(2026, 11, 24, 0, 0, 0, 0, time.UTC)
	sb, err := sandbox.New(sandbox.Config{Seed: 1, Start: day, Days: 1, PaymentsPerDay: 1000000, PendingPolls: -1})
	if err != nil {
		panic(err)
	}
	os.MkdirAll(os.Args[1]+"/reports/RECON", 0o755)
	f, _ := os.Create(os.Args[1] + "/reports/RECON/bench.csv")
	bw := bufio.NewWriterSize(f, 1<<20)
	n, err := sb.WriteReport(bw, raw.ReportRecon, raw.FormatCSV, raw.Window{From: day, To: day})
	bw.Flush()
	f.Close()
	fmt.Println(n, err)
}
