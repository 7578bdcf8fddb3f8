package intent

import (
	"regexp"
	"strings"
	"unicode/utf8"
)

// Kind is what a message asks of Fetch. It decides what runs next.
type Kind string

// The four kinds of message.
const (
	// Conversation is chat: greetings, thanks, small talk. The agent answers
	// with read-only tools and at most two tool calls.
	Conversation Kind = "conversation"
	// Inquiry is a question about code, the workspace or Fetch's state. The
	// agent answers with read-only tools in one cycle.
	Inquiry Kind = "inquiry"
	// Action is a request to do something: change code, run a command,
	// manage workspaces, or go ahead with what Fetch proposed. It runs the
	// full ReAct loop.
	Action Kind = "action"
	// Clarify is a message too vague to act on ("fix it", "broken"); Fetch
	// asks what is meant instead of guessing.
	Clarify Kind = "clarify"
)

// Valid reports whether k is one of the four kinds.
func (k Kind) Valid() bool {
	switch k {
	case Conversation, Inquiry, Action, Clarify:
		return true
	default:
		return false
	}
}

// Context is what the classifier knows about the conversation beyond the
// message itself.
type Context struct {
	// AwaitingConfirmation is true when Fetch's previous reply proposed
	// something or asked the user a question. Short answers ("yes, do it",
	// "go ahead", "the second one", "fix it") then refer to that proposal
	// and are actions; without it they are too vague to act on.
	AwaitingConfirmation bool
	// TaskRunning is true when a task is running in the conversation and
	// something can act on it (the agent). A message too vague to act on
	// alone ("fix it", "try again", "it's broken") then refers to that
	// task: an Action, or an Inquiry when it is a question (rule
	// "running-task").
	TaskRunning bool
}

// Result is a classification and the name of the rule that produced it.
type Result struct {
	Kind Kind
	// Rule names the rule that matched, e.g. "polite-request", or
	// "default" when none did. Rule names are stable and meant for logs.
	Rule string
}

// Classifier classifies messages with an ordered table of named regular
// expressions. Build it once with New; it is safe for concurrent use.
type Classifier struct {
	// lead matches the greetings, acknowledgements and discourse markers
	// ("hey fetch,", "ok so", "thanks!", "please") that may open a message.
	lead  *regexp.Regexp
	rules []rule
}

// condition restricts a rule to a conversational context.
type condition int

const (
	always condition = iota
	awaiting
)

// subject is the part of the message a rule looks at. Bounding it keeps a
// 10,000-character paste as cheap to classify as a sentence: what a message
// asks is decided by how it starts and ends, and chat, vague or short
// answers are never long.
type subject int

const (
	// whole is the trimmed message.
	whole subject = iota
	// short is the trimmed message when it is at most shortLimit bytes;
	// longer messages never match.
	short
	// body is the message after its opening greetings, acknowledgements
	// and discourse markers (the whole message when nothing else is left),
	// cut to its first headLimit bytes.
	body
	// shortBody is body when the message is at most shortLimit bytes.
	shortBody
	// tail is the last tailLimit bytes of the trimmed message.
	tail
)

const (
	shortLimit = 500
	headLimit  = 1024
	tailLimit  = 64
)

type rule struct {
	name string
	kind Kind
	when condition
	on   subject
	re   *regexp.Regexp
}

// New compiles the rule table. It panics only if a built-in pattern does
// not compile, which the package tests rule out.
func New() *Classifier {
	expand := expander()
	c := &Classifier{lead: regexp.MustCompile(expand(leadPattern))}
	// The longest run of opening tokens, not the first that fits: "hey
	// fetch" is one vocative, not "hey" followed by the command "fetch".
	c.lead.Longest()
	for _, s := range ruleSpecs() {
		c.rules = append(c.rules, rule{
			name: s.name,
			kind: s.kind,
			when: s.when,
			on:   s.on,
			re:   regexp.MustCompile(expand(s.pattern)),
		})
	}
	return c
}

// Classify returns the kind of text and the rule that decided it. Rules are
// tried in order and the first match wins; a message no rule matches is an
// Inquiry (rule "default"). Matching ignores case (Unicode lower case).
// Classify never panics, does no I/O and is deterministic: the same text
// and context always give the same Result.
func (c *Classifier) Classify(text string, ctx Context) Result {
	t := strings.TrimSpace(text)
	isShort := len(t) <= shortLimit
	// Patterns are lower case: folding the text once is much cheaper than
	// matching case-insensitively, and no rule looks past headLimit bytes
	// of the body or tailLimit bytes of the end.
	end := strings.ToLower(last(t, tailLimit))
	t = strings.ToLower(head(t, 2*headLimit))
	b := head(c.body(t), headLimit)
	for i := range c.rules {
		r := &c.rules[i]
		if r.when == awaiting && !ctx.AwaitingConfirmation {
			continue
		}
		var s string
		switch r.on {
		case whole:
			s = t
		case short:
			if !isShort {
				continue
			}
			s = t
		case body:
			s = b
		case shortBody:
			if !isShort {
				continue
			}
			s = b
		case tail:
			s = end
		}
		if r.re.MatchString(s) {
			if r.kind == Clarify && r.name != "empty" && ctx.TaskRunning {
				// A question about it ("why is it slow?") asks; the rest
				// ("fix it", "try again") asks for something done.
				if strings.HasSuffix(end, "?") || strings.HasSuffix(end, "？") {
					return Result{Kind: Inquiry, Rule: RuleRunningTask}
				}
				return Result{Kind: Action, Rule: RuleRunningTask}
			}
			return Result{Kind: r.kind, Rule: r.name}
		}
	}
	return Result{Kind: Inquiry, Rule: RuleDefault}
}

// RuleRunningTask is the rule name reported for a message that would be
// Clarify but is taken as an Action about the running task
// (Context.TaskRunning).
const RuleRunningTask = "running-task"

// RuleDefault is the rule name reported when no rule matches.
const RuleDefault = "default"

// body strips the opening greetings and discourse markers from t. When they
// are all there is, t is returned unchanged so the whole-message rules
// still see it.
func (c *Classifier) body(t string) string {
	loc := c.lead.FindStringIndex(t)
	if loc == nil || loc[1] == 0 || loc[1] >= len(t) {
		return t
	}
	return t[loc[1]:]
}

// head returns at most the first n bytes of s, cut at a rune boundary.
func head(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n]
}

// last returns at most the last n bytes of s, cut at a rune boundary.
func last(s string, n int) string {
	if len(s) <= n {
		return s
	}
	i := len(s) - n
	for i < len(s) && !utf8.RuneStart(s[i]) {
		i++
	}
	return s[i:]
}
