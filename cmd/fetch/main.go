// Command fetch is Fetch, a personal coding orchestrator: `fetch chat`
// talks to it in the terminal. All wiring happens in run.
package main

import (
	"context"
	"os"
	"os/signal"
	"syscall"
	// The owner's time zone (FETCH_TIMEZONE) must load on machines and
	// images without a zoneinfo database.
	_ "time/tzdata"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := run(ctx, os.Args[1:], os.Getenv, os.Stdin, os.Stdout, os.Stderr)
	stop()
	os.Exit(code)
}
