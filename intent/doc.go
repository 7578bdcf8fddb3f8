// Package intent classifies a chat message as Conversation, Inquiry, Action
// or Clarify, the second of Fetch's three layers (after the instincts, before
// the mode machine). The kind decides what runs next: a short read-only chat
// reply, a read-only answer in one cycle, the full ReAct loop, or a request
// for detail.
//
//	c := intent.New()
//	r := c.Classify("can you make the button blue?", intent.Context{})
//	// r.Kind == intent.Action, r.Rule == "polite-request"
//
// # Rules
//
// Classification is an ordered table of named, case-insensitive, Unicode-aware
// regular expressions (rules.go) built from word lists (vocab.go); the first
// rule that matches decides, and Result.Rule names it. No LLM, no I/O.
//
// Most rules look at the message body: the message without the greetings,
// acknowledgements and discourse markers it opens with ("hey fetch,", "ok
// so", "thanks!", "please"), so "hi, fix the build" is judged as "fix the
// build". The order, and why:
//
//  1. empty: nothing to act on (Clarify).
//  2. decline, confirm: only when Fetch's last reply proposed or asked
//     something (Context.AwaitingConfirmation). "no thanks" is Conversation;
//     "yes, do it", "go ahead", "👍", "fix it" accept the proposal (Action).
//     "ok thanks" only acknowledges it. These come first because the same
//     words mean something else without a proposal.
//  3. social: the whole message is greetings, thanks, farewells, laughter,
//     compliments or small talk, in several languages (Conversation).
//     Then reminder: "remind me tomorrow at 9 to check the deploy", "every
//     monday at 9 summarize open PRs" ask for something later (Action; the
//     instincts read such a message first and save it when its time reads).
//  4. hypothetical, suggestion: "what if we switched to X, would that help?"
//     asks (Inquiry); "what if you add X", "how about adding X", "why don't
//     you X" propose work (Action). Before the question rules, which would
//     otherwise take them on their question word.
//  5. await-question: in context, a question about the proposal ("what would
//     that change?") is an Inquiry, even when made of vague words.
//  6. state-question: "what are you working on?", "what happened?" ask about
//     Fetch's state without naming it, so they come before vague.
//  7. vague: a statement made only of generic words ("fix it", "it doesn't
//     work", "help", "???"), a question whose only subject is a dangling
//     "it"/"this" ("why is it broken?"), or a verb applied to one ("implement
//     it") is Clarify.
//  8. choice: in context, "the second one", "option b" pick from what Fetch
//     offered (Action).
//  9. compound: a question or read request followed by a change ("look into
//     why CI fails and fix it", "why is X failing? fix it") is an Action;
//     the Action includes the reading.
//  10. polite-read, polite-request: "can you explain X" is an Inquiry; "can
//     you make the button blue?" is an Action despite its question mark.
//  11. want-to-know, desire: "i'd like to see the diff" asks; "i need a
//     /health endpoint", "let's add X", "we should X" request work.
//  12. wh-question, aux-question: questions by their opening word, in
//     English, Spanish, French, German and Portuguese (Inquiry).
//  13. workspace-command, workspace-select, workspace-read, vcs-read, command-line,
//     read-command, imperative: commands by their verb; reading verbs
//     ("show", "list", "explain", "git status") before changing ones;
//     "select the demo workspace", "pick api" select one (Action).
//  14. ja-request, desired-state: a Japanese request form, "the header should
//     be sticky", "the parser needs tests" (Action).
//  15. question-mark, problem-report: any other question, or a report of
//     something failing with a named subject, is investigated (Inquiry).
//  16. answer: in context, a short reply ("main.go", "use v2") answers what
//     Fetch asked (Action).
//  17. fragment: one or two unrecognised words ("tests", "the button") say
//     too little (Clarify).
//
// The default, when nothing matches, is Inquiry (rule "default"). An
// unrecognised message is usually a statement or a pasted error about the
// code, and Inquiry answers it with read-only tools in one bounded cycle: it
// can never change anything the owner did not ask for (as a default of
// Action could), it does not stonewall a long specific message with "what do
// you mean?" (as Clarify would), and it may look at the code (which
// Conversation's two tool calls barely allow). If the message was in fact a
// request, the answer proposes the change and the owner's "go ahead" arrives
// with AwaitingConfirmation set. The same reasoning settles genuinely
// ambiguous phrasings toward the read-only side: "is it possible to add dark
// mode?" is an Inquiry, while "would it be possible to add dark mode?" is a
// polite request.
//
// Context carries AwaitingConfirmation and TaskRunning. With a task running
// (and an agent to act on it), a message that would be Clarify ("fix it",
// "try again", "it's still failing") is about that task: an Action, or an
// Inquiry when it ends with a question mark (rule "running-task"), instead
// of a canned "what do you mean?". Whether a workspace is selected does not
// change what the owner means, only what the agent can do about it, so it
// is the agent's concern, not the classifier's.
//
// # Corpus
//
// testdata/corpus.tsv is the labelled corpus the rules were developed
// against; testdata/holdout.tsv was written after the rules and never tuned
// against. TestCorpus and TestHoldout log per-class accuracy and every
// misclassified message (go test -v -run 'Corpus|Holdout') and fail below
// 95% and 90% overall.
//
// # Dependencies and concurrency
//
// The package imports only the standard library and nothing of Fetch's.
// New compiles the rules once; a Classifier is immutable afterwards and safe
// for concurrent use. Classify accepts any text (Fetch passes at most 10,000
// characters) and never panics. It is allocation-light: at most three small
// allocations per call (lower-casing at most 2 KiB of text, one match
// index). Rules look only at the first KiB of a message and at its last 64
// bytes, so a long paste costs about as much as a paragraph: on a shared
// 2-core machine a greeting takes about 10µs, a typical request 35-50µs, and
// a 10,000-character paste under 200µs (BenchmarkClassify).
package intent
