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
	os.Exit(runMain())
}

// runMain runs the command line with a context that SIGTERM or Ctrl-C
// cancels: the run in progress stops cleanly. A second signal ends the
// process at once (the published database is never half written).
func runMain() int {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	go func() {
		<-ctx.Done()
		stop()
	}()
	return Run(ctx, os.Args[1:], os.Stdin, os.Stdout, os.Stderr)
}
