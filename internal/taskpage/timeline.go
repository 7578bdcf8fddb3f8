package taskpage

import (
	"encoding/json"
	"fmt"
	"slices"
	"sort"
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
	// maxOpen bounds the commands that started and have not ended yet
	// which a timeline remembers, to merge their end into their start.
	maxOpen = 256
)

// Kinds of timeline entries that are not harness event kinds.
const (
	kindState = "state"
)

// item is one entry of a task's timeline, as the page shows it. Every
// text in it is redacted (see timeline.clean).
type item struct {
	Seq int64
	At  time.Time
	// Stamp is At as the page shows it; ISO for <time datetime>.
	Stamp, ISO string
	// Class names the entry's look (state, text, tool, command, question,
	// usage, result, error, changed, reattached).
	Class  string
	Title  string
	Text   string
	Detail string
	// Tool is the CLI's id of a command: the entry of its end replaces
	// the entry of its start (the live page does the same).
	Tool string
	// Fail marks a failed command, a failed result or an error; its
	// detail is open.
	Fail bool
	// ends: the entry is a command's end, which takes its start's place.
	ends bool
}

// stateData is the data of a "state" entry of the event log.
type stateData struct {
	From   task.State `json:"from"`
	To     task.State `json:"to"`
	Reason string     `json:"reason"`
}

// timeline turns a task's event log into the entries the page shows: it
// drops what says nothing (spend reports, which it adds up instead),
// merges a command's end into its start, shows paths relative to the
// worktree and does not repeat the sentences the page shows above it.
type timeline struct {
	// clean redacts and makes text inert; worktree is the task's
	// worktree on the host, never shown.
	clean    func(string) string
	worktree string
	clock    clock
	// shown are texts the page shows above the timeline (the error, the
	// summary): a transition or result saying the same says only its
	// title.
	shown []string

	items   []item
	omitted int
	// open maps a started command's tool id to its entry in items.
	open  map[string]openCommand
	spend spend
}

type openCommand struct {
	index   int
	command string
	at      time.Time
}

func newTimeline(clean func(string) string, worktree string, c clock, shown ...string) *timeline {
	tl := &timeline{worktree: strings.TrimRight(worktree, "/"), clock: c, open: map[string]openCommand{}}
	for _, s := range shown {
		if s = strings.TrimSpace(s); s != "" {
			tl.shown = append(tl.shown, s)
		}
	}
	tl.clean = func(s string) string { return tl.rel(clean(s)) }
	return tl
}

// rel shows paths under the worktree relative to it.
func (tl *timeline) rel(s string) string {
	if tl.worktree == "" || tl.worktree == "/" {
		return s
	}
	s = strings.ReplaceAll(s, tl.worktree+"/", "")
	return strings.ReplaceAll(s, tl.worktree, ".")
}

// add takes in one entry of the log and returns the entry the page shows
// for it; ok is false when it shows none.
func (tl *timeline) add(le task.LogEntry) (item, bool) {
	it, ok := tl.item(le)
	if !ok {
		return item{}, false
	}
	it.Stamp, it.ISO = tl.clock.stamp(it.At), iso(it.At)
	// A transition or the result that says what the page says above it
	// says only its title; what the CLI said stays where it said it.
	for _, s := range tl.shown {
		if it.Class != kindState && it.Class != string(harness.KindResult) {
			break
		}
		if strings.TrimSpace(it.Text) == s || strings.TrimSpace(strings.TrimSuffix(it.Text, "… [cut]")) == clip(s, maxText) {
			it.Text = ""
		}
	}
	if it.Tool != "" {
		if o, started := tl.open[it.Tool]; started && it.ends {
			delete(tl.open, it.Tool)
			if o.index < len(tl.items) && tl.items[o.index].Tool == it.Tool {
				tl.items[o.index] = it
			}
			return it, true
		}
	}
	tl.items = append(tl.items, it)
	if len(tl.items) > 2*maxItems {
		tl.trim()
	}
	return it, true
}

// trim keeps the newest maxItems entries.
func (tl *timeline) trim() {
	n := len(tl.items) - maxItems
	if n <= 0 {
		return
	}
	tl.items = slices.Delete(tl.items, 0, n)
	tl.omitted += n
	for id, o := range tl.open {
		if o.index -= n; o.index < 0 {
			delete(tl.open, id)
		} else {
			tl.open[id] = o
		}
	}
}

// entries are the entries to show, newest maxItems, and how many were
// left out.
func (tl *timeline) entries() ([]item, int) {
	tl.trim()
	return tl.items, tl.omitted
}

