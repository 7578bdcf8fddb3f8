package kennel_test

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/docker/docker/api/types/mount"

	"github.com/fetch-dev/fetch/internal/testkit"
	"github.com/fetch-dev/fetch/kennel"
)

func TestContainerIsHardened(t *testing.T) {
	e := newEnv(t)
	e.mustExec("true")
	info, err := e.docker.ContainerInspect(context.Background(), e.containerID())
	if err != nil {
		t.Fatal(err)
	}
	hc := info.HostConfig
	check := func(what string, ok bool, got any) {
		t.Helper()
		if !ok {
			t.Errorf("%s: got %v", what, got)
		}
	}
	check("user is the kennel user", info.Config.User == kennel.DefaultUser, info.Config.User)
	check("all capabilities dropped", slices.Equal(hc.CapDrop, []string{"ALL"}) && len(hc.CapAdd) == 0, hc.CapDrop)
	check("no-new-privileges", slices.ContainsFunc(hc.SecurityOpt, func(s string) bool { return strings.HasPrefix(s, "no-new-privileges") }), hc.SecurityOpt)
	check("not privileged", !hc.Privileged, hc.Privileged)
	check("read-only root", hc.ReadonlyRootfs, hc.ReadonlyRootfs)
	check("memory limit", hc.Memory == e.cfg.Memory && hc.MemorySwap == e.cfg.Memory, []int64{hc.Memory, hc.MemorySwap})
	check("CPU limit", hc.NanoCPUs == int64(e.cfg.CPUs*1e9), hc.NanoCPUs)
	check("pids limit", hc.PidsLimit != nil && *hc.PidsLimit == e.cfg.Pids, hc.PidsLimit)
	check("tmpfs /tmp and home", len(hc.Tmpfs) == 2 && hc.Tmpfs["/tmp"] != "" && hc.Tmpfs[kennel.Home] != "", hc.Tmpfs)
	check("no binds besides the mounts", len(hc.Binds) == 0, hc.Binds)
	check("host namespaces not shared", !hc.NetworkMode.IsHost() && !hc.PidMode.IsHost() && !hc.IpcMode.IsHost(), []any{hc.NetworkMode, hc.PidMode, hc.IpcMode})
	check("only the workspace is mounted, at its own path",
		len(info.Mounts) == 1 && info.Mounts[0].Type == mount.TypeBind && info.Mounts[0].Source == e.ws && info.Mounts[0].Destination == e.ws && info.Mounts[0].RW,
		info.Mounts)
	for _, m := range info.Mounts {
		check("no Docker socket", !strings.Contains(m.Source, "docker.sock") && !strings.Contains(m.Destination, "docker.sock"), m)
	}
	check("labels", info.Config.Labels[kennel.LabelInstance] == e.instance && info.Config.Labels[kennel.LabelWorkspace] == e.ws, info.Config.Labels)

	// And from inside: what the settings mean for a process.
	sh := e.script("inside.sh", `
id -u; id -g
grep -E '^(CapEff|CapPrm|CapBnd|NoNewPrivs):' /proc/self/status
touch /etc/kennel-test 2>/dev/null && echo root-writable || echo root-read-only
touch /tmp/x && echo tmp-writable
touch "$HOME/x" && echo home-writable
test -e /var/run/docker.sock || test -e /run/docker.sock && echo socket || echo no-socket
for p in git node tini ps fetch-shim; do command -v $p >/dev/null || echo "missing $p"; done
command -v npm || command -v claude || echo no-clis`)
	res, l := e.mustExec(sh)
	want := []string{
		"10001", "10001",
		"CapPrm:\t0000000000000000", "CapEff:\t0000000000000000", "CapBnd:\t0000000000000000", "NoNewPrivs:\t1",
		"root-read-only", "tmp-writable", "home-writable", "no-socket", "no-clis",
	}
	if res.ExitCode != 0 || !slices.Equal(l.out(), want) {
		t.Errorf("inside the kennel: exit %d\n got %q\nwant %q\nstderr %q", res.ExitCode, l.out(), want, res.StderrTail)
	}
}

