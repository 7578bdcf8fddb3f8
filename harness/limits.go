package harness

import (
	"encoding/json"
	"fmt"
	"math"
	"time"
)

// KindLimits reports the usage of the subscription windows the CLI's
// account is held to (Event.Limits): Claude Code's rate_limit_event,
// Codex app-server's account/rateLimits/updated. Each report replaces
// what the CLI said of the same window before.
const KindLimits Kind = "limits"

// Window is one usage window of a CLI's subscription, as last reported.
type Window struct {
	// Name is the window as the CLI names it: Claude Code's rateLimitType
	// (five_hour, seven_day, seven_day_opus, …); for Codex, by its length
	// (5h, weekly, or 300m when it is neither).
	Name string `json:"name"`
	// UsedPercent is how much of it is used, 0 to 100.
	UsedPercent float64 `json:"used_percent"`
	// Status is the CLI's word for it, when it gives one (Claude Code:
	// allowed, allowed_warning, rejected).
	Status string `json:"status,omitempty"`
	// ResetsAt is when it starts again, when known.
	ResetsAt time.Time `json:"resets_at,omitzero"`
}

// NearPercent is the share of a window from which a task about to start
// is said to be near its CLI's limit.
const NearPercent = 90

// Near tells whether w is used up to NearPercent or more, or refused.
func (w Window) Near() bool { return w.UsedPercent >= NearPercent || w.Status == "rejected" }

// String is w as the owner reads it: "five_hour 93% used, resets 14:00 UTC".
func (w Window) String() string {
	s := fmt.Sprintf("%s %.0f%% used", w.Name, w.UsedPercent)
	if w.Status == "rejected" {
		s = w.Name + " limit reached"
	}
	if !w.ResetsAt.IsZero() {
		s += ", resets " + w.ResetsAt.UTC().Format("Jan 2 15:04 UTC")
	}
	return s
}

// epochTime reads a reset time given in Unix seconds or milliseconds
// (the CLIs' tools disagree on which); zero when absent or not a time.
func epochTime(v float64) time.Time {
	switch {
	case v <= 0 || math.IsNaN(v) || math.IsInf(v, 0):
		return time.Time{}
	case v > 1e12: // milliseconds
		return time.UnixMilli(int64(v)).UTC()
	}
	return time.Unix(int64(v), 0).UTC()
}

// claudeRateLimit is Claude Code's rate_limit_event (its SDK's
// RateLimitEvent): the status of one window of the subscription and, when
// known, its utilization, a fraction (0.85) in the SDK's documentation but
// a percentage (82) in some captures: a value above 1 is read as a
// percentage.
type claudeRateLimit struct {
	Info *struct {
		Status        string   `json:"status"`
		ResetsAt      float64  `json:"resetsAt"`
		RateLimitType string   `json:"rateLimitType"`
		Utilization   *float64 `json:"utilization"`
	} `json:"rate_limit_info"`
}

// claudeLimits reads a rate_limit_event line into a window; ok is false
// when it names no window or carries no figure (a bare status).
func claudeLimits(line []byte) (Window, bool) {
	var l claudeRateLimit
	if json.Unmarshal(line, &l) != nil || l.Info == nil || l.Info.RateLimitType == "" {
		return Window{}, false
	}
	w := Window{Name: l.Info.RateLimitType, Status: l.Info.Status, ResetsAt: epochTime(l.Info.ResetsAt)}
	switch u := l.Info.Utilization; {
	case u != nil && *u >= 0 && *u <= 1:
		w.UsedPercent = *u * 100
	case u != nil && *u > 1 && *u <= 100:
		w.UsedPercent = *u
	case l.Info.Status == "rejected":
		w.UsedPercent = 100
	default:
		return Window{}, false
	}
	return w, true
}

// codexRateLimits is the params of Codex app-server's
// account/rateLimits/updated notification (its RateLimitSnapshot).
type codexRateLimits struct {
	RateLimits *struct {
		Primary   *codexWindow `json:"primary"`
		Secondary *codexWindow `json:"secondary"`
	} `json:"rateLimits"`
}

type codexWindow struct {
	UsedPercent        float64 `json:"usedPercent"`
	WindowDurationMins *int64  `json:"windowDurationMins"`
	ResetsAt           float64 `json:"resetsAt"`
}

// codexLimits reads the windows of an account/rateLimits/updated
// notification's params.
func codexLimits(params json.RawMessage) []Window {
	var p codexRateLimits
	if json.Unmarshal(params, &p) != nil || p.RateLimits == nil {
		return nil
	}
	var out []Window
	for i, cw := range []*codexWindow{p.RateLimits.Primary, p.RateLimits.Secondary} {
		if cw == nil || cw.UsedPercent < 0 || cw.UsedPercent > 100 || math.IsNaN(cw.UsedPercent) {
			continue
		}
		name := []string{"primary", "secondary"}[i]
		if d := cw.WindowDurationMins; d != nil && *d > 0 {
			switch *d {
			case 300:
				name = "5h"
			case 7 * 24 * 60:
				name = "weekly"
			default:
				name = fmt.Sprintf("%dm", *d)
			}
		}
		out = append(out, Window{Name: name, UsedPercent: cw.UsedPercent, ResetsAt: epochTime(cw.ResetsAt)})
	}
	return out
}
