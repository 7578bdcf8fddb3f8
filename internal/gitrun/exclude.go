package gitrun

import (
	"context"
	"fmt"
	"path"
	"strings"

	"github.com/fetch-dev/fetch/kennel"
)

// appendLine is the script that adds a line to a file unless it holds it
// already, after a newline when the file does not end with one. It runs
// under sh in the kennel with the file and the line as its arguments
// (nothing is interpolated into it).
const appendLine = `f=$1; line=$2
grep -qxF -- "$line" "$f" 2>/dev/null && exit 0
mkdir -p -- "$(dirname -- "$f")" || exit 1
if [ -s "$f" ] && [ -n "$(tail -c1 -- "$f")" ]; then printf '\n' >> "$f" || exit 1; fi
printf '%s\n' "$line" >> "$f"`

// Exclude adds pattern to the workspace repository's info/exclude, in the
// kennel, unless it is there already.
func (g *Git) Exclude(ctx context.Context, workspace, pattern string) error {
	out, err := g.Output(ctx, workspace, "", "rev-parse", "--git-path", "info/exclude")
	if err != nil {
		return fmt.Errorf("git exclude: %w", err)
	}
	file := strings.TrimSpace(out)
	if file == "" {
		return fmt.Errorf("git exclude: git printed no path")
	}
	if !path.IsAbs(file) {
		file = path.Join(workspace, file)
	}
	res, err := g.exec.Exec(ctx, kennel.ExecSpec{
		Workspace: workspace,
		Argv:      []string{"sh", "-c", appendLine, "sh", file, pattern},
		Env:       []string{"LC_ALL=C"},
		Timeout:   DefaultTimeout,
	}, nil)
	if err != nil {
		return fmt.Errorf("git exclude: %w", err)
	}
	if res.ExitCode != 0 {
		return fmt.Errorf("git exclude: exit code %d: %s", res.ExitCode, strings.TrimSpace(string(res.StderrTail)))
	}
	return nil
}
