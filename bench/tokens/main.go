// Command tokens measures what the agent's LLM calls cost in tokens
// (o200k_base, internal/tokens) for one action turn and one conversation
// turn on a small demo workspace, and how long the repository map of this
// repository takes, cold and cached:
//
//	go run ./bench/tokens [-repo DIR] [-v]
//
// For each call it prints the input tokens by part, the part before the
// request's last cache breakpoint (marked: what a provider that takes
// markers may cache), the part an earlier call of the run had already
// marked the same way (read: what such a provider would read from its
// cache, were the prefix above its minimum — 1,024 tokens for most Claude
// models — and younger than its lifetime, 5 minutes), and the rest
// (uncached). Then the fixed part of each turn's first tools call (system
// prompt with the demo's repository map, and the tool definitions) and
// the share of it before the first breakpoint.
//
// -v also prints each turn's first system prompt and the tokens of each
// tool definition it offers.
//
// The turns run through the real agent (prompt, tools, history, loop)
// with a scripted model in place of the LLM client: the bench counts the
// requests the agent builds, which are what the client would send.
package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/fetch-dev/fetch/identity"
	"github.com/fetch-dev/fetch/instincts"
	"github.com/fetch-dev/fetch/intent"
	"github.com/fetch-dev/fetch/internal/agent"
	"github.com/fetch-dev/fetch/internal/code"
	"github.com/fetch-dev/fetch/internal/llm"
	"github.com/fetch-dev/fetch/internal/store"
	"github.com/fetch-dev/fetch/internal/task"
	"github.com/fetch-dev/fetch/internal/tokens"
	"github.com/fetch-dev/fetch/internal/workspace"
)

// The demo workspace: a small Go web service.
var demo = map[string]string{
	"go.mod":    "module example.com/demo\n\ngo 1.24\n",
	"main.go":   "package main\n\nimport (\n\t\"log\"\n\t\"net/http\"\n)\n\nfunc main() {\n\tmux := http.NewServeMux()\n\tRoutes(mux)\n\tlog.Fatal(http.ListenAndServe(\":8080\", mux))\n}\n",
	"routes.go": "package main\n\nimport \"net/http\"\n\n// Routes registers the service's handlers.\nfunc Routes(mux *http.ServeMux) {\n\tmux.HandleFunc(\"GET /users\", listUsers)\n\tmux.HandleFunc(\"POST /users\", createUser)\n}\n\nfunc listUsers(w http.ResponseWriter, r *http.Request) { w.Write([]byte(\"[]\")) }\n\nfunc createUser(w http.ResponseWriter, r *http.Request) { w.WriteHeader(http.StatusCreated) }\n",
	"store.go":  "package main\n\n// User is one account.\ntype User struct {\n\tID   int\n\tName string\n}\n\n// Store keeps users in memory.\ntype Store struct{ users []User }\n\nfunc (s *Store) Add(u User) { s.users = append(s.users, u) }\n\nfunc (s *Store) All() []User { return s.users }\n",
	"README.md": "# demo\n\nA small user service.\n",
}

func main() {
	repo := flag.String("repo", ".", "repository whose map is timed")
	verbose := flag.Bool("v", false, "print each turn's system prompt and tool sizes")
	flag.Parse()
	if err := run(context.Background(), *repo, *verbose, os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "bench:", err)
		os.Exit(1)
	}
}

// script is a scripted model that records the requests it gets.
type script struct {
	steps []llm.Message
	reqs  []llm.Request
}

func (s *script) Complete(_ context.Context, req llm.Request) (llm.Response, error) {
	s.reqs = append(s.reqs, req)
	if len(s.steps) == 0 {
		return llm.Response{Message: llm.Message{Role: llm.Assistant, Content: "Done."}, FinishReason: "stop"}, nil
	}
	m := s.steps[0]
	s.steps = s.steps[1:]
	return llm.Response{Message: m, FinishReason: "stop", Usage: llm.Usage{PromptTokens: 1, CompletionTokens: 1}}, nil
}

// fakes for the registry and the engine.
type spaces struct{ root string }

func (s spaces) List(context.Context) ([]workspace.Info, error) {
	return []workspace.Info{{Name: "demo", ProjectType: "go", Branch: "main"}}, nil
}
func (s spaces) Status(context.Context, string) (workspace.Status, error) {
	return workspace.Status{Branch: "main"}, nil
}
func (s spaces) Create(context.Context, string, string) (workspace.Info, error) {
	return workspace.Info{}, nil
}
func (s spaces) Clone(context.Context, string, string) (workspace.Info, error) {
	return workspace.Info{}, nil
}
func (s spaces) Delete(context.Context, string) error { return nil }
func (s spaces) Path(name string) (string, error)     { return filepath.Join(s.root, name), nil }

