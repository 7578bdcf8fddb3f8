package harness

import (
	"encoding/json"
	"fmt"
	"regexp"
	"strconv"
	"strings"
)

// AiderVersion is the Aider release the adapter targets.
const AiderVersion = "0.86.1"

// AiderDefaultModel is used when the task names none, so that Aider gets
// exactly one provider's key.
const AiderDefaultModel = "sonnet"

// AiderAdapter drives Aider (`aider --message … --yes-always`).
//
// Aider writes plain text only, has no terminal event and exits 0 even when
// the model call failed; the parser decides from the text. It has no session
// ids; the adapter keeps a chat history file per task in /tmp of the kennel
// (outside the work tree) and reports the task id as the session id, so that
// resuming (ResumeID) restores that history. Auto
// commits are off so that changes stay in the work tree like every other
// CLI's. With --yes-always Aider still refuses to run shell commands.
type AiderAdapter struct{}

// Name implements Adapter.
func (AiderAdapter) Name() Name { return Aider }

// Version implements Adapter.
func (AiderAdapter) Version() string { return AiderVersion }

// Invocation implements Adapter.
func (AiderAdapter) Invocation(task Task, creds Credentials) (Invocation, error) {
	if err := validate(task); err != nil {
		return Invocation{}, fmt.Errorf("harness: aider invocation: %w", err)
	}
	if task.ReadOnly {
		return Invocation{}, readOnlyUnsupported(Aider)
	}
	model := task.Model
	if model == "" {
		model = AiderDefaultModel
	}
	history := "/tmp/fetch-aider-" + aiderSession(task)
	argv := []string{"aider",
		"--yes-always", "--no-stream", "--no-pretty", "--no-fancy-input",
		"--no-auto-commits", "--no-gitignore",
		"--no-check-update", "--no-show-release-notes", "--no-show-model-warnings", "--analytics-disable",
		"--chat-history-file=" + history + ".chat.md",
		"--input-history-file=" + history + ".input.md",
		"--model=" + model,
	}
	if task.ResumeID != "" {
		argv = append(argv, "--restore-chat-history")
	}
	// --message=… keeps a prompt that starts with '-' from being read as a flag.
	argv = append(argv, "--message="+Prompt(task))
	return Invocation{Argv: argv, Env: buildEnv(nil, creds, providerEnv[providerOf(model)]...)}, nil
}

// Keys implements Adapter: every provider's keys (a run gets its model's
// provider's only).
func (AiderAdapter) Keys() []Key { return providerKeys() }

// Traits implements Adapter. No read-only mode is offered: HARNESSES.md §9 confirms no read-only mode for Aider --message.
func (AiderAdapter) Traits() Traits { return Traits{ResumeUsage: UsagePerRun} }

// NewParser implements Adapter.
func (AiderAdapter) NewParser(task Task) Parser { return &aiderParser{session: aiderSession(task)} }

// aiderSession is what stands for a session id: the key of the chat history
// file, the task's id or, when resuming, the id resumed.
func aiderSession(task Task) string {
	if task.ResumeID != "" {
		return task.ResumeID
	}
	return task.ID
}

// aiderParser reads Aider's plain-text output. The model's reply is the text
// between the start banner (or the previous report) and its "Tokens:" usage
// line; SEARCH/REPLACE blocks inside it become tool_use events, "Applied
// edit to" lines file_changed events.
type aiderParser struct {
	session    string // reported once output starts
	started    bool
	buf        []string    // lines of the paragraph being read
	inBlock    bool        // inside a SEARCH/REPLACE block
	afterBlock bool        // the line after a block may close a code fence
	replyText  textSegment // text emitted since the last Tokens line
	reply      string      // the last reply followed by a Tokens line
	sawTokens  bool
	failure    string
}

var (
	// aiderBanner matches lines Aider prints about itself, not the model.
	aiderBanner = regexp.MustCompile(`^(Aider v\d|Main model: |Weak model: |Editor model: |Git repo: |Repo-map: |Added .+ to the chat\.$|Use /help |Commit [0-9a-f]{7,} |Model: |Warning: )`)
	// aiderPrompt matches confirmations, which --yes-always answers.
	aiderPrompt = regexp.MustCompile(`\(Y\)es/\(N\)o`)
	// aiderError matches the errors Aider prints instead of failing.
	aiderError   = regexp.MustCompile(`^(litellm\.\w*Error: |Error: |The LLM did not conform to the edit format\.|Only \d+ reflections allowed, stopping\.)`)
	aiderApplied = regexp.MustCompile(`^Applied edit to (.+)$`)
	aiderTokens  = regexp.MustCompile(`^Tokens: `)
	aiderCount   = regexp.MustCompile(`([\d.]+)([kKmM]?) (sent|cache write|cache hit|received)`)
	aiderCost    = regexp.MustCompile(`Cost: \$([\d.]+) message`)
)

