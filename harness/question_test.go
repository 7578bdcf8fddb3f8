package harness

import "testing"

func TestDetectQuestion(t *testing.T) {
	tests := []struct {
		name, final, want string
	}{
		{"empty", "", ""},
		{"summary", "Fixed `add` in calc.py. `python3 test_calc.py` now prints `ok`.", ""},
		{"marker", "I looked at the code.\nQUESTION: Floats or integers only?", "Floats or integers only?"},
		{"marker in bold", "Done reading.\n\n**QUESTION:** Which database should I use", "Which database should I use"},
		{"marker lower case", "question: keep the old API?", "keep the old API?"},
		{"marker wins over later text", "QUESTION: Which branch?\nI stopped here.", "Which branch?"},
		{"empty marker ignored", "QUESTION:\nAll done.", ""},
		{"ends in question", "Should I also update the README?", "Should I also update the README?"},
		{
			"question then request",
			"Before I change anything: should `add` also accept floats, or only integers? Please tell me which behaviour you want.",
			"Before I change anything: should `add` also accept floats, or only integers? Please tell me which behaviour you want.",
		},
		{"question too early", "Why did it fail? The test used subtraction. I fixed it. Tests pass.", ""},
		{"question in earlier paragraph", "Should I go on?\n\nNo wait, it is done. All tests pass.", ""},
		{"last paragraph only", "Intro.\n\nWhich one do you want?", "Which one do you want?"},
		{"code does not count", "Changed the regex to `a?`.", ""},
		{"fenced code does not count", "Done.\n```\nx = y ? 1 : 2?\n```", ""},
		{"quoted question", `He asked "why?"`, `He asked "why?"`},
		{"question mark inside word", "Use the ?query param now.", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := detectQuestion(tt.final); got != tt.want {
				t.Errorf("detectQuestion(%q) = %q, want %q", tt.final, got, tt.want)
			}
		})
	}
}

func TestQuestionEventFollowsSuccessOnly(t *testing.T) {
	var kinds []Kind
	s := newStream(CodexAdapter{}.NewParser(Task{}), func(ev Event) { kinds = append(kinds, ev.Kind) })
	s.line([]byte(`{"type":"item.completed","item":{"id":"item_0","type":"agent_message","text":"Which file?"}}`))
	s.line([]byte(`{"type":"turn.failed","error":{"message":"boom"}}`))
	s.flush()
	for _, k := range kinds {
		if k == KindQuestion {
			t.Fatalf("question after a failed turn: %v", kinds)
		}
	}
	if o := s.tally.outcome(end{exitCode: 1}); o.Question != "" || o.Error != "boom" {
		t.Fatalf("outcome %+v", o)
	}
}
