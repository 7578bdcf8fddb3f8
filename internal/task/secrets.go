package task

import (
	"github.com/fetch-dev/fetch/internal/redact"
)

// SecretFinder finds secrets in text without returning them;
// *redact.Redactor implements it.
type SecretFinder interface {
	Find(text string) []redact.Finding
}

// maxNamedFindings bounds the findings a task's error names.
const maxNamedFindings = 10

// SecretFinding is a secret in a task's work: where, and by which rule.
type SecretFinding = redact.PatchFinding

// SecretsError: the work holds secrets, so nothing was committed.
type SecretsError struct {
	Findings []SecretFinding
	// Truncated: the work was too large to be scanned whole.
	Truncated bool
}

func (e *SecretsError) Error() string {
	return "nothing was committed: the work holds what look like secrets: " + redact.DescribeFindings(e.Findings, maxNamedFindings) +
		". Remove them from the worktree, then commit by hand or run the task again."
}

// scanWork looks for secrets in the lines the work adds: the patch from
// the branch's base to its head (the CLI's commits and Fetch's), made in
// the kennel.
func (e *Engine) scanWork(t *Task, patch string, truncated bool) error {
	if e.cfg.Secrets == nil {
		return nil
	}
	found := redact.FindInPatch(e.cfg.Secrets.Find, patch)
	if truncated {
		e.log.Warn("the work was scanned for secrets only in part: its patch is over the output bound", "task", t.ID)
	}
	if len(found) > 0 {
		return &SecretsError{Findings: found, Truncated: truncated}
	}
	return nil
}
