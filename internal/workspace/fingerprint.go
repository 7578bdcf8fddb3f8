package workspace

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"strings"

	"github.com/fetch-dev/fetch/internal/gitrun"
)

// Fingerprint is what a read-only run must leave as it found it in a
// workspace: the commit HEAD names, the work tree's status and the content
// of its tracked changes. Taking one writes nothing to the repository: it
// runs git status and git diff with optional locks off (gitrun.Env), so the
// index is not even refreshed. Changed content of a file that was already
// untracked before is not seen.
type Fingerprint struct {
	// Head is HEAD's commit, empty in a repository without commits.
	Head string `json:"head,omitempty"`
	// Status is `git status --porcelain -z --untracked-files=all`, with
	// NULs turned into newlines; empty for a clean work tree.
	Status string `json:"status,omitempty"`
	// Diff is the SHA-256 of `git diff HEAD --binary` (tracked changes).
	Diff string `json:"diff,omitempty"`
}

// Clean reports whether the work tree had nothing uncommitted.
func (f Fingerprint) Clean() bool { return f.Status == "" }

// Fingerprint takes a workspace's fingerprint, in its kennel.
func (r *Registry) Fingerprint(ctx context.Context, name string) (Fingerprint, error) {
	p, err := r.Path(name)
	if err != nil {
		return Fingerprint{}, fmt.Errorf("workspace: fingerprint: %w", err)
	}
	if !r.isRepo(ctx, name, p) {
		return Fingerprint{}, fmt.Errorf("workspace: fingerprint %s: %w", name, ErrNotGit)
	}
	var f Fingerprint
	head, err := r.git(ctx, p, p, "rev-parse", "--verify", "--quiet", "HEAD^{commit}")
	var ge *gitrun.GitError
	switch {
	case err == nil:
		f.Head = strings.TrimSpace(head)
	case !errors.As(err, &ge):
		return Fingerprint{}, fmt.Errorf("workspace: fingerprint %s: %w", name, err)
	}
	status, err := r.git(ctx, p, p, "status", "--porcelain", "-z", "--untracked-files=all")
	if err != nil {
		return Fingerprint{}, fmt.Errorf("workspace: fingerprint %s: %w", name, err)
	}
	f.Status = strings.Trim(strings.ReplaceAll(status, "\x00", "\n"), "\n")
	if f.Head != "" && f.Status != "" {
		diff, err := r.git(ctx, p, p, "diff", "--no-ext-diff", "--no-textconv", "--binary", "HEAD", "--")
		if err != nil {
			return Fingerprint{}, fmt.Errorf("workspace: fingerprint %s: %w", name, err)
		}
		sum := sha256.Sum256([]byte(diff))
		f.Diff = hex.EncodeToString(sum[:])
	}
	return f, nil
}

// maxChangeLines bounds the status lines Changes names.
const maxChangeLines = 8

// Changes says how the work tree at after differs from f, for the owner;
// "" when it does not.
func (f Fingerprint) Changes(after Fingerprint) string {
	var parts []string
	if f.Head != after.Head {
		parts = append(parts, fmt.Sprintf("HEAD moved from %s to %s", short(f.Head), short(after.Head)))
	}
	if f.Status != after.Status || f.Diff != after.Diff {
		lines := strings.Split(after.Status, "\n")
		if after.Status == "" {
			lines = nil
		}
		if len(lines) > maxChangeLines {
			lines = append(lines[:maxChangeLines], fmt.Sprintf("… and %d more", len(lines)-maxChangeLines))
		}
		switch {
		case len(lines) == 0:
			parts = append(parts, "the uncommitted changes it had were undone")
		default:
			parts = append(parts, "git status now shows: "+strings.Join(lines, "; "))
		}
	}
	return strings.Join(parts, "; ")
}

func short(hash string) string {
	switch {
	case hash == "":
		return "(no commit)"
	case len(hash) > 12:
		return hash[:12]
	}
	return hash
}
