package workspace

import (
	"fmt"
	"regexp"
	"strings"
)

// MaxNameLen is the longest workspace name.
const MaxNameLen = 64

var namePattern = regexp.MustCompile(`^[A-Za-z0-9_-][A-Za-z0-9._-]*$`)

// ValidateName checks a workspace name: 1 to 64 letters, digits, dots,
// dashes and underscores, not starting with a dot. A name is never a path.
// The error wraps ErrInvalidName and says what is wrong.
func ValidateName(name string) error {
	switch {
	case name == "":
		return fmt.Errorf("workspace name is empty: %w", ErrInvalidName)
	case len(name) > MaxNameLen:
		return fmt.Errorf("workspace name is %d characters long, the limit is %d: %w", len(name), MaxNameLen, ErrInvalidName)
	case strings.ContainsAny(name, `/\`):
		return fmt.Errorf("workspace name %q contains a path separator (it is a name, not a path): %w", name, ErrInvalidName)
	case name[0] == '.':
		return fmt.Errorf("workspace name %q starts with a dot: %w", name, ErrInvalidName)
	case !namePattern.MatchString(name):
		return fmt.Errorf("workspace name %q may only contain letters, digits, '.', '-' and '_' (it is a name, not a path): %w", name, ErrInvalidName)
	}
	return nil
}
