package workspace

import "errors"

var (
	// ErrInvalidName: the name is not a valid workspace name.
	ErrInvalidName = errors.New("invalid workspace name")
	// ErrNotFound: no workspace has that name.
	ErrNotFound = errors.New("no such workspace")
	// ErrExists: a workspace with that name exists already.
	ErrExists = errors.New("workspace exists already")
	// ErrInvalidURL: a clone URL is not an https, ssh or file URL.
	ErrInvalidURL = errors.New("invalid clone URL")
	// ErrUnknownTemplate: no template has that name.
	ErrUnknownTemplate = errors.New("unknown template")
	// ErrNotGit: the workspace is not a git repository.
	ErrNotGit = errors.New("not a git repository")
	// ErrNoKennel: the registry has no kennel to run git in (InKennel).
	ErrNoKennel = errors.New("no kennel to run git in")
	// ErrNoCommit: a repository to clone or copy has no commit yet; a
	// workspace's tasks branch from its current commit.
	ErrNoCommit = errors.New("the repository has no commit yet: commit something there first (a task branches from the workspace's current commit)")
)

// ErrUnsafe: removing the worktree would lose work that exists nowhere
// else.
var ErrUnsafe = errors.New("work would be lost")
