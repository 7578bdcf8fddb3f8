package main

import (
	"context"
	"os"
	"os/signal"
	"syscall"
	"testing"
)

// TestInterruptedKnowsTheSignal: main's signal context says a SIGINT ended
// it (waitDetachable's first Ctrl-C), and a SIGTERM or a plain cancel
// did not.
func TestInterruptedKnowsTheSignal(t *testing.T) {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := syscall.Kill(os.Getpid(), syscall.SIGINT); err != nil {
		t.Fatal(err)
	}
	<-ctx.Done()
	if !interrupted(ctx) {
		t.Errorf("a SIGINT ended the context (cause %v), but interrupted says no", context.Cause(ctx))
	}

	ctx, stop = signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := syscall.Kill(os.Getpid(), syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	<-ctx.Done()
	if interrupted(ctx) {
		t.Errorf("a SIGTERM ended the context (cause %v), but interrupted says it was a SIGINT", context.Cause(ctx))
	}

	cctx, cancel := context.WithCancel(context.Background())
	cancel()
	if interrupted(cctx) {
		t.Error("a cancelled context is taken for a SIGINT")
	}
}
