package progress_test

import (
	"strings"
	"testing"
	"time"

	"github.com/fetch-dev/fetch/harness"
	"github.com/fetch-dev/fetch/internal/progress"
	"github.com/fetch-dev/fetch/internal/task"
)

// TestRequestShowsHiddenCharacters: what a CLI asks to run or write is
// shown with its bidirectional overrides, zero-width and control
// characters spelled out, in the message, its closed form and the full
// text, so that the owner approves what would run.
func TestRequestShowsHiddenCharacters(t *testing.T) {
	tk := task.Task{ID: "t-1", Workspace: "app"}
	hidden := "rm -rf ~/\u202eexe.tseb\u202c #\u200b\rok\u2066"
	for _, r := range []task.CLIRequest{
		{ID: 7, TaskID: "t-1", Kind: harness.KindPermission, Tool: "Bash", Summary: hidden, Detail: hidden, Remember: "Bash(rm\u200b:*)"},
		{ID: 8, TaskID: "t-1", Kind: harness.KindPermission, Tool: "Edit", Summary: "src/\u202egnp.exe", Detail: "+ x := 1 \u2067// ok"},
		{ID: 9, TaskID: "t-1", Kind: harness.KindAsk, Summary: "Which?", Detail: "Which?\n  1. yes\u200b",
			Questions: []harness.Question{{Question: "Which?", Options: []harness.Option{{Label: "yes\u200b"}}}}},
		{ID: 10, TaskID: "t-1", Kind: harness.KindPlan, Summary: "a plan", Detail: "1. run \u202ecmd"},
	} {
		msg := progress.Request(tk, r, time.Hour)
		texts := []string{msg.Text, progress.RequestClosed(tk, r).Text, string(progress.RequestFull(r).Files[0].Data)}
		for _, a := range msg.Actions {
			texts = append(texts, a.Label, a.Send)
		}
		for _, s := range texts {
			for _, c := range []string{"\u202e", "\u202c", "\u200b", "\r", "\u2066", "\u2067"} {
				if strings.Contains(s, c) {
					t.Errorf("request %d shows %q hidden in %q", r.ID, c, s)
				}
			}
		}
		if !strings.Contains(msg.Text, "⟨U+") {
			t.Errorf("request %d: the hidden characters are not spelled out: %q", r.ID, msg.Text)
		}
	}
	msg := progress.Request(tk, task.CLIRequest{ID: 7, Kind: harness.KindPermission, Tool: "Bash", Summary: hidden, Detail: hidden}, time.Hour)
	if !strings.Contains(msg.Text, "rm -rf ~/⟨U+202E⟩exe.tseb⟨U+202C⟩ #⟨U+200B⟩⟨U+000D⟩ok⟨U+2066⟩") {
		t.Errorf("the command is not shown as it would run: %q", msg.Text)
	}
}
