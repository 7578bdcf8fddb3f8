package redact_test

import (
	"testing"

	"github.com/fetch-dev/fetch/internal/redact"
)

// BenchmarkStringShort is the cost the store pays per text value written
// (a timestamp, a short reply): every write passes through the redactor.
func BenchmarkStringShort(b *testing.B) {
	r, err := redact.New("sk-or-v1-0123456789abcdef0123456789abcdef")
	if err != nil {
		b.Fatal(err)
	}
	for _, in := range []struct{ name, s string }{
		{"timestamp", "2026-11-24T21:30:00.123456789Z"},
		{"reply", "🟢 ALERT since 2026-11-24 20:48 UTC (just now)\nWorkspace: none selected\nTask: none running"},
	} {
		b.Run(in.name, func(b *testing.B) {
			for b.Loop() {
				r.String(in.s)
			}
		})
	}
}