func TestContainerCreatedOnDemandReusedAndRecreated(t *testing.T) {
	e := newEnv(t)
	if n := len(e.containers()); n != 0 {
		t.Fatalf("%d containers before the first run", n)
	}
	e.mustExec("true")
	first := e.containerID()
	e.mustExec("true")
	if got := e.containerID(); got != first || len(e.containers()) != 1 {
		t.Fatalf("second run used container %s (of %d), want %s reused", got, len(e.containers()), first)
	}

	// The container dies: the next run gets a new one.
	if err := e.docker.ContainerKill(context.Background(), first, "KILL"); err != nil {
		t.Fatal(err)
	}
	res, l := e.mustExec("echo", "alive")
	if res.ExitCode != 0 || !slices.Equal(l.out(), []string{"alive"}) {
		t.Fatalf("run after the container died: %+v %q", res, l.out())
	}
	second := e.containerID()
	if second == first || len(e.containers()) != 1 {
		t.Errorf("after the death: container %s (of %d), want a new one replacing %s", second, len(e.containers()), first)
	}

	// A restarted Fetch (new Kennel) finds and reuses it.
	k2 := e.newKennel()
	if _, err := k2.Exec(context.Background(), kennel.ExecSpec{Workspace: e.ws, Argv: []string{"true"}}, nil); err != nil {
		t.Fatal(err)
	}
	if got := e.containerID(); got != second {
		t.Errorf("restarted kennel used %s, want %s", got, second)
	}

	// Another workspace gets its own container.
	other := testkit.KennelWorkspace(t)
	if _, err := e.k.Exec(context.Background(), kennel.ExecSpec{Workspace: other, Argv: []string{"true"}}, nil); err != nil {
		t.Fatal(err)
	}
	if n := len(e.containers()); n != 2 {
		t.Errorf("%d containers for two workspaces", n)
	}

	// Remove removes it, and is idempotent.
	for range 2 {
		if err := e.k.Remove(context.Background(), other); err != nil {
			t.Errorf("remove: %v", err)
		}
	}
	if n := len(e.containers()); n != 1 {
		t.Errorf("%d containers after removing one of two", n)
	}
}

func TestContainerConcurrentFirstRuns(t *testing.T) {
	e := newEnv(t)
	errs := make(chan error, 4)
	for range 4 {
		go func() {
			_, err := e.k.Exec(context.Background(), kennel.ExecSpec{Workspace: e.ws, Argv: []string{"true"}}, nil)
			errs <- err
		}()
	}
	for range 4 {
		if err := <-errs; err != nil {
			t.Errorf("concurrent first run: %v", err)
		}
	}
	if n := len(e.containers()); n != 1 {
		t.Errorf("%d containers for one workspace", n)
	}
}

func TestMissingImageSaysHowToBuildIt(t *testing.T) {
	e := newEnv(t, func(c *kennel.Config) { c.Image = "fetch-kennel-test:does-not-exist" })
	_, err := e.k.EnsureImage(context.Background())
	if !errors.Is(err, kennel.ErrImageMissing) || !strings.Contains(err.Error(), "scripts/build-images.sh --kennel-only --cli claude --kennel-image fetch-kennel-test:does-not-exist") {
		t.Errorf("EnsureImage: %v", err)
	}
	_, err = e.k.Exec(context.Background(), kennel.ExecSpec{Workspace: e.ws, Argv: []string{"true"}}, nil)
	if !errors.Is(err, kennel.ErrImageMissing) {
		t.Errorf("Exec without the image: %v", err)
	}
}

func TestForeignContainerIsNotTouched(t *testing.T) {
	// A container of another instance on the same engine is not ours: a
	// kennel neither uses, lists nor removes it.
	e := newEnv(t)
	e.mustExec("true")
	theirs := e.containerID()
	other := newEnv(t)
	if _, err := other.k.Exec(context.Background(), kennel.ExecSpec{Workspace: e.ws, Argv: []string{"true"}}, nil); err != nil {
		t.Fatal(err)
	}
	left, err := other.k.Reconcile(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	for _, l := range left {
		if l.Container == theirs {
			t.Errorf("reconcile of another instance lists %s", theirs)
		}
	}
	if _, err := e.docker.ContainerInspect(context.Background(), theirs); err != nil {
		t.Errorf("the first instance's container: %v", err)
	}
}
