package ship

import (
	"context"
	"fmt"

	"github.com/fetch-dev/fetch/internal/checks"
	"github.com/fetch-dev/fetch/internal/github"
)

// As is how one task ships, asked with it, within what its workspace
// allows.
type As string

const (
	// AsWorkspace: as the workspace ships (its mode).
	AsWorkspace As = ""
	// PushOnly ("just push it, it's a prototype"): the branch is pushed
	// and no pull request is opened.
	PushOnly As = "push"
	// AsDraft ("open it as a draft"): the pull request is opened as a
	// draft, and so never merged on its own.
	AsDraft As = "draft"
)

// ParseAs reads an As; "" is AsWorkspace, unknown words are not.
func ParseAs(s string) (As, bool) {
	switch a := As(s); a {
	case AsWorkspace, PushOnly, AsDraft:
		return a, true
	}
	return "", false
}

// Checker runs a workspace's checks on a task's branch in its kennel;
// *checks.Runner implements it.
type Checker interface {
	Run(ctx context.Context, t checks.Target) (checks.Report, error)
}

// ChecksError: a check failed and the workspace opens no pull request
// then (/checks failing hold); nothing was pushed.
type ChecksError struct {
	Workspace string
	Report    checks.Report
}

func (e *ChecksError) Error() string {
	return fmt.Sprintf("a check failed, so nothing was pushed and no pull request was opened (%s holds failing work: /checks failing draft opens a draft instead)", e.Workspace)
}

// Allows tells whether a task of workspace ws may ship as a: a local
// workspace pushes nothing, so neither a push nor a draft; the error
// names the setting that would allow it (wrapping ErrNotAllowed).
func (s *Shipper) Allows(ctx context.Context, ws string, a As) error {
	if a == AsWorkspace {
		return nil
	}
	st, err := s.settings(ctx, ws)
	if err != nil {
		return err
	}
	what := map[As]string{PushOnly: "push this task's branch", AsDraft: "open this task's pull request as a draft"}[a]
	switch {
	case st.Mode == Local:
		return fmt.Errorf("%s ships locally: its work is never pushed, so I can't %s; the owner's /ship %s pr-required would allow it: %w", ws, what, ws, ErrNotAllowed)
	case s.gh == nil || s.token == "":
		return fmt.Errorf("no GitHub token is configured, so I can't %s; set FETCH_GITHUB_TOKEN to allow it: %w", what, ErrNotAllowed)
	}
	return nil
}

// check runs the workspace's checks on w's branch; none without a
// Checker.
func (s *Shipper) check(ctx context.Context, w Work) (checks.Report, error) {
	if s.checks == nil {
		return checks.Report{}, nil
	}
	rep, err := s.checks.Run(ctx, checks.Target{Workspace: w.Workspace, Path: w.Path, Dir: w.Dir})
	if err != nil {
		return rep, fmt.Errorf("ship: run the checks: %w", err)
	}
	return rep, nil
}

// update brings an open pull request in line with a shipment: its body
// says what the checks say now, and the owner's "Ship anyway" marks a
// draft ready.
func (s *Shipper) update(ctx context.Context, r Remote, pr github.PR, w Work, rep checks.Report) (github.PR, error) {
	if err := s.gh.EditBody(ctx, r.Owner, r.Repo, pr.Number, body(w, rep)); err != nil {
		s.log.Warn("update the body of a pull request", "task", w.TaskID, "pr", pr.Number, "err", err)
	}
	if pr.Draft && w.Anyway && w.As != AsDraft {
		if err := s.gh.MarkReady(ctx, r.Owner, r.Repo, pr.Number); err != nil {
			return pr, fmt.Errorf("ship: mark #%d ready for review: %w", pr.Number, err)
		}
		pr.Draft = false
	}
	return pr, nil
}
