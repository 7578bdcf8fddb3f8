package harness

import (
	"fmt"
	"regexp"
	"slices"
	"strings"
	"time"

	"github.com/fetch-dev/fetch/kennel"
)

// exitNotFound is the exit code of a run whose program could not be found
// (fetch-shim's, like the shell's).
const exitNotFound = 127

// Outcome is what a run came to.
type Outcome struct {
	// Undelivered are the user's messages a two-way run was given
	// (Task.Mailbox) and ended before it could deliver: they wait for the
	// next run.
	Undelivered []string `json:"undelivered,omitempty"`
	// Success: the terminal event reported success and the exit code was 0.
	Success bool `json:"success"`
	// Terminal: the CLI produced its terminal event (or, for CLIs that have
	// none, the equivalent end of its stream).
	Terminal bool `json:"terminal"`
	// Summary is the agent's final message when the run succeeded.
	Summary string `json:"summary,omitempty"`
	// Question is what the agent asked the user, if it ended by asking.
	Question string `json:"question,omitempty"`
	// SessionID resumes the CLI's session (Task.ResumeID).
	SessionID string `json:"session_id,omitempty"`
	// Prepared is what the run's Task.Prepare printed (a
	// shim.BatchResult as JSON); nil without one.
	Prepared []byte `json:"-"`
	// Recorded is what the run's Task.Record printed (a shim.BatchResult
	// as JSON; kennel output, untrusted); nil without one.
	Recorded []byte `json:"-"`
	// Usage is the sum of the run's usage events.
	Usage Usage `json:"usage"`
	// Error says why the run did not succeed, for the user: the CLI's own
	// error message when it gave one, else the end of its stderr, else the
	// exit code.
	Error string `json:"error,omitempty"`
	// Files changed in the working tree during the run, measured with git.
	Files []FileChange `json:"files,omitempty"`
	// ExitCode of the CLI (-1 when it never produced one).
	ExitCode int `json:"exit_code"`
	// StderrTail is the end of the CLI's stderr.
	StderrTail string `json:"stderr_tail,omitempty"`
	// TimedOut: the task's timeout expired and the run was stopped.
	TimedOut bool `json:"timed_out,omitempty"`
	// Stopped: the run was stopped (by Stop or by the timeout).
	Stopped bool `json:"stopped,omitempty"`
}

// FileChange is one file that changed during a run.
type FileChange struct {
	// Path is relative to the repository root, with '/' separators.
	Path    string     `json:"path"`
	Change  ChangeKind `json:"change"`
	Added   int        `json:"added"`
	Removed int        `json:"removed"`
	// Binary files have no line counts.
	Binary bool `json:"binary,omitempty"`
}

// tally watches the events of a run and remembers what the Outcome needs.
type tally struct {
	session   string
	usage     Usage
	terminal  bool
	success   bool
	result    string
	lastError string
	question  string
}

func (t *tally) observe(ev Event) {
	switch ev.Kind {
	case KindSession:
		t.session = ev.SessionID
	case KindUsage:
		if ev.Usage != nil && ev.Usage.Valid() {
			t.usage = t.usage.Add(*ev.Usage)
		}
	case KindResult:
		t.terminal, t.success, t.result = true, ev.Success, ev.Text
	case KindError:
		if ev.Tool == "" { // tool failures are results the agent saw
			t.lastError = ev.Text
		}
	case KindQuestion:
		t.question = ev.Text
	case KindText, KindToolUse, KindCommand:
		// The agent went on working, so an earlier question was answered
		// in-band (Claude's stdio permission channel).
		t.question = ""
	}
}

// end is what the process reported when it ended.
type end struct {
	exitCode   int
	stderrTail string
	timedOut   bool
	timeout    time.Duration
	stopped    bool
	// program is the CLI the run started (argv[0]), when known.
	program string
	// missing, when set, is the failure of a run whose program is not in
	// the kennel (the adapter's own words; missingCLI).
	missing string
	// failure, when set, is why the run failed, known before its output
	// is read (a handshake not answered in time).
	failure string
}

// outcome combines the stream with how the process ended.
func (t *tally) outcome(e end) Outcome {
	o := Outcome{
		Terminal:   t.terminal,
		SessionID:  t.session,
		Usage:      t.usage,
		ExitCode:   e.exitCode,
		StderrTail: e.stderrTail,
		TimedOut:   e.timedOut,
		Stopped:    e.stopped || e.timedOut,
		Question:   t.question,
	}
	o.Success = t.terminal && t.success && e.exitCode == 0 && !o.Stopped
	if o.Success {
		o.Summary = t.result
		return o
	}
	o.Error = t.failure(e)
	return o
}

