package kennel_test

import (
	"context"
	"crypto/rand"
	"errors"
	"net"
	"strings"
	"testing"

	"github.com/docker/docker/api/types/container"

	"github.com/fetch-dev/fetch/internal/testkit"
	"github.com/fetch-dev/fetch/kennel"
	"github.com/fetch-dev/fetch/kennel/egress"
)

// egressEnv is an env whose kennels sit behind their way out, on the
// networks given (none: Docker's default).
func egressEnv(t testing.TB, networks ...string) (*env, kennel.EgressRun) {
	t.Helper()
	e := newEnv(t, func(c *kennel.Config) {
		c.Egress = &kennel.Egress{ID: strings.ToLower(rand.Text()[:8]), Networks: networks}
	})
	t.Cleanup(func() {
		e.removeContainers() // the network goes once no kennel is on it
		if err := e.k.RemoveEgress(context.Background()); err != nil {
			t.Errorf("RemoveEgress: %v", err)
		}
	})
	key := []byte(rand.Text() + rand.Text())
	return e, kennel.EgressRun{Config: egress.Config{Key: key}}
}

// TestEgressDownFailsAtOnce: a way out that cannot be made (its network
// to the world is missing) fails the run before it starts, saying so.
func TestEgressDownFailsAtOnce(t *testing.T) {
	e, run := egressEnv(t, "fetch-test-no-such-network")
	id := newTaskID()
	run.Token = egress.Token(run.Config.Key, "ws", "claude", id)
	_, l, err := e.exec(t.Context(), kennel.ExecSpec{Argv: []string{"true"}, TaskID: id, Egress: &run})
	if !errors.Is(err, kennel.ErrEgressDown) || !strings.Contains(err.Error(), "the kennel's way out is down") {
		t.Fatalf("err = %v, want ErrEgressDown", err)
	}
	if len(l.out()) != 0 {
		t.Errorf("the run started: %q", l.out())
	}
}

// TestEgressNoRouteOut: a kennel behind its way out reaches neither the
// host machine (a server the test listens with on the bridge address)
// nor names outside; its run names the proxy; a proxy that went away is
// made again by the next run.
func TestEgressNoRouteOut(t *testing.T) {
	e, run := egressEnv(t)
	addr, reached := testkit.CountingListener(t, testkit.BridgeGateway(t))
	host, port, _ := net.SplitHostPort(addr)
	script := `
(exec 3<>/dev/tcp/` + host + `/` + port + `) 2>/dev/null && echo host:reached || echo host:refused
getent hosts fetch-egress >/dev/null && echo proxy:resolves || echo proxy:unknown
getent hosts deb.debian.org >/dev/null && echo outside:resolves || echo outside:unknown
(exec 3<>/dev/tcp/fetch-egress/3128) 2>/dev/null && echo proxy:reached || echo proxy:refused
case "$HTTPS_PROXY" in http://run:*@fetch-egress:3128) echo env:proxy ;; *) echo env:none ;; esac`
	for round := range 2 {
		id := newTaskID()
		run.Token = egress.Token(run.Config.Key, "ws", "claude", id)
		res, l, err := e.exec(t.Context(), kennel.ExecSpec{Argv: []string{"bash", "-c", script}, TaskID: id, Egress: &run})
		if err != nil || res.ExitCode != 0 {
			t.Fatalf("round %d: %v, exit %d", round, err, res.ExitCode)
		}
		got := strings.Join(l.out(), " ")
		if want := "host:refused proxy:resolves outside:unknown proxy:reached env:proxy"; got != want {
			t.Errorf("round %d: %q, want %q", round, got, want)
		}
		if round == 0 {
			// The proxy goes away; the next run makes it again.
			if err := e.docker.ContainerRemove(t.Context(), e.k.EgressName(), container.RemoveOptions{Force: true}); err != nil {
				t.Fatal(err)
			}
		}
	}
	if n := reached(); n != 0 {
		t.Errorf("the host was reached %d times", n)
	}
}

// TestEgressRecreatesOlderKennels: a kennel made without the way out (by
// an older Fetch, on Docker's default network) is recreated on the
// kennels' own network by the first run that has it, and the log says
// why.
func TestEgressRecreatesOlderKennels(t *testing.T) {
	e := newEnv(t)
	e.mustExec("true")
	old := e.containerID()
	e.cfg.Egress = &kennel.Egress{ID: strings.ToLower(rand.Text()[:8])}
	k2, logs := e.loggedKennel()
	t.Cleanup(func() {
		e.removeContainers()
		if err := k2.RemoveEgress(context.Background()); err != nil {
			t.Errorf("RemoveEgress: %v", err)
		}
	})
	e.execWith(k2, "true")
	now := e.containerID()
	if now == old {
		t.Fatal("the kennel of the older configuration was kept")
	}
	info, err := e.docker.ContainerInspect(t.Context(), now)
	if err != nil {
		t.Fatal(err)
	}
	if string(info.HostConfig.NetworkMode) != k2.NetworkName() {
		t.Errorf("the new kennel is on %q, want %q", info.HostConfig.NetworkMode, k2.NetworkName())
	}
	if len(logs.lines(msgRecreating)) != 1 {
		t.Errorf("want one log line saying the kennel is recreated; log:\n%s", logs.lines("kennel:"))
	}
}