type tasks struct{}

func (tasks) Create(_ context.Context, r task.Request) (task.Task, error) {
	return task.Task{ID: "t-1", Workspace: r.Workspace, Goal: r.Goal, Harness: "claude", State: task.Queued}, nil
}
func (t tasks) CreatePlan(ctx context.Context, r task.Request) (task.Task, error) {
	return t.Create(ctx, r)
}
func (tasks) Get(context.Context, string) (task.Task, error) { return task.Task{}, nil }
func (tasks) Cancel(context.Context, string) error           { return nil }
func (tasks) Respond(context.Context, string, string) error  { return nil }
func (tasks) Tell(context.Context, string, string, string, ...task.Attachment) (task.Told, error) {
	return task.Told{}, nil
}
func (tasks) Retry(context.Context, string) error       { return nil }
func (tasks) RequestShip(context.Context, string) error { return nil }
func (tasks) Active(context.Context, string) ([]task.Task, error) {
	return nil, nil
}

type running struct{}

func (running) Running(context.Context, string) (*instincts.Task, error) { return nil, nil }

func run(ctx context.Context, repo string, verbose bool, out io.Writer) error {
	// The tokenizer loads on first use; time it before the turns use it.
	start := time.Now()
	tokens.Count("warm")
	load := time.Since(start)
	dir, err := os.MkdirTemp("", "fetch-bench-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	for p, c := range demo {
		full := filepath.Join(dir, "workspaces", "demo", p)
		if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
			return err
		}
		if err := os.WriteFile(full, []byte(c), 0o644); err != nil {
			return err
		}
	}
	db, err := store.Open(ctx, filepath.Join(dir, "fetch.db"))
	if err != nil {
		return err
	}
	defer db.Close()
	ws := spaces{root: filepath.Join(dir, "workspaces")}
	var detail strings.Builder
	tw := tabwriter.NewWriter(out, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "turn\tcall\tsystem\ttools\thistory\ttool exchange\ttotal\tmarked\tread\tuncached\tmax_tokens\t")
	seen := map[string]bool{}
	var fixedLines []string
	for _, turn := range []struct {
		name, text string
		kind       intent.Kind
		steps      []llm.Message
	}{
		{"action", "Add a GET /healthz endpoint that returns 200 and a test for it", intent.Action, []llm.Message{
			{Role: llm.Assistant, ToolCalls: []llm.ToolCall{{ID: "c1", Name: "task_create", Arguments: `{"goal":"Add a GET /healthz endpoint to the demo service that returns 200, registered in Routes, with a test in routes_test.go."}`}}},
			{Role: llm.Assistant, Content: "Started task t-1: a GET /healthz endpoint returning 200, with a test."},
		}},
		{"conversation", "hi there", intent.Conversation, []llm.Message{
			{Role: llm.Assistant, Content: "Hi! What shall we work on?"},
		}},
	} {
		conv := "bench-" + turn.name
		if _, err := db.EnsureConversation(ctx, conv, conv, "owner"); err != nil {
			return err
		}
		if err := db.SetWorkspace(ctx, conv, "demo"); err != nil {
			return err
		}
		if err := db.SetAutonomy(ctx, conv, string(instincts.Autonomous)); err != nil {
			return err
		}
		model := &script{steps: turn.steps}
		a, err := agent.New(agent.Config{Store: db, LLM: model, Identity: identity.New("", slog.New(slog.DiscardHandler)),
			Workspaces: ws, Code: code.New(ws), Tasks: tasks{}, Running: running{}, Logger: slog.New(slog.DiscardHandler)})
		if err != nil {
			return err
		}
		if _, err := a.Respond(ctx, agent.Turn{ConversationID: conv, UserID: "owner", Text: turn.text, Intent: intent.Result{Kind: turn.kind}}); err != nil {
			return err
		}
		if verbose && len(model.reqs) > 0 {
			describe(&detail, turn.name, model.reqs[0])
		}
		var sum, sumRead int
		for i, req := range model.reqs {
			c := count(req)
			marks := breakpoints(req)
			marked, read := 0, 0
			for _, m := range marks {
				marked = max(marked, m.tokens)
				if seen[m.prefix] {
					read = max(read, m.tokens)
				}
			}
			for _, m := range marks {
				seen[m.prefix] = true
			}
			sum += c.total()
			sumRead += read
			fmt.Fprintf(tw, "%s\t%d\t%d\t%d\t%d\t%d\t%d\t%d\t%d\t%d\t%d\t\n", turn.name, i+1, c.system, c.tools, c.history, c.exchange, c.total(), marked, read, c.total()-read, req.MaxTokens)
			if i == 0 && len(req.Tools) > 0 && !req.NoToolCalls {
				fixed := c.system + c.tools
				cacheable := c.tools + c.fixedSystem
				fixedLines = append(fixedLines, fmt.Sprintf("%s: fixed part of a tools call %d tokens (system %d, %d tools %d; target <= 1000), %d of them (%.0f%%) before the first cache breakpoint",
					turn.name, fixed, c.system, len(req.Tools), c.tools, cacheable, 100*float64(cacheable)/float64(fixed)))
			}
		}
		fmt.Fprintf(tw, "%s\tall\t\t\t\t\t%d\t\t%d\t%d\t\t\n", turn.name, sum, sumRead, sum-sumRead)
	}
	tw.Flush()
	fmt.Fprintln(out)
	for _, l := range fixedLines {
		fmt.Fprintln(out, l)
	}
	fmt.Fprint(out, detail.String())

	fmt.Fprintf(out, "\ntokenizer load (once per process): %v\n", load.Round(time.Millisecond))
	abs, err := filepath.Abs(repo)
	if err != nil {
		return err
	}
	lib := code.New(dirPath(abs))
	for _, what := range []string{"cold", "cached"} {
		start := time.Now()
		m, err := lib.Map(ctx, "repo", 1500)
		if err != nil {
			return err
		}
		fmt.Fprintf(out, "repo map of %s, %s: %v, %d bytes, %d tokens\n", abs, what, time.Since(start).Round(100*time.Microsecond), len(m), tokens.Count(m))
	}
	return nil
}

