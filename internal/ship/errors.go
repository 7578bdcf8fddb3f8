package ship

import (
	"errors"
	"fmt"
	"strings"

	"github.com/fetch-dev/fetch/internal/github"
	"github.com/fetch-dev/fetch/internal/mirror"
	"github.com/fetch-dev/fetch/internal/redact"
)

var (
	// ErrNotGitHub: a URL does not name a repository on the configured
	// GitHub.
	ErrNotGitHub = errors.New("not a repository on the configured GitHub")
	// ErrNoRemote: the workspace has no GitHub repository to ship to.
	ErrNoRemote = errors.New("the workspace has no GitHub repository")
	// ErrLocal: the workspace's mode is local; nothing is pushed.
	ErrLocal = errors.New("the workspace is local: its work is never pushed")
	// ErrNothingToShip: the branch adds nothing to the latest base (its
	// work is there already).
	ErrNothingToShip = errors.New("the branch adds nothing to its base")
	// ErrNotAllowed: the workspace's mode does not allow the action.
	ErrNotAllowed = errors.New("not allowed by the workspace's shipping mode")
)

// ConflictError: the branch does not rebase onto the latest base without
// conflicts; nothing was pushed.
type ConflictError struct {
	Base  string
	Files []string
}

func (e *ConflictError) Error() string {
	return fmt.Sprintf("the work conflicts with the latest %s in %s; nothing was pushed", e.Base, strings.Join(e.Files, ", "))
}

// Finding is a secret in the work: commit, where in it, line and rule
// (never the secret).
type Finding = redact.PatchFinding

// maxNamed bounds the findings an error names.
const maxNamed = 10

// SecretsError: the branch's commits hold what look like secrets, or
// could not be scanned whole (Incomplete); nothing was pushed.
type SecretsError struct {
	Findings []Finding
	// Incomplete: the commits are over the scan's bound
	// (mirror.ErrScanIncomplete); nothing is pushed unscanned.
	Incomplete bool
}

func (e *SecretsError) Error() string {
	if len(e.Findings) == 0 && e.Incomplete {
		return "nothing was pushed: the branch's commits are too large to be scanned whole for secrets (over the scan's bound), " +
			"and no commit leaves unscanned. Make the work smaller (fewer or smaller files, no large binaries), then ship again."
	}
	return "nothing was pushed: the branch's commits hold what look like secrets: " + redact.DescribeFindings(e.Findings, maxNamed) +
		". Remove them from the branch's history (every commit, its message and author included), then ship again."
}

// Advice is a shipping failure as the owner reads it: what happened and
// what to do, in a sentence (the details are in Fetch's log).
func Advice(err error) string {
	switch {
	case errors.Is(err, ErrLocal):
		return "the workspace is local (/ship WORKSPACE pr-required changes that)."
	case errors.Is(err, ErrNoRemote):
		return "the workspace has no GitHub repository (its origin is not on the configured GitHub)."
	case errors.Is(err, github.ErrNoToken):
		return "no GitHub token is configured; set FETCH_GITHUB_TOKEN, restart Fetch and say \"/pr ship ID\"."
	case errors.Is(err, mirror.ErrAuth):
		return "GitHub refused the token for git: it is wrong or expired, or lacks Contents: read and write on this repository."
	case errors.Is(err, mirror.ErrRepoNotFound):
		return github.ErrNotFound.Error() + "."
	case errors.Is(err, mirror.ErrUntrusted):
		return github.ErrUntrusted.Error() + "; then say \"/pr ship ID\"."
	case errors.Is(err, mirror.ErrNetwork):
		return github.ErrUnavailable.Error() + " (\"/pr ship ID\" tries again)."
	case errors.Is(err, mirror.ErrRejected), errors.Is(err, mirror.ErrNonFastForward):
		return "GitHub rejected the push (a protected branch, a hook or a moved branch): look at the repository's rules."
	}
	for _, c := range []error{github.ErrAuth, github.ErrPermission, github.ErrNotFound, github.ErrRejected, github.ErrUntrusted, github.ErrUnavailable} {
		if errors.Is(err, c) {
			return github.Explain(err) + "."
		}
	}
	return err.Error()
}
