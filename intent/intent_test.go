package intent

import (
	"regexp"
	"strings"
	"sync"
	"testing"
	"unicode"
	"unicode/utf8"
)

// TestRules checks each rule on messages it must decide. Every rule of the
// table has at least one case (TestRulesCovered).
var ruleCases = []struct {
	rule  string
	await bool
	text  string
	want  Kind
}{
	{"empty", false, "", Clarify},
	{"empty", false, "   \n\t ", Clarify},

	{"decline", true, "no thanks", Conversation},
	{"decline", true, "nah, leave it as is", Conversation},
	{"decline", true, "ok, not now", Conversation},
	{"decline", true, "hmm, not sure", Conversation},

	{"confirm", true, "yes, do it", Action},
	{"confirm", true, "go ahead", Action},
	{"confirm", true, "sounds good, ship it", Action},
	{"confirm", true, "👍", Action},
	{"confirm", true, "ok", Action},
	{"confirm", true, "yes please, thanks!", Action},
	{"confirm", true, "refactor it", Action},
	{"confirm", true, "oui vas-y", Action},
	{"confirm", true, "continue", Action},

	{"social", false, "hi", Conversation},
	{"social", false, "Hey there 👋", Conversation},
	{"social", false, "thanks🙏", Conversation},
	{"social", false, "😂", Conversation},
	{"social", false, "ok thanks", Conversation},
	{"social", true, "ok thanks", Conversation},
	{"social", true, "😂", Conversation},
	{"social", false, "merci beaucoup", Conversation},
	{"social", false, "おはようございます", Conversation},
	{"social", false, "how are you?", Conversation},
	{"reminder", false, "remind me tomorrow at 9 to check the deploy", Action},
	{"reminder", false, "hey fetch, remind me in 5 minutes to check tests", Action},
	{"reminder", false, "every monday at 9 summarize open PRs", Action},
	{"reminder", false, "set a reminder for 6pm to call Bob", Action},
	{"social", false, "thanks for fixing the parser", Conversation},
	{"social", false, "sorry for the delay", Conversation},
	{"social", false, "ok", Conversation},

	{"hypothetical", false, "what if we switched to postgres, would that help?", Inquiry},
	{"hypothetical", false, "what happens if the kennel dies mid-task?", Inquiry},

	{"suggestion", false, "what if you add a cache?", Action},
	{"suggestion", false, "how about adding a retry?", Action},
	{"suggestion", false, "why don't you split run.go?", Action},
	{"suggestion", false, "you could also add a test for nil", Action},

	{"await-question", true, "what would that change?", Inquiry},
	{"await-question", true, "why is it needed?", Inquiry},

	{"state-question", false, "what are you working on?", Inquiry},
	{"state-question", false, "what's running right now", Inquiry},
	{"state-question", false, "what happened?", Inquiry},

	{"vague", false, "fix it", Clarify},
	{"vague", false, "it doesn't work", Clarify},
	{"vague", false, "???", Clarify},
	{"vague", false, "help", Clarify},
	{"vague", false, "can you help me?", Clarify},
	{"vague", false, "why is it broken", Clarify},
	{"vague", false, "go ahead", Clarify},
	{"vague", false, "yes", Clarify},
	{"vague", false, "implement it", Clarify},
	{"vague", false, "hey, it's broken 😭", Clarify},
	{"vague", false, "ça marche pas", Clarify},
	{"vague", true, "it still doesn't work", Clarify},

	{"choice", true, "the second one", Action},
	{"choice", true, "option b", Action},
	{"choice", true, "2", Action},

	{"compound", false, "could you look into why the CI is failing and fix it", Action},
	{"compound", false, "why is TestParse failing? fix it pls", Action},
	{"compound", false, "The parser panics on empty input. Can you fix it?", Action},
	{"compound", false, "README is outdated, update it", Action},

	{"polite-read", false, "can you explain what kennel.go does?", Inquiry},
	{"polite-read", false, "could you show me the diff?", Inquiry},
	{"polite-read", false, "Pouvez-vous expliquer ce fichier ?", Inquiry},

	{"polite-request", false, "can you make the button blue?", Action},
	{"polite-request", false, "would you mind renaming foo to bar?", Action},
	{"polite-request", false, "hey fetch can you add tests", Action},
	{"polite-request", false, "¿puedes añadir un botón de logout?", Action},
	{"polite-request", false, "kannst du die Tests reparieren?", Action},
	{"polite-request", true, "can you also add tests?", Action},

	{"want-to-know", false, "i'd like to see the diff", Inquiry},
	{"want-to-know", false, "I want to understand the queue", Inquiry},

	{"desire", false, "I need a /health endpoint that returns 200", Action},
	{"desire", false, "let's add structured logging", Action},
	{"desire", false, "we should probably add rate limiting", Action},
	{"desire", false, "it would be nice to have a --dry-run flag", Action},

	{"wh-question", false, "what does main.go do?", Inquiry},
	{"wh-question", false, "WHY IS THE BUILD RED", Inquiry},
	{"wh-question", false, "¿Qué hace main.go?", Inquiry},
	{"wh-question", false, "comment fonctionne l'authentification ?", Inquiry},

	{"aux-question", false, "is the build green?", Inquiry},
	{"aux-question", false, "do we have a Dockerfile?", Inquiry},
	{"aux-question", false, "is it possible to add dark mode?", Inquiry},

	{"workspace-command", false, "workspace create demo", Action},
	{"workspace-select", false, "select the demo workspace", Action},
	{"workspace-select", false, "pick demo", Action},
	{"workspace-read", false, "workspaces", Inquiry},
	{"vcs-read", false, "git log --oneline", Inquiry},
	{"command-line", false, "go test ./...", Action},
	{"command-line", false, "git push origin main", Action},

	{"read-command", false, "list my workspaces", Inquiry},
	{"read-command", false, "status?", Inquiry},
	{"read-command", false, "explain internal/task/queue.go", Inquiry},

	{"imperative", false, "add a health check to the API", Action},
	{"imperative", false, "refactor internal/store/db.go to use WAL", Action},
	{"imperative", false, "clone https://github.com/x/y", Action},
	{"imperative", false, "fetch the latest changes from origin", Action},
	{"imperative", false, "comment out the debug lines in main.go", Action},
	{"imperative", false, "hi, fix the failing test in parser_test.go please", Action},
	{"imperative", false, "Añade tests al parser", Action},

	{"ja-request", false, "テストを追加してください", Action},

	{"desired-state", false, "the header should be sticky", Action},
	{"desired-state", false, "the parser needs more tests", Action},

	{"question-mark", false, "main.go?", Inquiry},
	{"question-mark", false, "TestStore_Open keeps timing out — what's going on?", Inquiry},

	{"problem-report", false, "the api is really slow since the last deploy", Inquiry},

	{"answer", true, "internal/store/db.go", Action},
	{"answer", true, "postgres, with the default schema", Action},

	{"fragment", false, "tests", Clarify},
	{"fragment", false, "https://github.com/foo/bar", Clarify},

	{RuleDefault, false, "goroutine 1 [running]: main.main() /src/main.go:12 +0x1d", Inquiry},
	{RuleDefault, false, "I think there's a memory leak in the watcher", Inquiry},
}