type dirPath string

func (d dirPath) Path(string) (string, error) { return string(d), nil }

// describe writes a request's system prompt and its tools' sizes.
func describe(w io.Writer, turn string, req llm.Request) {
	fmt.Fprintf(w, "\n--- %s: system prompt of call 1\n%s\n--- %s: tools of call 1\n", turn, req.Messages[0].Content, turn)
	for _, t := range req.Tools {
		fmt.Fprintf(w, "%5d  %s\n", tokens.Count(toolJSON(t)), t.Name)
	}
}

// toolJSON is a tool definition as the OpenAI-style API carries it.
func toolJSON(t llm.Tool) string {
	b, _ := json.Marshal(map[string]any{"type": "function", "function": map[string]any{"name": t.Name, "description": t.Description, "parameters": t.Parameters}})
	return string(b)
}

// counts splits a request's tokens by part; fixedSystem is the part of
// the system prompt before its cache breakpoint.
type counts struct{ system, fixedSystem, tools, history, exchange int }

func (c counts) total() int { return c.system + c.tools + c.history + c.exchange }

func count(req llm.Request) counts {
	var c counts
	// Tool definitions as the OpenAI-style API carries them.
	if len(req.Tools) > 0 {
		defs := make([]string, len(req.Tools))
		for i, t := range req.Tools {
			defs[i] = toolJSON(t)
		}
		c.tools = tokens.Count("[" + strings.Join(defs, ",") + "]")
	}
	// The turn's own messages start at its user message (the last one).
	turnStart := 0
	for i, m := range req.Messages {
		if m.Role == llm.User {
			turnStart = i
		}
	}
	for i, m := range req.Messages {
		n := tokens.Count(m.Content)
		for _, tc := range m.ToolCalls {
			n += tokens.Count(tc.Name + tc.Arguments)
		}
		switch {
		case m.Role == llm.System:
			c.system += n
			if m.CacheUpTo > 0 {
				c.fixedSystem += tokens.Count(m.Content[:min(m.CacheUpTo, len(m.Content))])
			}
		case i <= turnStart:
			c.history += n
		default:
			c.exchange += n
		}
	}
	return c
}

// mark is a cache breakpoint of a request: the prefix it ends (tools
// first, as providers order them, then the messages) and its tokens.
type mark struct {
	prefix string
	tokens int
}

func breakpoints(req llm.Request) []mark {
	var out []mark
	var prefix strings.Builder
	n := 0
	if len(req.Tools) > 0 {
		defs := make([]string, len(req.Tools))
		for i, t := range req.Tools {
			defs[i] = toolJSON(t)
		}
		all := "[" + strings.Join(defs, ",") + "]"
		prefix.WriteString(all)
		n += tokens.Count(all)
	}
	for _, m := range req.Messages {
		prefix.WriteString("\x00" + string(m.Role) + "\x00")
		if m.CacheUpTo > 0 {
			head := m.Content[:min(m.CacheUpTo, len(m.Content))]
			out = append(out, mark{prefix: prefix.String() + head, tokens: n + tokens.Count(head)})
		}
		prefix.WriteString(m.Content)
		n += tokens.Count(m.Content)
		for _, tc := range m.ToolCalls {
			prefix.WriteString(tc.Name + tc.Arguments)
			n += tokens.Count(tc.Name + tc.Arguments)
		}
	}
	return out
}
