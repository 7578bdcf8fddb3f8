package taskpage

import (
	"encoding/json"
	"fmt"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/fetch-dev/fetch/harness"
	"github.com/fetch-dev/fetch/internal/task"
)

// Bounds of what a page shows.
const (
	// maxItems is the most timeline entries a page shows; the newest are
	// kept, and the page says how many were left out.
	maxItems = 2000
	// maxText bounds one entry's text, in characters.
	maxText = 4000
	// maxDetail bounds one entry's detail (a command's output, a tool's
	// input), in characters.
	maxDetail = 2000
)

// Kinds of timeline entries that are not harness event kinds.
const (
	kindState = "state"
)

// item is one entry of a task's timeline, as the page shows it. Every
// text in it is redacted (see Server.item).
type item struct {
	Seq int64
	At  time.Time
	// Class names the entry's look (state, text, tool, command, question,
	// usage, result, error, changed, reattached).
	Class  string
	Title  string
	Text   string
	Detail string
	// Fail marks a failed command, a failed result or an error.
	Fail bool
}

// stateData is the data of a "state" entry of the event log.
type stateData struct {
	From   task.State `json:"from"`
	To     task.State `json:"to"`
	Reason string     `json:"reason"`
}

// toItem turns an entry of the event log into a timeline entry; ok is
// false for entries the page does not show (empty raw lines, sessions).
// clean redacts and makes text inert.
func toItem(le task.LogEntry, clean func(string) string) (item, bool) {
	it := item{Seq: le.Seq, At: le.At, Class: le.Kind}
	if le.Kind == kindState {
		var s stateData
		if json.Unmarshal(le.Data, &s) != nil {
			return item{}, false
		}
		it.Title = stateTitle(s)
		if s.Reason != string(s.To) {
			it.Text = clip(clean(s.Reason), maxText)
		}
		it.Fail = s.To == task.Failed
		return it, true
	}
	if le.Kind == task.KindReattached || le.Kind == task.KindUnreachable {
		var d struct {
			Engine string `json:"engine"`
			Cancel bool   `json:"cancel"`
		}
		_ = json.Unmarshal(le.Data, &d)
		engine := "the Docker engine"
		if d.Engine != "" {
			engine = "engine " + clip(clean(d.Engine), 80)
		}
		switch {
		case le.Kind == task.KindUnreachable && d.Cancel:
			it.Title = "Stop asked for; it waits until " + engine + " answers"
		case le.Kind == task.KindUnreachable:
			it.Title, it.Fail = "Lost the connection to "+engine, true
		case d.Engine != "":
			it.Title = "Followed again: " + engine + " answers"
		default:
			it.Title = "Followed again after a restart of Fetch"
		}
		return it, true
	}
	var ev harness.Event
	if json.Unmarshal(le.Data, &ev) != nil {
		return item{}, false
	}
	text := func(s string) string { return clip(clean(s), maxText) }
	detail := func(s string) string { return clip(clean(s), maxDetail) }
	switch ev.Kind {
	case harness.KindText:
		it.Title, it.Text = "Says", text(ev.Text)
	case harness.KindToolUse:
		it.Class, it.Title = "tool", "Tool "+clip(clean(ev.Tool), 80)
		if len(ev.Input) > 0 {
			it.Detail = detail(string(ev.Input))
		}
	case harness.KindCommand:
		it.Title, it.Text, it.Detail = "Command", text(ev.Command), detail(ev.Text)
		switch {
		case ev.Denied:
			it.Title, it.Fail = "Command refused", true
		case ev.ExitCode != nil:
			it.Title = fmt.Sprintf("Command (exit %d)", *ev.ExitCode)
			it.Fail = *ev.ExitCode != 0
		default:
			it.Title = "Command started"
		}
	case harness.KindFileChanged:
		it.Class, it.Title, it.Text = "changed", "File "+string(ev.Change), text(ev.Path)
		if ev.Git {
			it.Text += fmt.Sprintf(" +%d −%d", ev.Added, ev.Removed)
		}
	case harness.KindQuestion:
		it.Title, it.Text = "Question", text(ev.Text)
	case harness.KindUsage:
		if ev.Usage == nil {
			return item{}, false
		}
		u := ev.Usage
		it.Title = "Usage"
		it.Text = fmt.Sprintf("%d tokens in, %d out", u.InputTokens, u.OutputTokens)
		if u.CostUSD > 0 {
			it.Text += fmt.Sprintf(", $%.4f", u.CostUSD)
		}
	case harness.KindResult:
		it.Title, it.Text, it.Fail = "Result", text(ev.Text), !ev.Success
		if ev.Success {
			it.Title = "Result: success"
		} else {
			it.Title = "Result: failure"
		}
	case harness.KindError:
		it.Title, it.Text, it.Fail = "Error", text(ev.Text), true
	case harness.KindRaw:
		if strings.TrimSpace(ev.Text) == "" {
			return item{}, false
		}
		it.Title, it.Text = "Output", text(ev.Text)
	case harness.KindSession:
		return item{}, false
	case harness.KindRefused:
		it.Title, it.Text, it.Fail = "Connection refused by the kennel's way out", text(ev.Host+" ("+ev.Text+")"), true
	default:
		it.Title, it.Text = clip(clean(string(ev.Kind)), 40), text(ev.Text)
	}
	return it, true
}

// stateTitle says a transition in words: the questions, answers and ends
// of a task are its transitions.
func stateTitle(s stateData) string {
	switch {
	case s.To == task.WaitingInput:
		return "Waiting for an answer"
	case s.From == task.WaitingInput && s.To == task.Running:
		return "Answered; running again"
	case s.To == task.Running && s.From == "":
		return "Started"
	case s.To == task.Running:
		return "Running again (from " + string(s.From) + ")"
	case s.From == "":
		return "Created: " + string(s.To)
	}
	return "Now " + strings.ReplaceAll(string(s.To), "_", " ")
}

// clip cuts s to n characters, saying so.
func clip(s string, n int) string {
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	r := []rune(s)
	return string(r[:n]) + "… [cut]"
}

// duration is how long a task ran (so far, for one still going).
func duration(t task.Task, now time.Time) time.Duration {
	start := t.StartedAt
	if start.IsZero() {
		return 0
	}
	end := t.EndedAt
	if end.IsZero() {
		if t.State.Terminal() {
			end = t.UpdatedAt
		} else {
			end = now
		}
	}
	if end.Before(start) {
		return 0
	}
	return end.Sub(start).Round(time.Second)
}
