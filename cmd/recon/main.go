// Command recon reconciles a payment network participant's books: it
// extracts the network's reports and statements, loads them into DuckDB,
// runs the SQL rules and archives the break reports.
package main

import (
	"context"
	"os"
	"os/signal"
	"syscall"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := Run(ctx, os.Args[1:], os.Stdin, os.Stdout, os.Stderr)
	stop()
	os.Exit(code)
}
