package review

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"strings"
	"unicode"

	"github.com/fetch-dev/fetch/internal/llm"
	"github.com/fetch-dev/fetch/internal/store"
)

// Completer is the LLM client the review asks (*llm.Client).
type Completer interface {
	Complete(ctx context.Context, req llm.Request) (llm.Response, error)
}

// Severity says whether a finding blocks a merge.
type Severity string

const (
	Blocking Severity = "blocking"
	Minor    Severity = "minor"
)

// Finding is one thing the review found.
type Finding struct {
	Severity Severity `json:"severity"`
	File     string   `json:"file,omitempty"`
	Line     int      `json:"line,omitempty"`
	Text     string   `json:"text"`
}

// String is the finding in a line: "a.go:12: text".
func (f Finding) String() string {
	where := f.File
	if where != "" && f.Line > 0 {
		where = fmt.Sprintf("%s:%d", where, f.Line)
	}
	if where == "" {
		return f.Text
	}
	return where + ": " + f.Text
}

// Verdict is the review's answer.
type Verdict struct {
	// Approve: the verdict is approve and no finding is blocking.
	Approve  bool
	Summary  string
	Findings []Finding
	// Model is the model that reviewed; Cost what the review cost in US
	// dollars (as the provider reported it).
	Model string
	Cost  float64
}

// Blocking returns the findings that block.
func (v Verdict) Blocking() []Finding {
	var out []Finding
	for _, f := range v.Findings {
		if f.Severity == Blocking {
			out = append(out, f)
		}
	}
	return out
}

// Input is what a review reads.
type Input struct {
	// TaskID and ConversationID are whose cost the review is.
	TaskID, ConversationID string
	Goal                   string
	Files                  []File
	// Patch is the diff as git prints it (text files' hunks; binary files
	// named only); Truncated says it was cut.
	Patch     string
	Truncated bool
}

// submitTool is the one tool the review offers: its arguments are the
// verdict.
const submitTool = "submit_review"

// SubmitTool is the name of the tool the review's answer calls (for
// tests that script it).
const SubmitTool = submitTool

var submitSchema = map[string]any{
	"type": "object",
	"properties": map[string]any{
		"verdict": map[string]any{"type": "string", "enum": []string{"approve", "block"}},
		"summary": map[string]any{"type": "string"},
		"findings": map[string]any{
			"type": "array",
			"items": map[string]any{
				"type": "object",
				"properties": map[string]any{
					"severity": map[string]any{"type": "string", "enum": []string{string(Blocking), string(Minor)}},
					"file":     map[string]any{"type": "string"},
					"line":     map[string]any{"type": "integer"},
					"text":     map[string]any{"type": "string"},
				},
				"required": []string{"severity", "text"},
			},
		},
	},
	"required": []string{"verdict", "summary", "findings"},
}

// Bounds of what a review sends and keeps.
const (
	maxFindings    = 20
	maxFindingText = 400
	maxSummary     = 600
	maxGoal        = 4000
)

// review asks the LLM for a verdict on in. A failure of any kind (no
// LLM, over budget, the provider, a timeout, an answer without a readable
// verdict) is an error: never an approval.
func (g *Gate) review(ctx context.Context, in Input) (Verdict, error) {
	if g.cfg.LLM == nil {
		return Verdict{}, fmt.Errorf("review: %w", ErrNoReviewer)
	}
	if in.Truncated || len(in.Patch) > g.cfg.MaxDiff {
		return Verdict{}, fmt.Errorf("review: %d bytes or more (the review reads at most %d): %w", len(in.Patch), g.cfg.MaxDiff, ErrTooLarge)
	}
	if err := g.overBudget(ctx); err != nil {
		return Verdict{}, err
	}
	ctx, cancel := context.WithTimeout(ctx, g.cfg.Timeout)
	defer cancel()
	resp, err := g.cfg.LLM.Complete(ctx, llm.Request{
		Messages: []llm.Message{
			{Role: llm.System, Content: rubric},
			{Role: llm.User, Content: prompt(in)},
		},
		Tools: []llm.Tool{{
			Name:        submitTool,
			Description: "Submit the review's verdict and findings. Call it exactly once.",
			Parameters:  submitSchema,
		}},
		MaxTokens: g.cfg.MaxTokens,
	})
	if err != nil {
		return Verdict{}, fmt.Errorf("review: %w", err)
	}
	cost := g.record(ctx, in, resp.Usage)
	v, err := verdict(resp)
	if err != nil {
		return Verdict{}, err
	}
	v.Model, v.Cost = g.cfg.Model, cost
	return v, nil
}