// failure explains an unsuccessful run in one message.
func (t *tally) failure(e end) string {
	switch {
	case e.failure != "":
		return e.failure
	case e.timedOut && e.timeout > 0:
		return "timed out after " + e.timeout.String()
	case e.timedOut:
		return "timed out"
	case e.stopped:
		return "stopped"
	case t.terminal && !t.success && t.result != "":
		return t.result
	case t.lastError != "":
		return t.lastError
	}
	if e.program != "" && !t.terminal && e.exitCode == exitNotFound && shimNotStarted(e.stderrTail) {
		if e.missing != "" {
			return e.missing
		}
		return fmt.Sprintf("%s is not installed in the kennel image: build the image with it: %s",
			e.program, kennel.BuildCommand("", e.program))
	}
	var msg string
	switch {
	case e.exitCode != 0:
		msg = fmt.Sprintf("exited with code %d", e.exitCode)
	case t.terminal:
		msg = "the run reported failure"
	default:
		msg = "ended without a final result"
	}
	if s := stderrSummary(e.stderrTail); s != "" {
		msg += ": " + s
	}
	return msg
}

// shimNotStarted tells whether a run's stderr says that fetch-shim could
// not start its program: "fetch-shim: start …" from a plain run, and
// "fetch-shim: prepare: exec: …" (the lookup) or "fetch-shim: prepare:
// start …" from a run with a Task.Prepare.
func shimNotStarted(tail string) bool {
	for _, s := range []string{"fetch-shim: start ", "fetch-shim: prepare: exec: ", "fetch-shim: prepare: start "} {
		if strings.Contains(tail, s) {
			return true
		}
	}
	return false
}

// ansiEscape matches terminal colour and cursor sequences.
var ansiEscape = regexp.MustCompile(`\x1b\[[0-9;?]*[A-Za-z]`)

// stderrSummary returns the last few meaningful lines of stderr: without
// colour codes and without stack frames ("    at f (file:1:2)").
func stderrSummary(tail string) string {
	const maxLines, maxBytes = 3, 600
	lines := strings.Split(ansiEscape.ReplaceAllString(tail, ""), "\n")
	var keep []string
	for i := len(lines) - 1; i >= 0 && len(keep) < maxLines; i-- {
		l := strings.TrimSpace(lines[i])
		if l == "" || strings.HasPrefix(l, "at ") {
			continue
		}
		keep = append(keep, l)
	}
	slices.Reverse(keep)
	return capString(strings.Join(keep, "\n"), maxBytes)
}

// stream feeds a parser and tallies what it emits. It adds the question
// event for CLIs without a structured one, after a successful result.
type stream struct {
	parser  Parser
	onEvent func(Event)
	tally   tally
	// prepared is the run's kennel.Prepared line, recorded its last
	// kennel.Recorded line.
	prepared, recorded []byte
}

func newStream(p Parser, onEvent func(Event)) *stream {
	return &stream{parser: p, onEvent: onEvent}
}

func (s *stream) line(b []byte) { s.parser.Parse(b, s.emit) }

// output is the run's kennel.LineHandler: stdout goes to the parser, the
// prepared and the last recorded line are kept for the Outcome, stderr is
// left to the tail.
func (s *stream) output(stream kennel.Stream, line []byte) {
	switch stream {
	case kennel.Stdout:
		s.line(line)
	case kennel.Prepared:
		if s.prepared == nil {
			s.prepared = append([]byte(nil), line...)
		}
	case kennel.Recorded:
		s.recorded = append(s.recorded[:0], line...)
	}
}

func (s *stream) flush() { s.parser.Flush(s.emit) }

func (s *stream) emit(ev Event) {
	s.tally.observe(ev)
	if s.onEvent != nil {
		s.onEvent(ev)
	}
	if ev.Kind == KindResult && ev.Success && s.tally.question == "" {
		if q := detectQuestion(ev.Text); q != "" {
			s.emit(Event{Kind: KindQuestion, Text: q})
		}
	}
}

// sessionGone are what the CLIs say when the session a run was to resume
// is not there: Claude Code's --resume, Codex app-server's thread/resume,
// and an ACP agent's session/load (answered with an error, which the
// parser reports as starting the session failing).
var sessionGone = []string{
	"No conversation found with session ID",
	"no rollout found for thread id",
	"starting the session failed",
}

// SessionLost tells whether a run that was to resume a session (Task.ResumeID)
// failed because the CLI could not find it: its files went with the kennel
// they were in (a kennel that slept, or was made anew), so the work must go
// on in a new session.
func SessionLost(o Outcome) bool {
	if o.Success || o.Stopped {
		return false
	}
	for _, s := range sessionGone {
		if strings.Contains(o.Error, s) || strings.Contains(o.StderrTail, s) {
			return true
		}
	}
	return false
}
