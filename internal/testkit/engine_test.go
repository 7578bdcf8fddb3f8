package testkit

import (
	"bytes"
	"context"
	"crypto/ed25519"
	"crypto/rand"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/docker/docker/api/types/container"
	"github.com/docker/docker/client"
	"github.com/docker/docker/pkg/stdcopy"
	"golang.org/x/crypto/ssh"
	"golang.org/x/crypto/ssh/knownhosts"
)

// TestMain holds the shared remote engine across the package's tests, so it
// starts once and its loaded images stay; nothing is left behind after.
func TestMain(m *testing.M) {
	release := HoldRemoteEngine()
	code := m.Run()
	if err := release(); err != nil {
		fmt.Fprintln(os.Stderr, err)
		code = 1
	}
	os.Exit(code)
}

func TestRemoteEngineTLSRunsALoadedImage(t *testing.T) {
	t.Parallel()
	kennelBaseImage(t, RequireDocker(t), repoRoot(t))
	e := RemoteEngine(t)
	if !strings.HasPrefix(e.Host, "tcp://127.0.0.1:") {
		t.Errorf("Host = %q", e.Host)
	}
	for _, f := range []string{"ca.pem", "cert.pem", "key.pem"} {
		if _, err := os.Stat(filepath.Join(e.CertPath, f)); err != nil {
			t.Errorf("DOCKER_CERT_PATH: %v", err)
		}
	}
	c := e.Client(t)
	ctx := t.Context()
	if _, err := c.Ping(ctx); err != nil {
		t.Fatalf("ping over TLS: %v", err)
	}

	e.LoadImage(t, KennelBase)
	e.LoadImage(t, KennelBase) // present: nothing to do
	id := runSleeper(t, c, KennelBase)
	out, code := execIn(t, c, id, "echo", "hello")
	if out != "hello\n" || code != 0 {
		t.Errorf("exec echo hello: %q, exit %d", out, code)
	}
}

func TestRemoteEngineTLSRefusesAClientWithoutCertificate(t *testing.T) {
	t.Parallel()
	e := RemoteEngine(t)
	// The engine's CA is trusted, but no client certificate is offered.
	c, err := client.NewClientWithOpts(client.WithHost(e.Host),
		client.WithTLSClientConfig(filepath.Join(e.CertPath, "ca.pem"), "", ""),
		client.WithAPIVersionNegotiation())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if _, err := c.Ping(t.Context()); err == nil {
		t.Error("ping without a client certificate succeeded")
	}
}

