package task

import (
	"context"
	"errors"
	"fmt"

	"github.com/fetch-dev/fetch/internal/mirror"
	"github.com/fetch-dev/fetch/internal/redact"
)

// SecretFinder finds secrets in text without returning them;
// *redact.Redactor implements it.
type SecretFinder interface {
	Find(text string) []redact.Finding
}

// maxNamedFindings bounds the findings a task's error names.
const maxNamedFindings = 10

// SecretFinding is a secret in a task's work: the commit, where in it,
// the line and the rule (never the secret).
type SecretFinding = redact.PatchFinding

// SecretsError: the work holds secrets, or could not be scanned whole
// (Incomplete), so nothing was committed.
type SecretsError struct {
	Findings []SecretFinding
	// Incomplete: the work is over the scan's bound; work is never taken
	// scanned in part.
	Incomplete bool
}

func (e *SecretsError) Error() string {
	if len(e.Findings) == 0 && e.Incomplete {
		return "the work was not taken (Fetch committed nothing, and nothing is in its repository): it is too large to be scanned whole for secrets, " +
			"and no work is taken unscanned. Make it smaller (fewer or smaller files, no large binaries), then commit by hand or run the task again."
	}
	return "the work was not taken (Fetch committed nothing, and nothing is in its repository): it holds what look like secrets: " +
		redact.DescribeFindings(e.Findings, maxNamedFindings) +
		". Remove them from the worktree, and from the branch's commits that hold them (messages and authors too), then commit by hand or run the task again."
}

// scanWork looks for secrets in the lines the work adds: the patch from
// the branch's base to its head (the CLI's commits and Fetch's), made in
// the kennel, without Fetch's own repository. A patch cut at its bound
// (truncated) is not taken.
func (e *Engine) scanWork(t *Task, patch string, truncated bool) error {
	if e.cfg.Secrets == nil {
		return nil
	}
	found := redact.FindInPatch(e.cfg.Secrets.Find, patch)
	if truncated {
		e.log.Warn("the work is over the patch's bound: not scanned whole, not committed", "task", t.ID)
	}
	if len(found) > 0 || truncated {
		return &SecretsError{Findings: found, Incomplete: truncated}
	}
	return nil
}

// scanStaged looks for secrets in every commit the staged work has over
// the task's base (mirror.Staged.Scan: each commit's added lines, binary
// files as text, its message, author and committer). Work that could not
// be scanned whole is refused like work with secrets.
func (e *Engine) scanStaged(ctx context.Context, t *Task, staged *mirror.Staged) error {
	if e.cfg.Secrets == nil {
		return nil
	}
	found, err := staged.Scan(ctx)
	switch {
	case errors.Is(err, mirror.ErrScanIncomplete):
		e.log.Warn("the work could not be scanned whole for secrets; not taken", "task", t.ID, "err", err)
		return &SecretsError{Incomplete: true}
	case err != nil:
		return fmt.Errorf("scan the work for secrets: %w", err)
	case len(found) > 0:
		return &SecretsError{Findings: found}
	}
	return nil
}
