package journey

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"io"
	"net"
	"os/exec"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/docker/docker/api/types/container"
	"github.com/docker/docker/api/types/filters"
	"github.com/docker/docker/api/types/network"
	"github.com/docker/docker/client"

	"github.com/fetch-dev/fetch/harness"
	"github.com/fetch-dev/fetch/internal/testkit"
	"github.com/fetch-dev/fetch/kennel"
)

// TestJourneyKennelBoundary runs, through the built binary with the
// kennel's way out on (the default), a scripted Claude that does what a
// prompt-injected CLI would: it reads every environment it can, connects
// through the proxy to a host nobody allowed and to the host machine's
// bridge address, connects to that address directly, reaches a host the
// owner allowed (fetch workspace hosts add), calls its model API, and
// leaves a detached process with an empty environment behind. The fake
// API (a container on a network the test made) gets the real key; the
// kennel never had it; the refusals are in the task's log; the next run
// finds nothing of the leftover.
func TestJourneyKennelBoundary(t *testing.T) {
	t.Parallel()
	w := newWorld(t, "app")
	kennelBoundary(t, w, w.docker, false)

	// The same refusals through fetch serve, from chat: on the task's
	// page and in the metrics.
	addr := "127.0.0.1:" + freePort(t)
	w.env["FETCH_METRICS_ADDR"] = addr
	w.env["FETCH_PAGE_ADDR"] = "127.0.0.1:0"
	w.start()
	m, status := w.startTask(ownerID, "add a health endpoint to the app workspace", "probe [scenario:egress] [probe:other=http://other.fetchtest.example:8080/]", "app")
	id := taskID(t, status.Text)
	res := w.awaitResult(m, regexp.MustCompile(`Task `+id+` succeeded on app`), "the probe's result")
	link := pageButton(res.Msg)
	if link == "" {
		t.Fatalf("the result has no Task page button: %+v", res.Msg.Components)
	}
	if code, page := get(t, link); code != 200 || !strings.Contains(page, "Connection refused by the kennel") || !strings.Contains(page, "other.fetchtest.example:8080") {
		t.Errorf("the task page (%d) does not show the refusal:\n%s", code, page)
	}
	if n := sample(scrape(t, addr), "fetch_egress_refused_total", map[string]string{"reason": "not_allowed", "engine": "local"}); n < 1 {
		t.Errorf("fetch_egress_refused_total{reason=not_allowed} = %v, want the refusal counted", n)
	}
}

// TestJourneyKennelBoundaryOnAnotherEngine is the same on a second engine
// (FETCH_ENGINES): the proxy runs beside the kennels there, and the fakes
// on a network the test made there.
func TestJourneyKennelBoundaryOnAnotherEngine(t *testing.T) {
	t.Parallel()
	w := newRemoteWorld(t)
	w.start() // copies the kennel image (the fakes' image too) to the engine
	w.createWorkspace("app")
	kennelBoundary(t, w, w.docker, true)
}

