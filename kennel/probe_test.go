package kennel_test

import (
	"errors"
	"os"
	"strings"
	"testing"

	"github.com/fetch-dev/fetch/internal/testkit"
	"github.com/fetch-dev/fetch/kennel"
)

// TestProbe: a probe container has the kennel's hardening, says which
// programs the image holds, writes the workspace, and is gone afterwards.
func TestProbe(t *testing.T) {
	e := newEnv(t, func(c *kennel.Config) { c.Image = testkit.HarnessImage(t) })
	got, err := e.k.Probe(t.Context(), kennel.ProbeSpec{Workspace: e.ws, Programs: []string{"claude", "no-such-cli"}})
	if err != nil {
		t.Fatal(err)
	}
	if got.UID != 10001 || got.GID != 10001 || got.CapEff != 0 || !got.NoNewPrivs || !got.ReadOnlyRoot || got.DockerSocket != "" {
		t.Errorf("hardening = %+v", got)
	}
	if got.Memory != e.cfg.Memory || got.Pids != e.cfg.Pids {
		t.Errorf("limits = memory %d, pids %d; want %d, %d", got.Memory, got.Pids, e.cfg.Memory, e.cfg.Pids)
	}
	if !got.WorkspaceWritable || got.WorkspaceError != "" {
		t.Errorf("workspace writable = %v (%q)", got.WorkspaceWritable, got.WorkspaceError)
	}
	if len(got.Programs) != 2 || got.Programs[0].Path != "/usr/local/bin/claude" || got.Programs[0].Version != "claude (fakecli)" || got.Programs[1].Path != "" {
		t.Errorf("programs = %+v", got.Programs)
	}
	if entries, _ := os.ReadDir(e.ws); len(entries) != 0 {
		t.Errorf("the probe left files in the workspace: %v", entries)
	}
	if c := e.containers(); len(c) != 0 {
		t.Errorf("probe containers left: %d", len(c))
	}
}

// TestProbeWorkspaceNotWritable: a workspace the kennel's user cannot
// write is reported with the shell's reason, not as an error.
func TestProbeWorkspaceNotWritable(t *testing.T) {
	e := newEnv(t)
	ws := t.TempDir() // 0700, the test's user's: not the kennel's
	got, err := e.k.Probe(t.Context(), kennel.ProbeSpec{Workspace: ws})
	if err != nil {
		t.Fatal(err)
	}
	if got.WorkspaceWritable || !strings.Contains(got.WorkspaceError, "ermission denied") {
		t.Errorf("workspace writable = %v (%q)", got.WorkspaceWritable, got.WorkspaceError)
	}
}

// TestProbeRefusesBadInput: program names are checked before anything runs.
func TestProbeRefusesBadInput(t *testing.T) {
	e := newEnv(t)
	for _, spec := range []kennel.ProbeSpec{
		{Workspace: e.ws, Programs: []string{"claude; rm -rf /"}},
		{Workspace: e.ws, Programs: []string{"-v"}},
		{Workspace: "relative"},
	} {
		if _, err := e.k.Probe(t.Context(), spec); !errors.Is(err, kennel.ErrInvalid) {
			t.Errorf("Probe(%+v) = %v, want ErrInvalid", spec, err)
		}
	}
	if c := e.containers(); len(c) != 0 {
		t.Errorf("containers made: %d", len(c))
	}
}
