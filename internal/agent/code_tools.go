package agent

import (
	"context"
	"errors"
	"strings"

	"github.com/fetch-dev/fetch/internal/code"
)

// Code reads the source of a workspace; *code.Library satisfies it. Its
// errors (a refused path, a missing file) are results the model reads.
type Code interface {
	Map(ctx context.Context, workspace string, budget int) (string, error)
	Outline(ctx context.Context, workspace, path string) (string, error)
	Read(ctx context.Context, workspace, path string, from, to int) (string, error)
	Search(ctx context.Context, workspace string, q code.Query) (string, error)
}

const (
	// promptMapTokens is the repository map's share of the system prompt.
	// A small workspace's whole map fits (the bench's demo does); a large
	// one gets its few most referenced files, enough to
	// aim code_outline and code_read, at about a fifth of the 1,000-token
	// target for the fixed part of a call (go run ./bench/tokens).
	promptMapTokens = 200
	// mapTokens is code_map's default budget; maxMapTokens its ceiling.
	mapTokens    = 1500
	maxMapTokens = 4000
	// codeResult bounds a code tool's result (code_read's own cap, 16 KiB,
	// plus its header).
	codeResult = 17 << 10
)

// Argument types of the code tools.
type (
	codeMapArgs struct {
		Workspace string `json:"workspace,omitempty"`
		Tokens    int    `json:"tokens,omitempty"`
	}
	codePathArgs struct {
		Path      string `json:"path"`
		Workspace string `json:"workspace,omitempty"`
	}
	codeReadArgs struct {
		Path      string `json:"path"`
		From      int    `json:"from,omitempty"`
		To        int    `json:"to,omitempty"`
		Workspace string `json:"workspace,omitempty"`
	}
	codeSearchArgs struct {
		Pattern    string   `json:"pattern"`
		Literal    bool     `json:"literal,omitempty"`
		IgnoreCase bool     `json:"ignore_case,omitempty"`
		Globs      []string `json:"globs,omitempty"`
		Workspace  string   `json:"workspace,omitempty"`
	}
)

// errNoCode: Fetch runs without code reading.
var errNoCode = errors.New("reading code is not available in this setup")

// codeWorkspace is the workspace a code tool reads.
func codeWorkspace(ctx context.Context, r *run, name string) (string, error) {
	if r.a.cfg.Code == nil {
		return "", errNoCode
	}
	ws := or(name, r.workspace)
	if ws == "" {
		return "", errors.New("no workspace given and none selected; call workspace_list, then pass workspace or select one")
	}
	if err := mustExist(ctx, r, workspaceField("workspace", name), ws); err != nil {
		return "", err
	}
	return ws, nil
}

// registerCode defines the read-only code tools.
func (a *Agent) registerCode() []error {
	return []error{
		define(a, "code_map", spec[codeMapArgs]{access: reading, survey: true, maxResult: codeResult,
			validate: func(c *codeMapArgs) error {
				trimmed(&c.Workspace)
				if c.Tokens <= 0 {
					c.Tokens = mapTokens
				}
				c.Tokens = min(c.Tokens, maxMapTokens)
				return nil
			},
			run: func(ctx context.Context, r *run, c codeMapArgs) (string, error) {
				ws, err := codeWorkspace(ctx, r, c.Workspace)
				if err != nil {
					return "", err
				}
				m, err := r.a.cfg.Code.Map(ctx, ws, c.Tokens)
				if err != nil {
					return "", err
				}
				if m == "" {
					return "The workspace has no files yet.", nil
				}
				return m, nil
			}}),
		define(a, "code_outline", spec[codePathArgs]{access: reading, maxResult: codeResult,
			validate: func(c *codePathArgs) error { trimmed(&c.Path, &c.Workspace); return nonEmpty("path", c.Path) },
			run: func(ctx context.Context, r *run, c codePathArgs) (string, error) {
				ws, err := codeWorkspace(ctx, r, c.Workspace)
				if err != nil {
					return "", err
				}
				return r.a.cfg.Code.Outline(ctx, ws, c.Path)
			}}),
		define(a, "code_read", spec[codeReadArgs]{access: reading, maxResult: codeResult,
			validate: func(c *codeReadArgs) error {
				trimmed(&c.Path, &c.Workspace)
				if c.From < 0 {
					return fieldError("from", "%d is not a line number (they start at 1)", c.From)
				}
				if c.To < 0 {
					return fieldError("to", "%d is not a line number (they start at 1)", c.To)
				}
				return nonEmpty("path", c.Path)
			},
			run: func(ctx context.Context, r *run, c codeReadArgs) (string, error) {
				ws, err := codeWorkspace(ctx, r, c.Workspace)
				if err != nil {
					return "", err
				}
				return r.a.cfg.Code.Read(ctx, ws, c.Path, c.From, c.To)
			}}),
		define(a, "code_search", spec[codeSearchArgs]{access: reading, maxResult: codeResult,
			validate: func(c *codeSearchArgs) error {
				trimmed(&c.Workspace)
				if strings.TrimSpace(c.Pattern) == "" {
					return fieldError("pattern", "must not be empty")
				}
				return nil
			},
			run: func(ctx context.Context, r *run, c codeSearchArgs) (string, error) {
				ws, err := codeWorkspace(ctx, r, c.Workspace)
				if err != nil {
					return "", err
				}
				return r.a.cfg.Code.Search(ctx, ws, code.Query{Pattern: c.Pattern, Literal: c.Literal, IgnoreCase: c.IgnoreCase, Globs: c.Globs})
			}}),
	}
}

// repoMap is the compact map of the selected workspace for the system
// prompt, "" when there is none. The map is cached by the tree's
// fingerprint, so a turn after a task (which changed files) or after a
// workspace_select gets a fresh one.
func (r *run) repoMap(ctx context.Context) string {
	if r.a.cfg.Code == nil || r.workspace == "" {
		return ""
	}
	m, err := r.a.cfg.Code.Map(ctx, r.workspace, promptMapTokens)
	if err != nil {
		r.a.log.Debug("no repository map for the prompt", "workspace", r.workspace, "err", err)
		return ""
	}
	return m
}