// item turns an entry of the event log into a timeline entry.
func (tl *timeline) item(le task.LogEntry) (item, bool) {
	clean := tl.clean
	it := item{Seq: le.Seq, At: le.At, Class: le.Kind}
	text := func(s string) string { return clip(clean(s), maxText) }
	detail := func(s string) string { return clip(clean(s), maxDetail) }
	if le.Kind == kindState {
		var s stateData
		if json.Unmarshal(le.Data, &s) != nil {
			return item{}, false
		}
		// A run's cost enters the task when the run ends, which is a
		// transition: what came before is counted there.
		tl.spend.newRun()
		it.Title = stateTitle(s)
		if r := strings.TrimSpace(s.Reason); r != string(s.To) && r != "created" && r != "" {
			it.Text = text(s.Reason)
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
	if le.Kind == task.KindRelayed {
		var d task.RelayedEntry
		if json.Unmarshal(le.Data, &d) != nil {
			return item{}, false
		}
		r := d.Request
		if d.Update == task.Requested {
			it.Title, it.Text = fmt.Sprintf("The CLI asked, in the owner's chat (request %d)", r.ID), text(r.Summary)
			return it, true
		}
		it.Title, it.Text = fmt.Sprintf("Request %d %s", r.ID, r.State), text(r.Summary)
		if r.By != "" {
			it.Text = text(r.Summary + " — by " + r.By)
		}
		return it, true
	}
	var ev harness.Event
	if json.Unmarshal(le.Data, &ev) != nil {
		return item{}, false
	}
	tl.spend.add(ev)
	switch ev.Kind {
	case harness.KindText:
		it.Title, it.Text = "Says", text(ev.Text)
	case harness.KindToolUse:
		it.Class = "tool"
		it.Title, it.Detail = tl.tool(ev)
	case harness.KindCommand:
		tl.command(&it, ev, text, detail)
	case harness.KindFileChanged:
		it.Class = "changed"
		verb := map[harness.ChangeKind]string{harness.ChangeAdded: "Added", harness.ChangeModified: "Edited", harness.ChangeDeleted: "Deleted"}[ev.Change]
		if verb == "" {
			verb = "Changed"
		}
		it.Title = verb + " " + clip(clean(tl.relPath(ev.Path)), 300)
		if ev.Git {
			it.Title += fmt.Sprintf(" (+%d −%d)", ev.Added, ev.Removed)
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
		switch {
		case u.CostUSD > 0 && u.PricedAs != "":
			it.Text += fmt.Sprintf(", $%.4f %s", u.CostUSD, harness.EstimatedAs(u.PricedAs))
		case u.CostUSD > 0 && u.CostEstimated:
			it.Text += fmt.Sprintf(", $%.4f (estimated by Fetch)", u.CostUSD)
		case u.CostUSD > 0:
			it.Text += fmt.Sprintf(", $%.4f", u.CostUSD)
		case u.CostUnknown:
			it.Text += ", of a model whose price Fetch does not know"
		}
	case harness.KindSpend:
		// A running total, shown in the task's cost.
		return item{}, false
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

// command fills a command's entry: "Command (exit N, 1.2s): the command"
// once it ended, its start merged in.
func (tl *timeline) command(it *item, ev harness.Event, text, detail func(string) string) {
	it.Class = string(harness.KindCommand)
	cmd := ev.Command
	start, end := time.Time{}, it.At
	if ev.ToolID != "" {
		it.Tool = clip(ev.ToolID, 200)
		if o, ok := tl.open[it.Tool]; ok && (ev.ExitCode != nil || ev.Denied) {
			if cmd == "" {
				cmd = o.command
			}
			start, it.At, it.ends = o.at, o.at, true
		}
	}
	it.Text, it.Detail = text(cmd), detail(ev.Text)
	switch {
	case ev.Denied:
		it.Title, it.Fail = "Command refused", true
	case ev.ExitCode != nil:
		took := ""
		if !start.IsZero() {
			took = ", " + showDuration(end.Sub(start), true)
		}
		it.Title = fmt.Sprintf("Command (exit %d%s)", *ev.ExitCode, took)
		it.Fail = *ev.ExitCode != 0
	default:
		it.Title = "Command running"
		if it.Tool != "" && len(tl.open) < maxOpen {
			tl.open[it.Tool] = openCommand{index: len(tl.items), command: ev.Command, at: it.At}
		}
	}
}

// relPath is p relative to the worktree when it is under it.
func (tl *timeline) relPath(p string) string {
	if tl.worktree != "" {
		if rest, ok := strings.CutPrefix(p, tl.worktree+"/"); ok {
			return rest
		}
	}
	return p
}

// toolKeys are the arguments that say what a tool call is about, in the
// order one is picked for its title.
var toolKeys = []string{"file_path", "path", "notebook_path", "pattern", "command", "url", "query", "description"}

// tool is a tool call's title ("Tool Read: main.go") and its arguments as
// lines of "name: value", paths relative to the worktree.
func (tl *timeline) tool(ev harness.Event) (string, string) {
	title := "Tool " + clip(tl.clean(ev.Tool), 80)
	if len(ev.Input) == 0 {
		return title, ""
	}
	var args map[string]json.RawMessage
	if json.Unmarshal(ev.Input, &args) != nil {
		return title, clip(tl.clean(string(ev.Input)), maxDetail)
	}
	for _, k := range toolKeys {
		var v string
		if json.Unmarshal(args[k], &v) == nil && strings.TrimSpace(v) != "" {
			title += ": " + clip(oneLine(tl.clean(tl.relPath(v))), 120)
			break
		}
	}
	keys := make([]string, 0, len(args))
	for k := range args {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var b strings.Builder
	for _, k := range keys {
		var v string
		if json.Unmarshal(args[k], &v) != nil {
			v = string(args[k])
		}
		fmt.Fprintf(&b, "%s: %s\n", k, tl.relPath(v))
	}
	return title, clip(tl.clean(strings.TrimSuffix(b.String(), "\n")), maxDetail)
}

// stateTitle says a transition in words: the questions, answers and ends
// of a task are its transitions.
func stateTitle(s stateData) string {
	switch {
	case s.To == task.WaitingInput:
		return "Waiting for an answer"
	case s.From == task.WaitingInput && s.To == task.Running:
		return "Answered; running again"
	case s.To == task.Running && (s.From == "" || s.From == task.Queued):
		return "Started"
	case s.To == task.Running:
		return "Running again (from " + strings.ReplaceAll(string(s.From), "_", " ") + ")"
	case s.From == "":
		return "Created: " + strings.ReplaceAll(string(s.To), "_", " ")
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

// duration is how long a task ran (so far, for one still going); ok is
// false before it started.
func duration(t task.Task, now time.Time) (time.Duration, bool) {
	start := t.StartedAt
	if start.IsZero() {
		return 0, false
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
		return 0, true
	}
	return end.Sub(start), true
}
