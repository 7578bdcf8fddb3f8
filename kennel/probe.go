package kennel

import (
	"bytes"
	"context"
	_ "embed"
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"
)

// probeScript is what Probe runs in the container: fixed text, given the
// program names as operands.
//
//go:embed probe.sh
var probeScript string

// Limits of a probe.
const (
	// probeTimeout bounds the whole probe run (each --version is bounded
	// to 20 s inside the script).
	probeTimeout = 2 * time.Minute
	// probeRemoveTimeout bounds the removal of the probe's container.
	probeRemoveTimeout = 30 * time.Second
	// maxVersionLen bounds a program's reported version: it is output of
	// the image's programs, hostile input.
	maxVersionLen = 120
)

var programPattern = regexp.MustCompile(`^[a-z0-9][a-z0-9._-]{0,63}$`)

// ProbeSpec says what Probe looks at.
type ProbeSpec struct {
	// Workspace is an absolute host directory; the probe's container is
	// the one Exec would create for it as a workspace (same hardening,
	// same mount), and the kennel's user tries to write a file in it.
	// The container is removed afterwards.
	Workspace string
	// Programs are program names looked up on the kennel's PATH; each one
	// found is asked for its --version.
	Programs []string
}

// Program is a program Probe looked for.
type Program struct {
	Name string
	// Path is where it is in the image; "" when it is not there.
	Path string
	// Version is the first line of its --version output (sanitized,
	// bounded); it may be an error message.
	Version string
}

// ProbeResult is what a process in a kennel container saw.
type ProbeResult struct {
	UID, GID int
	// CapEff is the effective capability set (0: none).
	CapEff uint64
	// NoNewPrivs: the process cannot gain privileges (setuid binaries).
	NoNewPrivs bool
	// ReadOnlyRoot: the root filesystem refused a write.
	ReadOnlyRoot bool
	// DockerSocket is the path of a Docker socket found in the container,
	// "" when there is none.
	DockerSocket string
	// Memory and Pids are the container's cgroup limits; -1 when
	// unlimited, 0 when they could not be read.
	Memory, Pids int64
	// WorkspaceWritable: the kennel's user wrote a file in the workspace;
	// WorkspaceError is the shell's message when it could not.
	WorkspaceWritable bool
	WorkspaceError    string
	// Programs are ProbeSpec.Programs, in order.
	Programs []Program
}

// Probe runs a short-lived container for spec.Workspace with exactly the
// hardening of the kennel's containers and reports what a process in it
// sees: who it runs as, its capabilities, whether the root is read-only,
// whether a Docker socket is reachable, its limits, whether it can write
// the workspace and which programs the image holds. The container is
// removed before Probe returns. A container that cannot be made or run is
// an error (ErrImageMissing when the image is missing).
func (k *Kennel) Probe(ctx context.Context, spec ProbeSpec) (ProbeResult, error) {
	for _, p := range spec.Programs {
		if !programPattern.MatchString(p) {
			return ProbeResult{}, fmt.Errorf("kennel: probe: program name %q: %w", p, ErrInvalid)
		}
	}
	if err := checkWorkspace(spec.Workspace); err != nil {
		return ProbeResult{}, fmt.Errorf("kennel: probe: %w", err)
	}
	defer func() {
		rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), probeRemoveTimeout)
		defer cancel()
		if err := k.Remove(rctx, spec.Workspace); err != nil {
			k.log.Warn("kennel: probe container not removed", logWorkspace, spec.Workspace, logErr, err)
		}
	}()
	var out bytes.Buffer
	argv := append([]string{"sh", "-c", probeScript, "fetch-probe"}, spec.Programs...)
	res, err := k.Exec(ctx, ExecSpec{Workspace: spec.Workspace, Argv: argv, Timeout: probeTimeout}, func(s Stream, line []byte) {
		if s == Stdout {
			out.Write(line)
			out.WriteByte('\n')
		}
	})
	if err != nil {
		return ProbeResult{}, fmt.Errorf("kennel: probe: %w", err)
	}
	if res.ExitCode != 0 {
		return ProbeResult{}, fmt.Errorf("kennel: probe: exit code %d: %s", res.ExitCode, sanitize(string(res.StderrTail)))
	}
	return parseProbe(out.String(), spec.Programs), nil
}

// parseProbe reads the script's KEY=VALUE lines.
func parseProbe(out string, programs []string) ProbeResult {
	r := ProbeResult{UID: -1, GID: -1}
	found := map[string]Program{}
	for _, line := range strings.Split(out, "\n") {
		key, value, ok := strings.Cut(line, "=")
		if !ok {
			continue
		}
		switch key {
		case "uid":
			r.UID = atoi(value, -1)
		case "gid":
			r.GID = atoi(value, -1)
		case "capeff":
			r.CapEff, _ = strconv.ParseUint(value, 16, 64)
		case "nonewprivs":
			r.NoNewPrivs = value == "1"
		case "rootfs":
			r.ReadOnlyRoot = value == "ro"
		case "docker_socket":
			r.DockerSocket = value
		case "memory":
			r.Memory = limit(value)
		case "pids":
			r.Pids = limit(value)
		case "workspace":
			r.WorkspaceWritable = value == "writable"
		case "workspace_error":
			r.WorkspaceError = sanitize(value)
		case "program":
			parts := strings.SplitN(value, "\t", 3)
			if len(parts) == 3 {
				found[parts[0]] = Program{Name: parts[0], Path: sanitize(parts[1]), Version: sanitize(parts[2])}
			}
		}
	}
	for _, p := range programs {
		if f, ok := found[p]; ok {
			r.Programs = append(r.Programs, f)
		} else {
			r.Programs = append(r.Programs, Program{Name: p})
		}
	}
	return r
}

func atoi(s string, def int) int {
	n, err := strconv.Atoi(strings.TrimSpace(s))
	if err != nil {
		return def
	}
	return n
}

// limit reads a cgroup limit: "max" (v2) or a huge number (v1) is -1.
func limit(s string) int64 {
	s = strings.TrimSpace(s)
	if s == "max" {
		return -1
	}
	n, err := strconv.ParseInt(s, 10, 64)
	if err != nil {
		return 0
	}
	if n >= 1<<62 { // cgroup v1's "unlimited" is the page-rounded maximum
		return -1
	}
	return n
}

// sanitize keeps printable characters of s, bounded.
func sanitize(s string) string {
	s = strings.Map(func(r rune) rune {
		if unicode.IsPrint(r) {
			return r
		}
		return -1
	}, strings.TrimSpace(s))
	if len(s) > maxVersionLen {
		n := maxVersionLen
		for !utf8.RuneStart(s[n]) { // cut between characters, never inside one
			n--
		}
		s = s[:n] + "…"
	}
	return s
}
