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
type SecretFinding struct {
	Path string
	Line int
	Rule string
}

// SecretsError: the work holds secrets, so nothing was committed.
type SecretsError struct {
	Findings []SecretFinding
	// Truncated: the work was too large to be scanned whole.
	Truncated bool
}

func (e *SecretsError) Error() string {
	fs := make([]redact.PatchFinding, len(e.Findings))
	for i, f := range e.Findings {
		fs[i] = redact.PatchFinding(f)
	}
	return "nothing was committed: the work holds what look like secrets: " + redact.DescribeFindings(fs, maxNamedFindings) +
		". Remove them from the worktree, then commit by hand or run the task again."
}

// scanWork looks for secrets in the lines the work adds: the patch from
// the branch's base to its head (the CLI's commits and Fetch's), made in
// the kennel.
func (e *Engine) scanWork(t *Task, patch string, truncated bool) error {
	if e.cfg.Secrets == nil {
		return nil
	}
	var found []SecretFinding
	for _, f := range redact.FindInPatch(e.cfg.Secrets.Find, patch) {
		found = append(found, SecretFinding(f))
	}
	if truncated {
		e.log.Warn("the work was scanned for secrets only in part: its patch is over the output bound", "task", t.ID)
	}
	if len(found) > 0 {
		return &SecretsError{Findings: found, Truncated: truncated}
	}
	return nil
}