func TestRules(t *testing.T) {
	c := New()
	for _, tc := range ruleCases {
		name := tc.rule + "/" + tc.text
		if tc.await {
			name += "/await"
		}
		t.Run(name, func(t *testing.T) {
			got := c.Classify(tc.text, Context{AwaitingConfirmation: tc.await})
			want := Result{Kind: tc.want, Rule: tc.rule}
			if got != want {
				t.Errorf("Classify(%q, await=%t) = %+v, want %+v", tc.text, tc.await, got, want)
			}
		})
	}
}

// TestRunningTask: what would be too vague alone is about the running task
// when one runs; nothing else changes.
func TestRunningTask(t *testing.T) {
	c := New()
	for _, tc := range []struct {
		text string
		want Result
	}{
		{"fix it", Result{Action, RuleRunningTask}},
		{"try again", Result{Action, RuleRunningTask}},
		{"it's still broken", Result{Action, RuleRunningTask}},
		{"   ", Result{Clarify, "empty"}},
		{"thanks!", Result{Conversation, "social"}},
		{"what is running?", Result{Inquiry, "state-question"}},
		{"why is it broken?", Result{Inquiry, RuleRunningTask}},
	} {
		if got := c.Classify(tc.text, Context{TaskRunning: true}); got != tc.want {
			t.Errorf("Classify(%q, running) = %+v, want %+v", tc.text, got, tc.want)
		}
	}
	if got := c.Classify("fix it", Context{}); got.Kind != Clarify {
		t.Errorf("Classify(fix it) with nothing running = %+v, want clarify", got)
	}
}

// TestRulesCovered keeps TestRules honest: every rule in the table, and the
// default, has a case, and every case names a real rule.
func TestRulesCovered(t *testing.T) {
	names := map[string]bool{RuleDefault: true}
	for _, s := range ruleSpecs() {
		if names[s.name] {
			t.Errorf("rule %q appears twice in the table", s.name)
		}
		names[s.name] = true
		if !s.kind.Valid() {
			t.Errorf("rule %q has invalid kind %q", s.name, s.kind)
		}
	}
	tested := map[string]bool{}
	for _, tc := range ruleCases {
		if !names[tc.rule] {
			t.Errorf("case %q names unknown rule %q", tc.text, tc.rule)
		}
		tested[tc.rule] = true
	}
	for name := range names {
		if !tested[name] {
			t.Errorf("rule %q has no case in ruleCases", name)
		}
	}
}

