package doctor

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strings"

	"github.com/fetch-dev/fetch/kennel"
)

// Prober runs a probe container (*kennel.Kennel).
type Prober interface {
	Probe(ctx context.Context, spec kennel.ProbeSpec) (kennel.ProbeResult, error)
}

// WorkspacesCheck makes a scratch workspace under root the way Fetch
// makes one (as itself, then given to the kennel's user uid:gid when Fetch
// runs as root) and checks, through p, that the kennel's user can write it
// in a kennel container, as the engine mounts it (a file written in the
// mounted workspace). The probe also looks for
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
	if os.Geteuid() == 0 {
		// Fetch builds a workspace as itself and gives the finished tree
		// to the kennel's user.
		if err := os.Lchown(dir, uid, gid); err != nil {
			c.Status, c.Detail, c.Fix = Fail, fmt.Sprintf("Fetch cannot give %s to the kennel's user (uid %d): %s", dir, uid, errText(err)), "put FETCH_WORKSPACES on a file system where root may change owners (not a root-squashed NFS share)"
			return c, nil
		}
	}
	if p == nil {
		c.Status, c.Detail = Warn, "not checked inside a kennel (no Docker engine or image)"
		c.Fix = "fix the engine and image checks, then run fetch doctor again"
		return c, nil
	}
	res, err := p.Probe(ctx, kennel.ProbeSpec{Workspace: dir, Programs: programs})
	if err != nil && strings.Contains(err.Error(), "bind source path does not exist") {
		c.Status = Fail
		c.Detail = fmt.Sprintf("the Docker engine does not see %s where Fetch does: a kennel would get no workspace", root)
		c.Fix = "run Fetch on the engine's machine, or (under Compose) mount the workspaces folder at the same absolute path in Fetch's container, as compose.yaml does"
		return c, nil
	}
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
		c.Fix = fmt.Sprintf("run Fetch as root (it gives each workspace to uid %d) or as the user the kennel runs as; rootless Docker maps uids inside to others outside, so the kennel's user cannot write your files there", uid)
		return c, &res
	}
	c.Status, c.Detail = OK, fmt.Sprintf("%s: new workspaces are writable by the kennel's user (uid %d) in its container", root, uid)
	return c, &res
}
