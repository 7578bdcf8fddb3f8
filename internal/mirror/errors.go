package mirror

import (
	"errors"
	"fmt"
	"strings"
)

// Sentinels, for errors.Is.
var (
	// ErrInvalid: an argument (workspace name, branch, URL, ref) is not
	// acceptable.
	ErrInvalid = errors.New("invalid argument")
	// ErrTooLarge: a bundle or an output went over its bound.
	ErrTooLarge = errors.New("too large")
	// ErrScanIncomplete: a secret scan could not read all of the work
	// (its patches or commits are over the scan's bound). Nothing is
	// scanned in part: the work must not land nor be pushed.
	ErrScanIncomplete = errors.New("the work could not be scanned whole for secrets")
	// ErrBadBundle: what the kennel sent is not the bundle asked for (not
	// a bundle, another ref, a tip that is not a commit in it, objects
	// failing fsck or naming objects that are nowhere).
	ErrBadBundle = errors.New("bad bundle")
	// ErrMissingBase: the mirror lacks what a bundle was made on (a
	// prerequisite, the branch's base): a bundle of the whole history is
	// needed (StageImport).
	ErrMissingBase = errors.New("the mirror lacks the bundle's base")
	// ErrNotLinear: a branch to rebase holds a merge commit (or a root
	// commit after its base).
	ErrNotLinear = errors.New("branch history is not linear")
	// ErrNotFound: a ref or commit is not in the mirror.
	ErrNotFound = errors.New("not found")
	// ErrForceRefused: a force push to a branch outside fetch/.
	ErrForceRefused = errors.New("force push refused: only fetch/ branches may be forced")

	// ErrAuth: the remote refused the credentials (401/403).
	ErrAuth = errors.New("remote: authentication failed")
	// ErrRepoNotFound: the remote has no such repository (or hides it).
	ErrRepoNotFound = errors.New("remote: repository not found")
	// ErrNetwork: the remote could not be reached.
	ErrNetwork = errors.New("remote: network error")
	// ErrUntrusted: the remote's TLS certificate is not signed by an
	// authority git trusts (mirror.Config.CA).
	ErrUntrusted = errors.New("remote: certificate not trusted")
	// ErrRejected: the remote refused the update (a protected branch, a
	// hook).
	ErrRejected = errors.New("remote: update rejected")
	// ErrNonFastForward: the remote branch has moved on; a plain push
	// would lose its commits.
	ErrNonFastForward = errors.New("remote: not a fast-forward")
)

// ConflictError: a commit of a rebase does not apply on the new base.
// Nothing was changed.
type ConflictError struct {
	Commit string   // the commit that did not apply
	Files  []string // the conflicted paths
}

func (e *ConflictError) Error() string {
	return fmt.Sprintf("rebase: commit %.12s conflicts in %s", e.Commit, strings.Join(e.Files, ", "))
}