func TestRemoteEngineSSHReachesTheDockerSocket(t *testing.T) {
	t.Parallel()
	e := RemoteEngine(t)
	u, err := url.Parse(e.SSHURL)
	if err != nil || u.Scheme != "ssh" || u.User.Username() != "fetch" || u.Host != e.SSHAddr {
		t.Fatalf("SSHURL = %q (%v), SSHAddr %q", e.SSHURL, err, e.SSHAddr)
	}
	check, err := knownhosts.New(e.KnownHosts)
	if err != nil {
		t.Fatal(err)
	}
	sc := sshDial(t, u.Host, &ssh.ClientConfig{
		User:            u.User.Username(),
		Auth:            []ssh.AuthMethod{ssh.PublicKeys(userSigner(t, e.SSHKey))},
		HostKeyCallback: check,
		Timeout:         10 * time.Second,
	})
	dial := func(ctx context.Context, _, _ string) (net.Conn, error) {
		return sc.DialContext(ctx, "unix", "/var/run/docker.sock")
	}

	// Plain HTTP through the forwarded socket.
	hc := &http.Client{Transport: &http.Transport{DialContext: dial}}
	defer hc.CloseIdleConnections()
	req, err := http.NewRequestWithContext(t.Context(), http.MethodGet, "http://docker/_ping", nil)
	if err != nil {
		t.Fatal(err)
	}
	resp, err := hc.Do(req)
	if err != nil {
		t.Fatalf("ping through SSH: %v", err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK || string(body) != "OK" {
		t.Errorf("ping through SSH: %s %q", resp.Status, body)
	}

	// The Docker SDK over the same connection, as the docker CLI's ssh
	// helper does it.
	c, err := client.NewClientWithOpts(client.WithHost("http://docker"), client.WithDialContext(dial), client.WithAPIVersionNegotiation())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if _, err := c.ServerVersion(t.Context()); err != nil {
		t.Errorf("docker version through SSH: %v", err)
	}
}

func TestRemoteEngineSSHRefusesAWrongHostKeyOrUserKey(t *testing.T) {
	t.Parallel()
	e := RemoteEngine(t)
	other, _, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	otherPub, err := ssh.NewPublicKey(other)
	if err != nil {
		t.Fatal(err)
	}
	wrong := filepath.Join(t.TempDir(), "known_hosts")
	line := knownhosts.Line([]string{knownhosts.Normalize(e.SSHAddr)}, otherPub) + "\n"
	if err := os.WriteFile(wrong, []byte(line), 0o600); err != nil {
		t.Fatal(err)
	}
	check, err := knownhosts.New(wrong)
	if err != nil {
		t.Fatal(err)
	}
	_, err = ssh.Dial("tcp", e.SSHAddr, &ssh.ClientConfig{
		User:            "fetch",
		Auth:            []ssh.AuthMethod{ssh.PublicKeys(userSigner(t, e.SSHKey))},
		HostKeyCallback: check,
		Timeout:         10 * time.Second,
	})
	var keyErr *knownhosts.KeyError
	if !errors.As(err, &keyErr) || len(keyErr.Want) == 0 {
		t.Errorf("dial with a wrong known host key: %v, want a key mismatch", err)
	}

	// The right host key, a stranger's user key.
	_, strangerKey, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	stranger, err := ssh.NewSignerFromKey(strangerKey)
	if err != nil {
		t.Fatal(err)
	}
	check, err = knownhosts.New(e.KnownHosts)
	if err != nil {
		t.Fatal(err)
	}
	_, err = ssh.Dial("tcp", e.SSHAddr, &ssh.ClientConfig{
		User:            "fetch",
		Auth:            []ssh.AuthMethod{ssh.PublicKeys(stranger)},
		HostKeyCallback: check,
		Timeout:         10 * time.Second,
	})
	if err == nil || !strings.Contains(err.Error(), "unable to authenticate") {
		t.Errorf("dial with an unknown user key: %v, want unable to authenticate", err)
	}
}

func TestRemoteEngineStopStartKeepsItsImages(t *testing.T) {
	t.Parallel()
	kennelBaseImage(t, RequireDocker(t), repoRoot(t))
	e := NewRemoteEngine(t)
	e.LoadImage(t, KennelBase)
	c := e.Client(t)
	host, ssh := e.Host, e.SSHURL

	e.Stop(t)
	e.Stop(t) // stopping a stopped engine is fine
	ctx, cancel := context.WithTimeout(t.Context(), 5*time.Second)
	_, err := c.Ping(ctx)
	cancel()
	if err == nil {
		t.Fatal("ping a stopped engine succeeded")
	}

	e.Start(t)
	if e.Host != host || e.SSHURL != ssh {
		t.Errorf("after a restart: %s %s, before %s %s", e.Host, e.SSHURL, host, ssh)
	}
	// The client made before the stop works again: same port, same keys.
	if _, err := c.ImageInspect(t.Context(), KennelBase); err != nil {
		t.Fatalf("after a restart: %v", err)
	}
	id := runSleeper(t, c, KennelBase)
	if out, code := execIn(t, c, id, "echo", "back"); out != "back\n" || code != 0 {
		t.Errorf("exec after a restart: %q, exit %d", out, code)
	}
}

// runSleeper starts a container of image that sleeps, removed when t ends.
func runSleeper(t *testing.T, c *client.Client, image string) string {
	t.Helper()
	ctx := t.Context()
	created, err := c.ContainerCreate(ctx, &container.Config{Image: image, Cmd: []string{"/usr/bin/tini", "--", "sleep", "infinity"}}, nil, nil, nil, "")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		c.ContainerRemove(context.Background(), created.ID, container.RemoveOptions{Force: true})
	})
	if err := c.ContainerStart(ctx, created.ID, container.StartOptions{}); err != nil {
		t.Fatal(err)
	}
	return created.ID
}

// execIn runs argv in the container and returns its output and exit code.
func execIn(t *testing.T, c *client.Client, id string, argv ...string) (string, int) {
	t.Helper()
	ctx := t.Context()
	ex, err := c.ContainerExecCreate(ctx, id, container.ExecOptions{Cmd: argv, AttachStdout: true, AttachStderr: true})
	if err != nil {
		t.Fatal(err)
	}
	att, err := c.ContainerExecAttach(ctx, ex.ID, container.ExecAttachOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer att.Close()
	var out bytes.Buffer
	if _, err := stdcopy.StdCopy(&out, &out, att.Reader); err != nil {
		t.Fatal(err)
	}
	info, err := c.ContainerExecInspect(ctx, ex.ID)
	if err != nil {
		t.Fatal(err)
	}
	return out.String(), info.ExitCode
}

func userSigner(t *testing.T, path string) ssh.Signer {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	s, err := ssh.ParsePrivateKey(b)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func sshDial(t *testing.T, addr string, cfg *ssh.ClientConfig) *ssh.Client {
	t.Helper()
	sc, err := ssh.Dial("tcp", addr, cfg)
	if err != nil {
		t.Fatalf("ssh %s: %v", addr, err)
	}
	t.Cleanup(func() { sc.Close() })
	return sc
}
