package shim

import (
	"context"
	"fmt"
	"io"
	"strings"
)

// CmdBundle writes to stdout a git bundle (v2) of a branch over a commit
// its receiver has, as `git bundle create - REF ^COMMIT` does:
//
//	fetch-shim bundle --ref refs/heads/NAME --not COMMIT -- git [options...]
//
// `git bundle create` starts pack-objects as a second process; here the
// shim reads the branch's tip itself (see findGitDirs), writes the
// bundle's header, and starts `git pack-objects` alone, with COMMIT as the
// bundle's one prerequisite. A branch still at COMMIT makes no bundle
// (exit 1: there is nothing to send), as git refuses an empty bundle. A
// repository the shim does not read itself, or whose objects are not
// named by SHA-1, gets `git bundle create`.
const CmdBundle = "bundle"

// BundleArgv is the argv of the bundle command, run in the branch's work
// tree; git is the git command (program and options) it runs.
func BundleArgv(ref, not string, git []string) []string {
	return append([]string{Path, CmdBundle, "--ref", ref, "--not", not, "--"}, git...)
}

// writeBundle carries out the bundle command in dir and returns its exit
// code.
func writeBundle(ctx context.Context, git gitCmd, dir, ref, not string, stdout, stderr io.Writer) int {
	var tip string
	if d, err := findGitDirs(dir); err == nil {
		tip, _ = d.resolve(ref)
	}
	if len(tip) != 40 || len(not) != 40 {
		return git.run(ctx, dir, nil, stdout, stderr, "bundle", "create", "--quiet", "-", ref, "^"+not)
	}
	if tip == not {
		fmt.Fprintf(stderr, "fetch-shim: bundle: %s is at %s: an empty bundle\n", ref, not)
		return ExitFailed
	}
	header := fmt.Sprintf("# v2 git bundle\n-%s\n%s %s\n\n", not, tip, ref)
	if _, err := io.WriteString(stdout, header); err != nil {
		fmt.Fprintf(stderr, "fetch-shim: bundle: %v\n", err)
		return ExitFailed
	}
	revs := strings.NewReader(tip + "\n^" + not + "\n")
	return git.run(ctx, dir, revs, stdout, stderr, "pack-objects", "--stdout", "--revs", "--thin", "--delta-base-offset", "--quiet")
}
