package testkit

import (
	"bufio"
	"bytes"
	"context"
	"crypto/rand"
	"encoding/json"
	"errors"
	"io/fs"
	"net"
	"net/http"
	"net/netip"
	"os"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/docker/docker/api/types/container"
	"github.com/docker/docker/api/types/filters"
	"github.com/docker/docker/api/types/network"
	"github.com/docker/docker/client"
	"github.com/docker/docker/pkg/stdcopy"

	"github.com/fetch-dev/fetch/kennel"
)

// LabelTestNet marks the networks tests create for the kennel's way out.
const LabelTestNet = "fetch.testkit.egress-net"

// EgressNet is a Docker network a test creates for the hosts the kennel's
// way out reaches (FETCH_EGRESS_NETWORKS): fake upstreams run on it as
// containers, under names of the test's choosing. Nothing on it leaves
// the machine.
type EgressNet struct {
	Name   string
	docker *client.Client
}

// NewEgressNet creates the network; it is removed when the test ends,
// whatever is still attached to it.
func NewEgressNet(t testing.TB) *EgressNet {
	t.Helper()
	return NewEgressNetOn(t, RequireDocker(t))
}

// NewEgressNetOn is NewEgressNet on the engine c (a second engine: its
// upstreams run there, from an image the engine already has).
func NewEgressNetOn(t testing.TB, c *client.Client) *EgressNet {
	t.Helper()
	name := "fetch-test-egress-" + strings.ToLower(rand.Text()[:10])
	if _, err := c.NetworkCreate(context.Background(), name, network.CreateOptions{
		Driver: "bridge", Labels: map[string]string{LabelTestNet: "1"},
	}); err != nil {
		t.Fatalf("testkit: create network: %v", err)
	}
	n := &EgressNet{Name: name, docker: c}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		if info, err := n.docker.NetworkInspect(ctx, name, network.InspectOptions{}); err == nil {
			for id := range info.Containers {
				_ = n.docker.NetworkDisconnect(ctx, name, id, true)
			}
		}
		if err := n.docker.NetworkRemove(ctx, name); err != nil {
			t.Logf("testkit: remove network %s: %v", name, err)
		}
	})
	return n
}

// Upstream is a fake HTTP server on an EgressNet (the scripted CLI's
// serve-upstream mode): it answers every request 200 and records it.
type Upstream struct {
	ID     string
	docker *client.Client
}

// UpstreamRequest is a request an Upstream received.
type UpstreamRequest struct {
	Method string      `json:"method"`
	Host   string      `json:"host"`
	Path   string      `json:"path"`
	Header http.Header `json:"header"`
}

// Upstream starts a fake upstream on port 8080 of the network, reachable
// there under aliases; it is removed when the test ends.
func (n *EgressNet) Upstream(t testing.TB, aliases ...string) *Upstream {
	t.Helper()
	ctx := context.Background()
	resp, err := n.docker.ContainerCreate(ctx, &container.Config{
		Image:      HarnessImage(t), // built here; a second engine must have it already
		Entrypoint: []string{"/usr/local/bin/claude", "serve-upstream"},
		Labels:     map[string]string{LabelTestNet: n.Name},
	}, &container.HostConfig{
		NetworkMode: container.NetworkMode(n.Name),
		CapDrop:     []string{"ALL"},
	}, &network.NetworkingConfig{EndpointsConfig: map[string]*network.EndpointSettings{n.Name: {Aliases: aliases}}}, nil, "")
	if err != nil {
		t.Fatalf("testkit: create upstream: %v", err)
	}
	t.Cleanup(func() {
		_ = n.docker.ContainerRemove(context.Background(), resp.ID, container.RemoveOptions{Force: true})
	})
	if err := n.docker.ContainerStart(ctx, resp.ID, container.StartOptions{}); err != nil {
		t.Fatalf("testkit: start upstream: %v", err)
	}
	return &Upstream{ID: resp.ID, docker: n.docker}
}

