package redact

import (
	"strings"
	"testing"
)

// BenchmarkDisguisedSpans is the search for disguised secrets alone, on a
// megabyte of output that holds line breaks, '%' escapes and '+' (three
// skeletons and the combined one), and on a short reply (the text alone).
func BenchmarkDisguisedSpans(b *testing.B) {
	d := newDisguised([]string{"sk-or-v1-0123456789abcdef0123456789abcdef", "MTIzNDU2Nzg5MDEyMzQ1Njc4.GhIjKl.abcdefghijklmnopqrstuvwxyz0123", "ghp_Zq8Xr2Lm5Nv7Tb1Kc4Wd9Ys3Hf6Jp0Ae8Ug2"})
	var sb strings.Builder
	for sb.Len() < 1<<20 {
		sb.WriteString("ok  \tgithub.com/fetch-dev/fetch/internal/agent\t23.975s 100% done, see https://example.com/a+b?x=%41\n")
	}
	for _, in := range []struct{ name, s string }{
		{"1MB", sb.String()},
		{"reply", "🟢 ALERT since 2026-11-24 20:48 UTC (just now) Workspace: none selected Task: none running"},
	} {
		b.Run(in.name, func(b *testing.B) {
			b.SetBytes(int64(len(in.s)))
			b.ReportAllocs()
			for b.Loop() {
				d.spans(in.s)
			}
		})
	}
}