// kennelBoundary is the boundary journey on the engine docker, where the
// world's workspace app lives.
func kennelBoundary(t *testing.T, w *world, docker *client.Client, remote bool) {
	nw := testkit.NewEgressNetOn(t, docker)
	api := nw.Upstream(t, "api.fetchtest.example")
	other := nw.Upstream(t, "other.fetchtest.example")
	allowed := nw.Upstream(t, "allowed.fetchtest.example")

	// The host machine's bridge address. On this machine, a server of the
	// test's own listens there: a connection reaching it would mean the
	// kennel reached the host. (A second engine's host is a container
	// the test cannot listen in; the probes' answers show it there.)
	gw := testkit.BridgeGatewayOn(t, docker)
	hostAddr := net.JoinHostPort(gw, "2375")
	reached := func() int { return 0 }
	if !remote {
		hostAddr, reached = testkit.CountingListener(t, gw)
	}

	const realKey = "sk-ant-api03-REALrealREAL0123456789abcdefABCDEF-kennelNEVERsees"
	w.env["ANTHROPIC_API_KEY"] = realKey
	w.env["ANTHROPIC_BASE_URL"] = "http://api.fetchtest.example:8080"
	w.env["FETCH_EGRESS_NETWORKS"] = nw.Name

	// run runs the binary and returns its stdout, then stdout and stderr
	// together, and its exit code.
	run := func(args ...string) (string, string, int) {
		t.Helper()
		ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
		defer cancel()
		cmd := exec.CommandContext(ctx, fetchBinary(t), args...)
		cmd.Env = w.environ()
		var out bytes.Buffer
		all := &syncBuffer{changed: make(chan struct{}, 1)} // stdout and stderr both write it
		cmd.Stdout, cmd.Stderr = io.MultiWriter(&out, all), all
		err := cmd.Run()
		if err != nil && cmd.ProcessState == nil {
			t.Fatalf("fetch %s: %v", strings.Join(args, " "), err)
		}
		return out.String(), all.String(), cmd.ProcessState.ExitCode()
	}
	fetch := func(args ...string) (string, int) {
		t.Helper()
		_, all, code := run(args...)
		return all, code
	}

	if out, code := fetch("workspace", "hosts", "app", "add", "https://allowed.fetchtest.example/x"); code != 2 || !strings.Contains(out, "want a host name") {
		t.Errorf("a URL as a host: exit %d:\n%s", code, out)
	}
	if out, code := fetch("workspace", "hosts", "app", "add", "allowed.fetchtest.example"); code != 0 || !strings.Contains(out, "allowed.fetchtest.example") {
		t.Fatalf("workspace hosts add: exit %d:\n%s", code, out)
	}
	if out, _ := fetch("workspace", "show", "app"); !strings.Contains(out, "Hosts allowed to this workspace: allowed.fetchtest.example") {
		t.Errorf("workspace show does not list the allowed host:\n%s", out)
	}

	task := func(goal string) string {
		t.Helper()
		out, all, code := run("task", "run", "--workspace", "app", "--wait", goal)
		if code != 0 || len(strings.Fields(out)) < 2 {
			t.Fatalf("fetch task run exited %d:\n%s", code, all)
		}
		log, _, _ := run("task", "log", strings.Fields(out)[1])
		return log
	}
	log := task("probe [scenario:egress]" +
		" [probe:other=http://other.fetchtest.example:8080/]" +
		" [probe:bridge-proxy=http://" + hostAddr + "/]" +
		" [probe:bridge-direct=tcp://" + hostAddr + "]" +
		" [probe:allowed=http://allowed.fetchtest.example:8080/]" +
		" [probe-leave]")

	for _, want := range []string{"probe other: 403", "probe bridge-proxy: 403", "probe bridge-direct: failed", "probe allowed: 200", "probe api: 200", "leave: alive"} {
		if !strings.Contains(log, want) {
			t.Errorf("task log lacks %q:\n%s", want, log)
		}
	}
	for _, want := range []string{"egress_refused", "other.fetchtest.example:8080", hostAddr} {
		if !strings.Contains(log, want) {
			t.Errorf("task log does not show the refusal (%q):\n%s", want, log)
		}
	}
	// (a) No environment the CLI could read held the key.
	sum := sha256.Sum256([]byte(realKey))
	if strings.Contains(log, hex.EncodeToString(sum[:8])) {
		t.Error("an environment in the kennel held the real key")
	}
	ph := sha256.Sum256([]byte(harness.Placeholder("ANTHROPIC_API_KEY", realKey)))
	if !strings.Contains(log, "env-sha256:") || !strings.Contains(log, hex.EncodeToString(ph[:8])) {
		t.Errorf("the CLI's environment did not carry the placeholder:\n%s", log)
	}
	// (b) Nothing reached the host or the host nobody allowed.
	if n := reached(); n != 0 {
		t.Errorf("the host's bridge address was reached %d times", n)
	}
	if got := other.Requests(t); len(got) != 0 {
		t.Errorf("the host nobody allowed got %d requests", len(got))
	}
	if got := allowed.Requests(t); len(got) != 1 || got[0].Header.Get("X-Api-Key") != harness.Placeholder("ANTHROPIC_API_KEY", realKey) {
		t.Errorf("the allowed host got %+v, want one request that carries only the placeholder", got)
	}
	// (c) The model API got the real key.
	reqs := api.Requests(t)
	if len(reqs) != 1 || reqs[0].Header.Get("X-Api-Key") != realKey || reqs[0].Path != "/v1/messages" {
		t.Errorf("the model API got %+v, want one /v1/messages with the real key", reqs)
	}
	// (d) The next run finds nothing of what the first left running.
	if log := task("look around [scenario:egress] [probe-trace]"); !strings.Contains(log, "trace: gone") {
		t.Errorf("the next run found the leftover:\n%s", log)
	}
}

// removeEgress removes the kennels' way out of this world's data
// directory, where it runs: its proxy container and network.
func (w *world) removeEgress(ctx context.Context) {
	f := filters.NewArgs(filters.Arg("label", kennel.LabelEgressData+"="+w.data))
	list, _ := w.docker.ContainerList(ctx, container.ListOptions{All: true, Filters: f})
	for _, c := range list {
		if err := w.docker.ContainerRemove(ctx, c.ID, container.RemoveOptions{Force: true}); err != nil {
			w.t.Logf("remove egress proxy %s: %v", c.ID, err)
		}
	}
	nets, _ := w.docker.NetworkList(ctx, network.ListOptions{Filters: f})
	for _, n := range nets {
		if err := w.docker.NetworkRemove(ctx, n.ID); err != nil {
			w.t.Logf("remove kennels' network %s: %v", n.Name, err)
		}
	}
}