func TestKindValid(t *testing.T) {
	for _, k := range []Kind{Conversation, Inquiry, Action, Clarify} {
		if !k.Valid() {
			t.Errorf("%q.Valid() = false", k)
		}
	}
	for _, k := range []Kind{"", "chat", "Action"} {
		if k.Valid() {
			t.Errorf("%q.Valid() = true", k)
		}
	}
}

// TestApostrophes checks that typographic apostrophes and case do not
// change the result.
func TestApostrophes(t *testing.T) {
	c := New()
	for _, text := range []string{"it doesn't work", "why don't you split run.go?", "what's the status of the refactor?", "let's add structured logging"} {
		want := c.Classify(text, Context{})
		for _, variant := range []string{strings.ReplaceAll(text, "'", "’"), strings.ToUpper(text)} {
			if got := c.Classify(variant, Context{}); got != want {
				t.Errorf("Classify(%q) = %+v, want %+v as for %q", variant, got, want, text)
			}
		}
	}
}

// TestLongInput checks that a maximal message is classified, and quickly.
func TestLongInput(t *testing.T) {
	c := New()
	long := "add a retry to the client. " + strings.Repeat("The backoff should be exponential and capped at thirty seconds. ", 160)
	long = long[:10000]
	if got := c.Classify(long, Context{}); got.Kind != Action {
		t.Errorf("Classify(long request) = %+v, want an Action", got)
	}
	paste := strings.Repeat("goroutine 1 [running]:\nmain.main()\n\t/src/main.go:12 +0x1d\n", 200)[:10000]
	if got := c.Classify(paste, Context{}); got.Kind != Inquiry {
		t.Errorf("Classify(stack trace) = %+v, want an Inquiry", got)
	}
}

// TestConcurrent runs Classify from several goroutines; run with -race.
func TestConcurrent(t *testing.T) {
	c := New()
	var wg sync.WaitGroup
	for i := range 8 {
		wg.Go(func() {
			for j := range 50 {
				tc := ruleCases[(i*50+j)%len(ruleCases)]
				got := c.Classify(tc.text, Context{AwaitingConfirmation: tc.await})
				if got.Kind != tc.want {
					t.Errorf("Classify(%q) = %+v, want %s", tc.text, got, tc.want)
				}
			}
		})
	}
	wg.Wait()
}

func FuzzClassify(f *testing.F) {
	for _, tc := range ruleCases {
		f.Add(tc.text, tc.await)
	}
	f.Add("\xff\xfe broken utf-8 ¿?", false)
	f.Add(strings.Repeat("it ", 3000), true)
	c := New()
	f.Fuzz(func(t *testing.T, text string, await bool) {
		r := c.Classify(text, Context{AwaitingConfirmation: await})
		if !r.Kind.Valid() {
			t.Fatalf("Classify(%q) = invalid kind %q", text, r.Kind)
		}
		if r.Rule == "" {
			t.Fatalf("Classify(%q) reported no rule", text)
		}
		if utf8.ValidString(text) && strings.TrimSpace(text) == "" && r.Kind != Clarify {
			t.Fatalf("Classify(%q) = %+v, want Clarify for blank text", text, r)
		}
	})
}

func BenchmarkClassify(b *testing.B) {
	c := New()
	inputs := map[string]string{
		"short":    "hi",
		"request":  "could you please refactor the harness package, it's a mess",
		"question": "how does the retry logic in internal/llm/client.go work?",
		"default":  "I think there's a memory leak in the watcher when the workspace is removed",
		"10k":      strings.Repeat("the watcher leaks a goroutine per workspace and never stops it ", 160)[:10000],
	}
	for name, text := range inputs {
		b.Run(name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				c.Classify(text, Context{})
			}
		})
	}
}

// TestPatternsLowerCase checks that no pattern has an upper-case letter
// outside an escape (\S, \pL, \p{So}, \x{FE0F}): Classify lower-cases the
// text, so such a letter could never match.
func TestPatternsLowerCase(t *testing.T) {
	escapes := regexp.MustCompile(`\\(?:[pP]\{[^}]*\}|[pP][A-Za-z]|x\{[^}]*\}|[A-Za-z])`)
	expand := expander()
	check := func(name, pattern string) {
		for _, r := range escapes.ReplaceAllString(expand(pattern), "") {
			if unicode.IsUpper(r) {
				t.Errorf("pattern %s contains upper-case %q", name, r)
				return
			}
		}
	}
	check("lead", leadPattern)
	for _, s := range ruleSpecs() {
		check(s.name, s.pattern)
	}
}
