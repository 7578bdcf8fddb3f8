package watch

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/fetch-dev/fetch/internal/chat"
	"github.com/fetch-dev/fetch/internal/gitrun"
)

const (
	// gitTimeout bounds one git command (a fetch over a slow network).
	gitTimeout = 2 * time.Minute
	// maxGitOutput bounds what is kept of a git command's output.
	maxGitOutput = 64 << 10
)

// git checks the upstream now and then on every interval until ctx ends.
func (w *watcher) git(ctx context.Context) {
	t := time.NewTicker(w.m.cfg.GitInterval)
	defer t.Stop()
	reported := ""
	for {
		reported = w.checkBehind(ctx, reported)
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}

// checkBehind fetches the upstream of the workspace's branch and reports
// new commits there, once per upstream commit; it returns the upstream
// commit reported ("" when not behind).
func (w *watcher) checkBehind(ctx context.Context, reported string) string {
	upstream, err := w.runGit(ctx, "rev-parse", "--abbrev-ref", "--symbolic-full-name", "@{upstream}")
	if err != nil {
		w.log.Debug("watch: no upstream to compare with", "err", err)
		return reported
	}
	if _, err := w.runGit(ctx, "fetch", "--quiet", "--no-tags", "--no-recurse-submodules", "--no-write-fetch-head"); err != nil {
		if ctx.Err() == nil {
			w.log.Warn("watch: git fetch", "err", err)
		}
		return reported
	}
	head, err := w.runGit(ctx, "rev-parse", "@{upstream}")
	if err != nil {
		w.log.Warn("watch: upstream commit", "err", err)
		return reported
	}
	count, err := w.runGit(ctx, "rev-list", "--count", "HEAD..@{upstream}")
	if err != nil {
		w.log.Warn("watch: count commits behind", "err", err)
		return reported
	}
	n, err := strconv.Atoi(count)
	if err != nil {
		w.log.Warn("watch: count commits behind", "output", count)
		return reported
	}
	if n == 0 {
		return ""
	}
	if head == reported {
		return reported
	}
	branch, _ := w.runGit(ctx, "rev-parse", "--abbrev-ref", "HEAD")
	subject, _ := w.runGit(ctx, "log", "--no-show-signature", "-1", "--format=%s", "@{upstream}")
	commits := "commits"
	if n == 1 {
		commits = "commit"
	}
	text := fmt.Sprintf("⬇️ %s: %s is %d %s behind %s (latest: %s).", w.name, branch, n, commits, upstream, subject)
	if err := w.n.Notify(ctx, w.conv, chat.Text(text)); err != nil {
		if ctx.Err() == nil {
			w.log.Error("watch: send git behind", "err", err)
		}
		return reported
	}
	return head
}

// runGit runs git with args in the workspace, in its kennel (package
// gitrun: argv only, hardened, bounded), and returns its trimmed output.
func (w *watcher) runGit(ctx context.Context, args ...string) (string, error) {
	out, err := w.m.git.Run(ctx, gitrun.Cmd{Workspace: w.dir, Args: args, MaxOutput: maxGitOutput, Timeout: gitTimeout})
	if err != nil {
		return "", err
	}
	return strings.TrimSpace(out.Stdout), nil
}
