package conversation_test

import (
	"context"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/fetch-dev/fetch/internal/chat"
	"github.com/fetch-dev/fetch/internal/conversation"
)

// signal is a Sender that hands each reply to the benchmark.
type signal chan chat.Reply

func (s signal) Send(_ context.Context, _ string, r chat.Reply) error {
	s <- r
	return nil
}

// BenchmarkInstinctPath measures one message in → reply out through the
// whole runtime with SQLite persistence (inbound stored, handled, reply
// queued and marked sent), and reports the latency percentiles.
func BenchmarkInstinctPath(b *testing.B) {
	for _, text := range []string{"/status", "/stop"} {
		b.Run(text[1:], func(b *testing.B) {
			replies := make(signal, 1)
			e := start(b, filepath.Join(b.TempDir(), "fetch.db"), conversation.Config{
				Senders: map[string]chat.Sender{"test": replies},
			})
			ctx := context.Background()
			msg := chat.Message{Channel: "test", ConversationID: conv, UserID: owner, Text: text}
			// Warm up: the conversation goroutine and its mode exist.
			if err := e.mgr.Receive(ctx, msg); err != nil {
				b.Fatal(err)
			}
			<-replies
			lat := make([]time.Duration, 0, b.N)
			b.ResetTimer()
			for b.Loop() {
				t0 := time.Now()
				if err := e.mgr.Receive(ctx, msg); err != nil {
					b.Fatal(err)
				}
				<-replies
				lat = append(lat, time.Since(t0))
			}
			b.StopTimer()
			slices.Sort(lat)
			pct := func(p float64) float64 {
				return float64(lat[int(float64(len(lat)-1)*p)].Microseconds())
			}
			b.ReportMetric(pct(0.50), "p50-µs")
			b.ReportMetric(pct(0.99), "p99-µs")
		})
	}
}
