package conversation_test

import (
	"context"
	"path/filepath"
	"slices"
	"sort"
	"testing"
	"time"

	"github.com/fetch-dev/fetch/internal/chat"
	"github.com/fetch-dev/fetch/internal/conversation"
	"github.com/fetch-dev/fetch/internal/redact"
	"github.com/fetch-dev/fetch/internal/store"
)

// stamp is a Sender that notes when each reply went out (the moment the
// runtime hands it to the channel) and then lets the benchmark go on.
type stamp chan time.Time

func (s stamp) Send(_ context.Context, _ string, _ chat.Reply) error {
	s <- time.Now()
	return nil
}

// Idempotent: like Discord's, the channel Fetch serves (it recognises a
// reply it sent before), so the outbox records no send attempt first.
func (stamp) Idempotent() bool { return true }

// BenchmarkInstinctPath measures one message in → reply out through the
// whole runtime with SQLite persistence (inbound stored, handled, reply
// queued and marked sent): from the channel's Receive call to the reply
// reaching the channel's Send. It reports the latency percentiles.
//
// In the idle variants each message arrives at an idle conversation (the
// previous reply is marked sent before it, outside the measured time). In
// the back-to-back variants the next message arrives as soon as the
// previous reply reached the channel, while the runtime still marks that
// reply sent: the two writes meet, and the store's single writer must
// queue them without SQLite's busy wait (≥ 1 ms).
func BenchmarkInstinctPath(b *testing.B) {
	for _, text := range []string{"/status", "/stop"} {
		for _, backToBack := range []bool{false, true} {
			name := text[1:]
			if backToBack {
				name += "-back-to-back"
			}
			b.Run(name, func(b *testing.B) { benchInstinct(b, text, backToBack) })
		}
	}
}

func benchInstinct(b *testing.B, text string, backToBack bool) {
	replies := make(stamp, 1)
	ctx := context.Background()
	// As Fetch opens it: every text written passes through the redactor.
	red, err := redact.New("sk-or-v1-0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef")
	if err != nil {
		b.Fatal(err)
	}
	db, err := store.Open(ctx, filepath.Join(b.TempDir(), "fetch.db"), store.WithScrub(red.String))
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { db.Close() })
	e := newEnvOn(b, db, conversation.Config{
		Senders: map[string]chat.Sender{"test": replies},
	})
	msg := chat.Message{Channel: "test", ConversationID: conv, UserID: owner, Text: text}
	// Warm up: the conversation goroutine and its mode exist.
	if err := e.mgr.Receive(ctx, msg); err != nil {
		b.Fatal(err)
	}
	<-replies
	if err := e.mgr.Idle(ctx, conv); err != nil {
		b.Fatal(err)
	}
	lat := make([]time.Duration, 0, b.N)
	b.ResetTimer()
	for b.Loop() {
		t0 := time.Now()
		if err := e.mgr.Receive(ctx, msg); err != nil {
			b.Fatal(err)
		}
		lat = append(lat, (<-replies).Sub(t0))
		if backToBack {
			continue
		}
		b.StopTimer()
		if err := e.mgr.Idle(ctx, conv); err != nil {
			b.Fatal(err)
		}
		b.StartTimer()
	}
	b.StopTimer()
	if err := e.mgr.Idle(ctx, conv); err != nil {
		b.Fatal(err)
	}
	slices.Sort(lat)
	pct := func(p float64) float64 {
		return float64(lat[int(float64(len(lat)-1)*p)].Microseconds())
	}
	b.ReportMetric(pct(0.50), "p50-µs")
	b.ReportMetric(pct(0.99), "p99-µs")
	// The share of messages slower than SQLite's shortest busy wait: on a
	// loaded machine the p99 is the scheduler's, this tells whether
	// writes still meet in SQLite.
	slow := len(lat) - sort.Search(len(lat), func(i int) bool { return lat[i] >= time.Millisecond })
	b.ReportMetric(100*float64(slow)/float64(len(lat)), "≥1ms-%")
}
