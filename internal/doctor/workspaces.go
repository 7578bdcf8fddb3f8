package doctor

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"

	"github.com/fetch-dev/fetch/kennel"
)

// Prober runs a probe container (*kennel.Kennel).
type Prober interface {
	Probe(ctx context.Context, spec kennel.ProbeSpec) (kennel.ProbeResult, error)
}

// hostGitEnv is the whole environment of the host git the check runs as
// the kennel's user, as the workspace registry runs it.
var hostGitEnv = []string{
	"PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin",
	"HOME=/nonexistent", "GIT_CONFIG_NOSYSTEM=1", "GIT_CONFIG_GLOBAL=/dev/null", "LC_ALL=C",
}

// WorkspacesCheck makes a scratch workspace under root the way Fetch
// makes one (given to the kennel's user uid:gid when Fetch runs as root),
// checks that the kennel's user can use it on the host (where git makes
// new workspaces as that user) and, through p, in a kennel container (a
// file written in the mounted workspace). The probe also looks for
// programs; its result is returned for the other checks (nil when it did
// not run). The scratch workspace is removed.
func WorkspacesCheck(ctx context.Context, root string, uid, gid int, p Prober, programs []string) (Check, *kennel.ProbeResult) {
	c := Check{Name: "workspaces"}
	fetchFix := fmt.Sprintf("make %s writable by uid %d, or set FETCH_WORKSPACES to a folder it can write", root, os.Geteuid())
	if err := os.MkdirAll(root, 0o755); err != nil {
		c.Status, c.Detail, c.Fix = Fail, "Fetch cannot make "+root+": "+errText(err), fetchFix
		return c, nil
	}
	dir, err := os.MkdirTemp(root, ".fetch-doctor-")
	if err != nil {
		c.Status, c.Detail, c.Fix = Fail, "Fetch cannot write in "+root+": "+errText(err), fetchFix
		return c, nil
	}
	defer os.RemoveAll(dir)
	if err := os.Chmod(dir, 0o755); err != nil {
		c.Status, c.Detail, c.Fix = Fail, "Fetch cannot set up "+dir+": "+errText(err), fetchFix
		return c, nil
	}
	asRoot := os.Geteuid() == 0
	if asRoot {
		if err := os.Lchown(dir, uid, gid); err != nil {
			c.Status, c.Detail, c.Fix = Fail, fmt.Sprintf("Fetch cannot give %s to the kennel's user (uid %d): %s", dir, uid, errText(err)), fetchFix
			return c, nil
		}
		if err := gitAs(ctx, dir, uid, gid); err != nil {
			c.Status = Fail
			c.Detail = fmt.Sprintf("the kennel's user (uid %d) cannot make a workspace in %s on this machine: %s", uid, root, err)
			c.Fix = fmt.Sprintf("let uid %d reach it: chmod o+x on %s and each directory above it (e.g. chmod 755 %s)", uid, root, root)
			return c, nil
		}
	}
	if p == nil {
		c.Status, c.Detail = Warn, "not checked inside a kennel (no Docker engine or image)"
		c.Fix = "fix the engine and image checks, then run fetch doctor again"
		return c, nil
	}
	res, err := p.Probe(ctx, kennel.ProbeSpec{Workspace: dir, Programs: programs})
	if err != nil {
		c.Status, c.Detail = Fail, "no kennel container could run: "+err.Error()
		c.Fix = "fix the engine and image checks, then run fetch doctor again"
		if errors.Is(err, kennel.ErrImageMissing) || errors.Is(err, kennel.ErrEngineUnavailable) {
			c.Status = Warn
		}
		return c, nil
	}
	if !res.WorkspaceWritable {
		c.Status = Fail
		c.Detail = fmt.Sprintf("the kennel's user (uid %d) cannot write a workspace under %s inside its container: %s", uid, root, or(res.WorkspaceError, "no reason given"))
		c.Fix = fmt.Sprintf("run Fetch as root (it gives each workspace to uid %d), or make FETCH_WORKSPACES a folder whose new directories uid %d can write as the engine maps it (rootless Docker maps it to a subordinate uid)", uid, uid)
		return c, &res
	}
	who := "in its container"
	if asRoot {
		who = "on this machine and in its container"
	}
	c.Status, c.Detail = OK, fmt.Sprintf("%s: new workspaces are writable by the kennel's user (uid %d) %s", root, uid, who)
	return c, &res
}

// gitAs runs `git init` in dir as uid:gid, as the registry's host git
// makes a workspace.
func gitAs(ctx context.Context, dir string, uid, gid int) error {
	cmd := exec.CommandContext(ctx, "git", "init", "-q")
	cmd.Dir = dir
	cmd.Env = hostGitEnv
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: uint32(uid), Gid: uint32(gid)}}
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Run(); err != nil {
		if msg := strings.TrimSpace(stderr.String()); msg != "" {
			return fmt.Errorf("%w: %s", err, firstLine(msg))
		}
		if errors.Is(err, os.ErrPermission) {
			// The child could not enter dir: a folder above it is closed.
			return fmt.Errorf("permission denied entering %s as uid %d (git init there: %w)", dir, uid, err)
		}
		return fmt.Errorf("git init as uid %d: %w", uid, err)
	}
	if _, err := os.Stat(filepath.Join(dir, ".git")); err != nil {
		return err
	}
	return nil
}

func firstLine(s string) string {
	s, _, _ = strings.Cut(s, "\n")
	if len(s) > 200 {
		s = s[:200] + "…"
	}
	return s
}
