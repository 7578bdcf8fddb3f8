package task_test

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"

	"github.com/fetch-dev/fetch/harness"
	"github.com/fetch-dev/fetch/internal/task"
	"github.com/fetch-dev/fetch/internal/testkit"
)

// TestAskAnswersWithoutTouchingTheWorkspace: an Ask task runs the CLI
// read-only on the workspace itself; its answer is the summary, and the
// workspace (.git included) is byte-identical afterwards, with no branch
// or worktree made.
func TestAskAnswersWithoutTouchingTheWorkspace(t *testing.T) {
	k, runner := newKennel(t)
	e := newEngine(t, runner, engineOptions{})
	wsPath := e.workspace(t, k, "app")
	for _, h := range []string{"claude", "gemini", "copilot"} {
		t.Run(h, func(t *testing.T) {
			before := testkit.TreeHash(t, wsPath)
			created, err := e.Create(t.Context(), task.Request{ConversationID: "c1", Workspace: "app", Harness: h, Mode: task.Ask, Goal: "what is in this repository? [scenario:answer]"})
			if err != nil {
				t.Fatal(err)
			}
			if created.Mode != task.Ask || created.Branch != "" {
				t.Fatalf("created = %+v", created)
			}
			got := wait(t, e, created.ID)
			if got.State != task.Succeeded || !strings.Contains(got.Summary, "ANSWER: the working directory holds") || got.Error != "" {
				t.Fatalf("task = %+v", got)
			}
			if got.Mode != task.Ask || got.Branch != "" || got.Worktree != "" || len(got.Commits) != 0 || got.Patch != "" || got.Base == "" {
				t.Fatalf("an ask task made a branch, a worktree or a commit: %+v", got)
			}
			// The CLI ran in its read-only mode (fakecli records its argv
			// on stderr).
			if !strings.Contains(got.StderrTail, "fakecli: argv") {
				t.Fatalf("no argv recorded in the stderr tail %q", got.StderrTail)
			}
			for _, f := range []string{"--dangerously-skip-permissions", "--yolo", "--allow-all-tools"} {
				if strings.Contains(got.StderrTail, f) {
					t.Errorf("a read-only run was started with %s: %q", f, got.StderrTail)
				}
			}
			if after := testkit.TreeHash(t, wsPath); after != before {
				t.Fatal("the workspace changed during a read-only task")
			}
			if b := gitOut(t, wsPath, "branch", "--list", "fetch/*"); b != "" {
				t.Fatalf("branches: %q", b)
			}
		})
	}
}

// TestAskThatChangesTheWorkspaceNeedsAttention: a CLI that writes despite
// its read-only mode leaves a task that needs attention, says what
// changed, and nothing is committed.
func TestAskThatChangesTheWorkspaceNeedsAttention(t *testing.T) {
	k, runner := newKennel(t)
	e := newEngine(t, runner, engineOptions{})
	wsPath := e.workspace(t, k, "app")
	head := gitOut(t, wsPath, "rev-parse", "HEAD")
	created, err := e.Create(t.Context(), task.Request{Workspace: "app", Mode: task.Ask, Goal: "explain the layout [scenario:sneak-edit] [file:NOTES.md]"})
	if err != nil {
		t.Fatal(err)
	}
	got := wait(t, e, created.ID)
	if got.State != task.NeedsAttention || !strings.Contains(got.Error, "the workspace changed") || !strings.Contains(got.Error, "NOTES.md") {
		t.Fatalf("task = %+v", got)
	}
	if len(got.Commits) != 0 || got.Branch != "" || gitOut(t, wsPath, "rev-parse", "HEAD") != head {
		t.Fatalf("something was committed: %+v", got)
	}
	if b := gitOut(t, wsPath, "branch", "--list", "fetch/*"); b != "" {
		t.Fatalf("branches: %q", b)
	}
}

// TestAskNeedsAReadOnlyHarness: a harness without a read-only mode is
// refused for an Ask task, and nothing is created.
func TestAskNeedsAReadOnlyHarness(t *testing.T) {
	e := newEngine(t, nil, engineOptions{})
	if _, err := e.ws.Create(t.Context(), "app", ""); err != nil {
		t.Fatal(err)
	}
	for _, h := range []string{"codex", "qwen", "opencode", "cursor", "aider"} {
		_, err := e.Create(t.Context(), task.Request{Workspace: "app", Harness: h, Mode: task.Ask, Goal: "why?"})
		if !errors.Is(err, task.ErrInvalid) || !strings.Contains(err.Error(), "no read-only mode") || !strings.Contains(err.Error(), "claude") {
			t.Errorf("%s: %v, want ErrInvalid naming the harnesses that can", h, err)
		}
	}
	if _, err := e.Create(t.Context(), task.Request{Workspace: "app", Mode: "peek", Goal: "why?"}); !errors.Is(err, task.ErrInvalid) {
		t.Errorf("unknown mode: %v", err)
	}
	if ts, _ := e.List(t.Context(), task.Filter{}); len(ts) != 0 {
		t.Fatalf("tasks created: %+v", ts)
	}
}

// costRunner runs for real and reports the cost it is told per run, as a
// CLI's usage would: cumulative or per run.
type costRunner struct {
	*task.KennelRunner
	mu    sync.Mutex
	costs []float64
}

func (r *costRunner) Run(ctx context.Context, h harness.Name, t harness.Task, onEvent func(harness.Event)) (harness.Outcome, error) {
	out, err := r.KennelRunner.Run(ctx, h, t, onEvent)
	r.mu.Lock()
	out.Usage.CostUSD, r.costs = r.costs[0], r.costs[1:]
	r.mu.Unlock()
	return out, err
}

// TestResumedUsageIsNotCountedTwice: Codex reports a resumed thread's
// whole usage, so the task's cost is the last report; Claude reports each
// run's, so they add up.
func TestResumedUsageIsNotCountedTwice(t *testing.T) {
	for _, tt := range []struct {
		harness string
		want    float64
	}{{"codex", 0.03}, {"claude", 0.04}} {
		t.Run(tt.harness, func(t *testing.T) {
			k, kr := newKennel(t)
			runner := &costRunner{KennelRunner: kr, costs: []float64{0.01, 0.03}}
			e := newEngine(t, runner, engineOptions{})
			e.ws.InKennel(k) // what task.New does for a *KennelRunner
			e.workspace(t, k, "app")
			created, err := e.Create(t.Context(), task.Request{Workspace: "app", Harness: tt.harness, Goal: "update the notes [scenario:question]"})
			if err != nil {
				t.Fatal(err)
			}
			asked := wait(t, e, created.ID)
			if asked.State != task.WaitingInput || asked.CostUSD != 0.01 {
				t.Fatalf("asked = %+v", asked)
			}
			if err := e.Respond(t.Context(), asked.ID, "append please"); err != nil {
				t.Fatal(err)
			}
			got := wait(t, e, asked.ID)
			if got.State != task.Succeeded || got.CostUSD != tt.want {
				t.Fatalf("state %s, cost %v, want %v", got.State, got.CostUSD, tt.want)
			}
		})
	}
}
