package gitrun

import (
	"errors"
	"fmt"
	"strings"
)

// GitError is a git command that exited non-zero: its arguments (URLs
// without their user information), exit code and the end of its stderr.
type GitError struct {
	Args     []string
	ExitCode int
	Stderr   string
}

func (e *GitError) Error() string {
	msg := fmt.Sprintf("git %s: exit code %d", e.Args[0], e.ExitCode)
	if e.Stderr != "" {
		msg += ": " + e.Stderr
	}
	return msg
}

// RedactArgs returns args with the user information of URL arguments
// dropped.
func RedactArgs(args []string) []string {
	out := make([]string, len(args))
	for i, a := range args {
		out[i] = RedactURL(a)
	}
	return out
}

// RedactURL drops the user information (a token, a password) of a URL;
// other strings come back as they are.
func RedactURL(a string) string {
	scheme, rest, ok := strings.Cut(a, "://")
	if !ok {
		return a
	}
	if at := strings.Index(rest, "@"); at >= 0 && at < strings.IndexAny(rest+"/", "/") {
		return scheme + "://" + rest[at+1:]
	}
	return a
}

// ErrOldShim: the kennel image's fetch-shim is older than this Fetch and
// cannot read the batch it was given.
var ErrOldShim = errors.New("the kennel image's fetch-shim is older than this Fetch: rebuild the kennel image (scripts/build-images.sh)")
