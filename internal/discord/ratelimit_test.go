package discord

import (
	"testing"
	"time"
)

func TestLimiterSlidingWindow(t *testing.T) {
	l := newLimiter(3, time.Minute)
	t0 := time.Date(2026, 1, 1, 12, 0, 0, 0, time.UTC)
	for i := range 3 {
		if ok, _ := l.allow("u", t0.Add(time.Duration(i)*time.Second)); !ok {
			t.Fatalf("message %d refused", i)
		}
	}
	if ok, warn := l.allow("u", t0.Add(10*time.Second)); ok || !warn {
		t.Fatalf("4th: ok %v warn %v; want refused with a warning", ok, warn)
	}
	if ok, warn := l.allow("u", t0.Add(20*time.Second)); ok || warn {
		t.Fatalf("5th: ok %v warn %v; want refused silently", ok, warn)
	}
	if ok, _ := l.allow("other", t0.Add(20*time.Second)); !ok {
		t.Fatal("another user is limited too")
	}
	// The window slides: a minute after the first message, one is free.
	if ok, _ := l.allow("u", t0.Add(time.Minute)); !ok {
		t.Fatal("not allowed after the window slid")
	}
	if ok, warn := l.allow("u", t0.Add(time.Minute)); ok || !warn {
		t.Fatalf("new burst: ok %v warn %v; want a new warning", ok, warn)
	}
}