// prompt is the user message: the goal, the files and the diff, fenced
// as data.
func prompt(in Input) string {
	var b strings.Builder
	b.WriteString("The owner's goal for the change:\n<goal>\n")
	b.WriteString(clip(in.Goal, maxGoal))
	b.WriteString("\n</goal>\n\nFiles changed (lines added, removed):\n")
	for _, f := range in.Files {
		if f.Binary {
			fmt.Fprintf(&b, "- %s (binary)\n", f.Path)
			continue
		}
		fmt.Fprintf(&b, "- %s +%d -%d\n", f.Path, f.Added, f.Removed)
	}
	b.WriteString("\nThe diff:\n<diff>\n")
	b.WriteString(in.Patch)
	b.WriteString("\n</diff>\n\nReview it by the rubric and call submit_review.")
	return b.String()
}

// verdict reads the submit_review call of resp.
func verdict(resp llm.Response) (Verdict, error) {
	if resp.FinishReason == "length" {
		return Verdict{}, fmt.Errorf("review: the answer was cut at its token limit: %w", ErrNoVerdict)
	}
	var call *llm.ToolCall
	for i := range resp.Message.ToolCalls {
		if resp.Message.ToolCalls[i].Name == submitTool {
			call = &resp.Message.ToolCalls[i]
			break
		}
	}
	if call == nil {
		return Verdict{}, fmt.Errorf("review: the answer did not call %s: %w", submitTool, ErrNoVerdict)
	}
	var args struct {
		Verdict  string    `json:"verdict"`
		Summary  string    `json:"summary"`
		Findings []Finding `json:"findings"`
	}
	if err := json.Unmarshal([]byte(call.Arguments), &args); err != nil {
		return Verdict{}, fmt.Errorf("review: %s's arguments: %v: %w", submitTool, err, ErrNoVerdict)
	}
	v := Verdict{Summary: clip(clean(args.Summary), maxSummary)}
	for i, f := range args.Findings {
		if i == maxFindings {
			v.Findings = append(v.Findings, Finding{Severity: Minor, Text: fmt.Sprintf("%d more findings left out", len(args.Findings)-maxFindings)})
			break
		}
		switch f.Severity {
		case Blocking, Minor:
		default:
			// What is not said to be minor counts as blocking.
			f.Severity = Blocking
		}
		f.Text = clip(clean(f.Text), maxFindingText)
		f.File = clip(clean(f.File), maxPattern)
		if f.Line < 0 {
			f.Line = 0
		}
		if f.Text == "" {
			f.Text = "(no text)"
		}
		v.Findings = append(v.Findings, f)
	}
	switch args.Verdict {
	case "approve":
		v.Approve = len(v.Blocking()) == 0
	case "block":
		if len(v.Blocking()) == 0 {
			// A block says why; one that does not still blocks.
			v.Findings = append(v.Findings, Finding{Severity: Blocking, Text: or(v.Summary, "the review blocked it without a finding")})
		}
	default:
		return Verdict{}, fmt.Errorf("review: verdict %q is neither approve nor block: %w", clip(args.Verdict, 40), ErrNoVerdict)
	}
	return v, nil
}