// Parse implements Parser.
func (p *aiderParser) Parse(line []byte, emit func(Event)) {
	if !p.started {
		p.started = true
		if p.session != "" {
			emit(Event{Kind: KindSession, SessionID: p.session})
		}
	}
	s := strings.TrimRight(string(line), "\r")
	t := strings.TrimSpace(s)
	if p.afterBlock {
		p.afterBlock = false
		if strings.HasPrefix(t, "```") {
			return
		}
	}
	switch {
	case p.inBlock:
		if strings.HasPrefix(t, ">>>>>>> REPLACE") {
			p.inBlock, p.afterBlock = false, true
		}
	case strings.HasPrefix(t, "<<<<<<< SEARCH"):
		p.inBlock = true
		path := p.popFileName()
		input, _ := json.Marshal(map[string]string{"path": path})
		p.flushText(emit)
		emit(Event{Kind: KindToolUse, Tool: "search_replace", Input: input})
	case aiderTokens.MatchString(t):
		p.flushText(emit)
		p.reply = capText(p.replyText.String())
		p.replyText.reset()
		p.sawTokens = true
		p.failure = "" // a later reply supersedes an earlier error (Aider retries malformed edits)
		if u, ok := aiderUsage(t); ok {
			emit(Event{Kind: KindUsage, Usage: &u})
		}
	case aiderApplied.MatchString(t):
		p.flushText(emit)
		emit(Event{Kind: KindFileChanged, Tool: "search_replace", Path: aiderApplied.FindStringSubmatch(t)[1]})
	case aiderError.MatchString(t):
		p.flushText(emit)
		p.failure = capText(t)
		emit(Event{Kind: KindError, Text: p.failure})
	case aiderBanner.MatchString(t), aiderPrompt.MatchString(t):
	case t == "":
		p.flushText(emit) // one text event per paragraph
	default:
		p.buf = append(p.buf, strings.TrimRight(s, " \t"))
	}
}

// Flush implements Parser: the end of Aider's output is its terminal event.
func (p *aiderParser) Flush(emit func(Event)) {
	last := p.flushText(emit)
	switch {
	case p.failure != "":
		emit(Event{Kind: KindResult, Text: p.failure})
	case p.sawTokens:
		emit(Event{Kind: KindResult, Success: true, Text: p.reply})
	case last != "":
		emit(Event{Kind: KindResult, Text: "aider printed no model response: " + capString(last, 512)})
	}
}

// flushText emits the buffered paragraph as one text event and returns it.
func (p *aiderParser) flushText(emit func(Event)) string {
	text := strings.TrimSpace(strings.Join(p.buf, "\n"))
	p.buf = p.buf[:0]
	if text == "" {
		return ""
	}
	text = capText(text)
	p.replyText.add(text + "\n\n")
	emit(Event{Kind: KindText, Text: text})
	return text
}

// popFileName removes the file name (and an opening code fence) that
// precede a SEARCH/REPLACE block from the buffer.
func (p *aiderParser) popFileName() string {
	for len(p.buf) > 0 {
		last := strings.TrimSpace(p.buf[len(p.buf)-1])
		p.buf = p.buf[:len(p.buf)-1]
		if last == "" || strings.HasPrefix(last, "```") {
			continue
		}
		return last
	}
	return ""
}

// aiderUsage reads "Tokens: 2.3k sent, 1.1k cache hit, 71 received. Cost:
// $0.0080 message, $0.0080 session."
func aiderUsage(line string) (Usage, bool) {
	var u Usage
	for _, m := range aiderCount.FindAllStringSubmatch(line, -1) {
		n := aiderNumber(m[1], m[2])
		switch m[3] {
		case "sent":
			u.InputTokens = n
		case "cache write":
			u.CacheWriteTokens = n
		case "cache hit":
			u.CacheReadTokens = n
		case "received":
			u.OutputTokens = n
		}
	}
	if m := aiderCost.FindStringSubmatch(line); m != nil {
		u.CostUSD, _ = strconv.ParseFloat(m[1], 64)
	}
	return u, !u.IsZero()
}

func aiderNumber(num, suffix string) int64 {
	f, err := strconv.ParseFloat(num, 64)
	if err != nil {
		return 0
	}
	switch suffix {
	case "k", "K":
		f *= 1e3
	case "m", "M":
		f *= 1e6
	}
	return int64(f + 0.5)
}
