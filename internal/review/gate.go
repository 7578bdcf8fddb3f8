package review

import (
	"context"
	"fmt"
	"log/slog"
	"strings"
	"time"

	"github.com/fetch-dev/fetch/internal/store"
)

// Budget is what the review may spend: today's budget for Fetch's own LLM
// calls (tokens, dollars; with what the owner granted) and the daily
// budget of tasks and Fetch's calls together. Zero is no cap.
type Budget struct {
	DayTokens   int
	DayCost     float64
	TaskDayCost float64
}

// Defaults of a Gate.
const (
	DefaultTimeout   = 90 * time.Second
	DefaultMaxTokens = 2048
	// DefaultMaxDiff bounds the diff a review reads, in bytes (about
	// 30,000 tokens): a larger one is not reviewed, so it waits.
	DefaultMaxDiff = 120_000
)

// Config builds a Gate; Store and Settings are required.
type Config struct {
	Store *store.DB
	// Settings are the workspaces' limits.
	Settings *Settings
	// LLM reviews; nil when no LLM is configured (nothing is then
	// merged without the owner). Model names it in the review.
	LLM    Completer
	Model  string
	Budget Budget
	// Timeout bounds one review; MaxTokens its answer; MaxDiff the diff
	// it reads. Zero takes the defaults.
	Timeout   time.Duration
	MaxTokens int
	MaxDiff   int
	Logger    *slog.Logger
	Now       func() time.Time
}

// Gate decides whether a change may be merged without the owner: within
// its workspace's limits and approved by Fetch's own review. It keeps no
// state of its own and is safe for concurrent use.
type Gate struct {
	cfg Config
	log *slog.Logger
	now func() time.Time
}

// New builds a Gate. It sends and reads nothing.
func New(cfg Config) *Gate {
	if cfg.Timeout <= 0 {
		cfg.Timeout = DefaultTimeout
	}
	if cfg.MaxTokens <= 0 {
		cfg.MaxTokens = DefaultMaxTokens
	}
	if cfg.MaxDiff <= 0 {
		cfg.MaxDiff = DefaultMaxDiff
	}
	log := cfg.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	now := cfg.Now
	if now == nil {
		now = time.Now
	}
	return &Gate{cfg: cfg, log: log, now: now}
}

// Decision is what the gate decided of a change.
type Decision struct {
	// Merge: the change may be merged without the owner.
	Merge bool
	// Why it waits for the owner, for the owner ("" when Merge).
	Why string
	// Verdict is the review, when one was made: it is posted on the pull
	// request, approving or not.
	Verdict *Verdict
}

// Decide checks in against workspace ws's limits and, when it is within
// them, has Fetch's own LLM review it. Anything but a change within the
// limits that the review approves waits for the owner: a limit or path
// over, a review that blocks, and a review that could not be made (no
// LLM, over budget, a failure or timeout, no readable verdict).
func (g *Gate) Decide(ctx context.Context, ws string, in Input) Decision {
	lim, err := g.cfg.Settings.Limits(ctx, ws)
	if err != nil {
		g.log.Error("read a workspace's merge limits", "workspace", ws, "err", err)
		return Decision{Why: "its limits for merging on its own could not be read"}
	}
	if over := lim.Over(in.Files); len(over) > 0 {
		return Decision{Why: strings.Join(over, "; ")}
	}
	v, err := g.review(ctx, in)
	if err != nil {
		g.log.Warn("Fetch's review of a change failed; it waits for the owner", "task", in.TaskID, "err", err)
		return Decision{Why: failure(err)}
	}
	g.log.Info("Fetch reviewed a change", "task", in.TaskID, "approve", v.Approve, "findings", len(v.Findings), "cost", v.Cost)
	if !v.Approve {
		return Decision{Why: blocked(v), Verdict: &v}
	}
	return Decision{Merge: true, Verdict: &v}
}

// maxSaid bounds the blocking findings a reason names.
const maxSaid = 5

// blocked says why a verdict blocks, for the owner.
func blocked(v Verdict) string {
	b := v.Blocking()
	said := make([]string, 0, min(len(b), maxSaid))
	for i, f := range b {
		if i == maxSaid {
			said = append(said, fmt.Sprintf("and %d more (on the pull request)", len(b)-maxSaid))
			break
		}
		said = append(said, f.String())
	}
	return "Fetch's review blocks it: " + strings.Join(said, "; ")
}

// Body is the verdict as the pull request's review shows it (Markdown).
func (v Verdict) Body() string {
	var b strings.Builder
	word := "approve"
	if !v.Approve {
		word = "block"
	}
	fmt.Fprintf(&b, "**Fetch's review: %s**", word)
	if v.Model != "" {
		fmt.Fprintf(&b, " (%s", v.Model)
		if v.Cost > 0 {
			fmt.Fprintf(&b, ", $%.4f", v.Cost)
		}
		b.WriteString(")")
	}
	b.WriteString("\n\n")
	if v.Summary != "" {
		b.WriteString(v.Summary + "\n\n")
	}
	if len(v.Findings) > 0 {
		b.WriteString("**Findings**\n\n")
		for _, f := range v.Findings {
			mark := "minor"
			if f.Severity == Blocking {
				mark = "**blocking**"
			}
			fmt.Fprintf(&b, "- %s: %s\n", mark, escape(f.String()))
		}
		b.WriteString("\n")
	}
	if v.Approve {
		b.WriteString("_Within the workspace's limits and approved: Fetch merges it on its own._\n")
	} else {
		b.WriteString("_Fetch does not merge it on its own: it waits for the owner's Merge._\n")
	}
	return b.String()
}

// escape keeps a finding's text from mentioning people or teams on
// GitHub.
func escape(s string) string { return strings.ReplaceAll(s, "@", "@\u200b") }