// record stores what the review cost, tied to its task, and returns the
// cost. A usage with a negative, NaN or infinite figure is logged and
// taken as not reported.
func (g *Gate) record(ctx context.Context, in Input, u llm.Usage) float64 {
	if u.PromptTokens < 0 || u.CompletionTokens < 0 || !(u.Cost >= 0) || math.IsInf(u.Cost, 1) {
		g.log.Warn("review usage refused: a negative, NaN or infinite figure", "task", in.TaskID, "cost", u.Cost)
		return 0
	}
	err := g.cfg.Store.AddTaskUsage(context.WithoutCancel(ctx), in.ConversationID, in.TaskID,
		store.Usage{PromptTokens: u.PromptTokens, CompletionTokens: u.CompletionTokens, Cost: u.Cost})
	if err != nil {
		g.log.Error("record the review's usage", "task", in.TaskID, "err", err)
	}
	return u.Cost
}

// overBudget is an ErrOverBudget when today's spend is at a budget the
// review would add to: Fetch's own LLM budget (tokens or dollars, with
// what the owner granted) or the daily budget of tasks and Fetch's calls.
// A spend that cannot be read is over too: a cap is not skipped.
func (g *Gate) overBudget(ctx context.Context) error {
	b := g.cfg.Budget
	day := store.Day(g.now())
	if b.DayTokens > 0 || b.DayCost > 0 {
		spent, granted, err := g.cfg.Store.Spent(ctx, day)
		switch {
		case err != nil:
			return fmt.Errorf("review: today's spend could not be read (%w): %w", err, ErrOverBudget)
		case b.DayTokens > 0 && spent.Tokens() >= b.DayTokens+granted.Tokens:
			return fmt.Errorf("review: today's %d tokens for Fetch's own calls are used up: %w", b.DayTokens+granted.Tokens, ErrOverBudget)
		case b.DayCost > 0 && spent.Cost >= b.DayCost+granted.Cost:
			return fmt.Errorf("review: today's $%.2f for Fetch's own calls is used up: %w", b.DayCost+granted.Cost, ErrOverBudget)
		}
	}
	if b.TaskDayCost > 0 {
		spent, err := g.cfg.Store.DaySpend(ctx, day)
		switch {
		case err != nil:
			return fmt.Errorf("review: today's spend could not be read (%w): %w", err, ErrOverBudget)
		case spent >= b.TaskDayCost:
			return fmt.Errorf("review: today's spend $%.4f is over the daily budget of $%.2f: %w", spent, b.TaskDayCost, ErrOverBudget)
		}
	}
	return nil
}

// failure says why a review that failed does not count, for the owner.
func failure(err error) string {
	switch {
	case errors.Is(err, ErrNoReviewer):
		return "Fetch's own review could not run: no LLM is configured (OPENROUTER_API_KEY)"
	case errors.Is(err, ErrOverBudget):
		_, why, _ := strings.Cut(err.Error(), "review: ")
		why = strings.TrimSuffix(why, ": "+ErrOverBudget.Error())
		return "Fetch's own review was not asked: " + why
	case errors.Is(err, ErrTooLarge):
		return "the diff is too large for Fetch's own review to read whole"
	case errors.Is(err, ErrNoVerdict):
		return "Fetch's own review gave no verdict it could read"
	}
	if m := llm.UserMessage(err); m != "" {
		return "Fetch's own review failed: " + strings.TrimSuffix(m, ".")
	}
	return "Fetch's own review failed (the details are in Fetch's log)"
}

// clean drops control characters (newlines become spaces) from what the
// LLM wrote.
func clean(s string) string {
	return strings.TrimSpace(strings.Map(func(r rune) rune {
		switch {
		case r == '\n' || r == '\r' || r == '\t':
			return ' '
		case unicode.IsControl(r):
			return -1
		}
		return r
	}, s))
}

func clip(s string, n int) string {
	if r := []rune(s); len(r) > n {
		return string(r[:n-1]) + "…"
	}
	return s
}

func or(s, def string) string {
	if s == "" {
		return def
	}
	return s
}