// Requests returns what the upstream received so far.
func (u *Upstream) Requests(t testing.TB) []UpstreamRequest {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	ex, err := u.docker.ContainerExecCreate(ctx, u.ID, container.ExecOptions{Cmd: []string{"cat", "/tmp/requests.jsonl"}, AttachStdout: true, AttachStderr: true})
	if err != nil {
		t.Fatalf("testkit: upstream requests: %v", err)
	}
	hj, err := u.docker.ContainerExecAttach(ctx, ex.ID, container.ExecAttachOptions{})
	if err != nil {
		t.Fatalf("testkit: upstream requests: %v", err)
	}
	defer hj.Close()
	var out, errOut bytes.Buffer
	_, _ = stdcopy.StdCopy(&out, &errOut, hj.Reader)
	var reqs []UpstreamRequest
	sc := bufio.NewScanner(&out)
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		var r UpstreamRequest
		if json.Unmarshal(sc.Bytes(), &r) == nil {
			reqs = append(reqs, r)
		}
	}
	return reqs
}

// BridgeGateway is the host's address on Docker's default network: what
// a container on it reaches the host machine at.
func BridgeGateway(t testing.TB) string {
	t.Helper()
	return BridgeGatewayOn(t, RequireDocker(t))
}

// BridgeGatewayOn is BridgeGateway of the engine c.
func BridgeGatewayOn(t testing.TB, c *client.Client) string {
	t.Helper()
	info, err := c.NetworkInspect(context.Background(), "bridge", network.InspectOptions{})
	if err != nil {
		t.Fatalf("testkit: inspect bridge: %v", err)
	}
	for _, c := range info.IPAM.Config {
		if c.Gateway != "" {
			return c.Gateway
		}
		// The engine's default: the subnet's first address.
		if p, err := netip.ParsePrefix(c.Subnet); err == nil && p.Addr().Is4() {
			return p.Masked().Addr().Next().String()
		}
	}
	t.Fatal("testkit: the bridge network has no gateway")
	return ""
}

// RemoveOrphanEgress removes the kennels' ways out (proxy containers and
// networks, kennel.LabelEgressData) whose data directory no longer exists
// on this machine: those of test data directories (t.TempDir) already
// removed. Test mains call it when their tests are done; a Fetch whose
// data directory exists is never touched.
func RemoveOrphanEgress() {
	removeEgress(func(dir string) bool {
		_, err := os.Stat(dir)
		return errors.Is(err, fs.ErrNotExist)
	})
}

// RemoveEgressOf removes the way out that Fetch made for the data
// directory dir, and the kennels left on its network, if any: for a
// test's t.Cleanup, so that a test's networks do not outlive it (an
// engine has a few dozen address ranges for networks).
func RemoveEgressOf(dir string) {
	removeEgress(func(d string) bool { return d == dir })
}

// removeEgress removes the ways out whose data directory is chosen.
func removeEgress(chosen func(dataDir string) bool) {
	c, err := client.NewClientWithOpts(client.FromEnv, client.WithAPIVersionNegotiation())
	if err != nil {
		return
	}
	defer c.Close()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	gone := func(labels map[string]string) bool {
		dir := labels[kennel.LabelEgressData]
		return dir != "" && chosen(dir)
	}
	f := filters.NewArgs(filters.Arg("label", kennel.LabelEgressData))
	ctrs, _ := c.ContainerList(ctx, container.ListOptions{All: true, Filters: f})
	for _, ct := range ctrs {
		if gone(ct.Labels) {
			_ = c.ContainerRemove(ctx, ct.ID, container.RemoveOptions{Force: true})
		}
	}
	nets, _ := c.NetworkList(ctx, network.ListOptions{Filters: f})
	for _, n := range nets {
		if !gone(n.Labels) {
			continue
		}
		if info, err := c.NetworkInspect(ctx, n.ID, network.InspectOptions{}); err == nil {
			for id := range info.Containers { // a kennel left on it
				_ = c.ContainerRemove(ctx, id, container.RemoveOptions{Force: true})
			}
		}
		_ = c.NetworkRemove(ctx, n.ID)
	}
}

// CountingListener listens on host (an address of this machine, such as
// its bridge address) at a free port until the test ends, and counts the
// connections it accepts: a test of a boundary that must keep them out.
func CountingListener(t testing.TB, host string) (addr string, accepted func() int) {
	t.Helper()
	ln, err := net.Listen("tcp", net.JoinHostPort(host, "0"))
	if err != nil {
		t.Fatalf("testkit: listen on %s: %v", host, err)
	}
	var n atomic.Int32
	done := make(chan struct{})
	go func() { // ends when the listener is closed at cleanup
		defer close(done)
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			n.Add(1)
			c.Close()
		}
	}()
	t.Cleanup(func() { ln.Close(); <-done })
	return ln.Addr().String(), func() int { return int(n.Load()) }
}
