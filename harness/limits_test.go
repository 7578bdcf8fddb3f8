package harness

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// TestLimitsReported: Claude Code's rate_limit_event and Codex
// app-server's account/rateLimits/updated become limits events with the
// window's name, share used (Claude's utilization as a fraction or a
// percentage), status and reset time; a bare status names no figure and
// reports nothing.
func TestLimitsReported(t *testing.T) {
	reset := time.Unix(1771390800, 0).UTC()
	for _, tc := range []struct {
		name  string
		a     Adapter
		lines []string
		want  [][]Window
	}{
		{"claude fraction", ClaudeAdapter{}, []string{
			`{"type":"rate_limit_event","rate_limit_info":{"status":"allowed_warning","resetsAt":1771390800,"utilization":0.93,"rateLimitType":"five_hour","overageStatus":"rejected","isUsingOverage":false},"uuid":"u1","session_id":"s1"}`,
		}, [][]Window{{{Name: "five_hour", UsedPercent: 93, Status: "allowed_warning", ResetsAt: reset}}}},
		{"claude percent, milliseconds", ClaudeAdapter{}, []string{
			`{"type":"rate_limit_event","rate_limit_info":{"status":"allowed","resetsAt":1771390800000,"utilization":82,"rateLimitType":"seven_day"},"session_id":"s1"}`,
		}, [][]Window{{{Name: "seven_day", UsedPercent: 82, Status: "allowed", ResetsAt: reset}}}},
		{"claude rejected", ClaudeAdapter{}, []string{
			`{"type":"rate_limit_event","rate_limit_info":{"status":"rejected","resetsAt":1771390800,"rateLimitType":"five_hour"},"session_id":"s1"}`,
		}, [][]Window{{{Name: "five_hour", UsedPercent: 100, Status: "rejected", ResetsAt: reset}}}},
		{"claude bare status", ClaudeAdapter{}, []string{
			`{"type":"rate_limit_event","rate_limit_info":{"status":"allowed"},"session_id":"s1"}`,
			`{"type":"rate_limit_event","rate_limit_info":{"status":"allowed","utilization":-3,"rateLimitType":"five_hour"},"session_id":"s1"}`,
		}, nil},
		{"codex", CodexAdapter{}, []string{
			`{"method":"account/rateLimits/updated","params":{"rateLimits":{"limitId":"codex","primary":{"usedPercent":91,"windowDurationMins":300,"resetsAt":1771390800},"secondary":{"usedPercent":12,"windowDurationMins":10080,"resetsAt":null},"credits":null,"planType":"plus"}}}`,
		}, [][]Window{{{Name: "5h", UsedPercent: 91, ResetsAt: reset}, {Name: "weekly", UsedPercent: 12}}}},
		{"codex out of range", CodexAdapter{}, []string{
			`{"method":"account/rateLimits/updated","params":{"rateLimits":{"primary":{"usedPercent":140},"secondary":null}}}`,
		}, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var got [][]Window
			s := newStream(tc.a.NewParser(Task{}), func(ev Event) {
				if ev.Kind == KindLimits {
					got = append(got, ev.Limits)
				}
			})
			for _, l := range tc.lines {
				s.line([]byte(l))
			}
			s.flush()
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("limits events (-want +got):\n%s", diff)
			}
		})
	}
	w := Window{Name: "five_hour", UsedPercent: 93, ResetsAt: reset}
	if !w.Near() || w.String() != "five_hour 93% used, resets Feb 18 05:00 UTC" {
		t.Errorf("%+v: near %v, %q", w, w.Near(), w.String())
	}
	if (Window{Name: "weekly", UsedPercent: 12}).Near() {
		t.Error("a window 12% used is near its limit")
	}
}
