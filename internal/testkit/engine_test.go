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
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	cerrdefs "github.com/containerd/errdefs"
	"github.com/docker/docker/api/types/container"
	"github.com/docker/docker/api/types/volume"
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

func TestRemoteEngineStopKillStartKeepsItsImages(t *testing.T) {
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

	// Killed (its machine gone) rather than stopped: it comes back too.
	e.Kill(t)
	e.Kill(t) // killing a stopped engine is fine
	ctx, cancel = context.WithTimeout(t.Context(), 5*time.Second)
	_, err = c.Ping(ctx)
	cancel()
	if err == nil {
		t.Fatal("ping a killed engine succeeded")
	}
	e.Start(t)
	id = runSleeper(t, c, KennelBase)
	if out, code := execIn(t, c, id, "echo", "back"); out != "back\n" || code != 0 {
		t.Errorf("exec after a kill and a restart: %q, exit %d", out, code)
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

// TestSharedEngineUnderCIComesFromCIRun: under CI=true, without EngineEnv,
// the shared engine is not started by the test process: the failure names
// the variable.
func TestSharedEngineUnderCIComesFromCIRun(t *testing.T) {
	env := map[string]string{"CI": "true"}
	_, err := sharedEngine(t, nil, func(k string) string { return env[k] })
	if !errors.Is(err, errNoEngineEnv) || !strings.Contains(err.Error(), EngineEnv) {
		t.Errorf("sharedEngine under CI=true without %s: %v", EngineEnv, err)
	}
}

// TestEngineStartedOutsideTheTests runs the path .ci/run takes: an engine
// started for a CI shell (StartEngineIn, its owner a live process of its
// own), described by engine.json with its secrets private, used by a test
// process (AttachEngine, as RemoteEngine does with EngineEnv) that neither
// removes it nor lets the stale-engine cleanup remove it, and gone with all
// it wrote after StopEngineIn.
func TestEngineStartedOutsideTheTests(t *testing.T) {
	t.Parallel()
	local := RequireDocker(t)
	shell := liveProcess(t)
	dir := filepath.Join(t.TempDir(), "engine")

	// Refused before anything starts: an owner that is gone, a directory
	// with something in it.
	if _, err := StartEngineIn(local, dir, deadPID(t), t.Logf); err == nil {
		t.Error("StartEngineIn with a dead owner succeeded")
	}
	full := t.TempDir()
	if err := os.WriteFile(filepath.Join(full, "x"), nil, 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := StartEngineIn(local, full, shell, t.Logf); err == nil || !strings.Contains(err.Error(), "not empty") {
		t.Errorf("StartEngineIn in a non-empty directory: %v", err)
	}

	path, err := StartEngineIn(local, dir, shell, t.Logf)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { StopEngineIn(local, dir) })
	if path != filepath.Join(dir, EngineFile) {
		t.Errorf("engine.json at %s", path)
	}
	for name, want := range map[string]os.FileMode{".": 0o700, "key.pem": 0o600, "id_ed25519": 0o600, EngineFile: 0o600} {
		fi, err := os.Stat(filepath.Join(dir, name))
		if err != nil {
			t.Error(err)
		} else if fi.Mode().Perm() != want {
			t.Errorf("%s: mode %v, want %v", name, fi.Mode().Perm(), want)
		}
	}

	// A test process attaches, as RemoteEngine does with EngineEnv set.
	env := map[string]string{"CI": "true", EngineEnv: path}
	e, err := sharedEngine(t, local, func(k string) string { return env[k] })
	if err != nil {
		t.Fatal(err)
	}
	if !e.attached || e.CertPath != dir || !strings.HasPrefix(e.Host, "tcp://127.0.0.1:") {
		t.Errorf("attached engine %+v", e)
	}
	if _, err := e.Client(t).Ping(t.Context()); err != nil {
		t.Errorf("ping over TLS: %v", err)
	}
	cfg, err := e.sshConfig()
	if err != nil {
		t.Fatal(err)
	}
	if err := sshPing(e.SSHAddr, cfg); err != nil {
		t.Errorf("ssh: %v", err)
	}

	// Letting go of it, and the stale-engine cleanup of another test
	// process, leave it running: its owner lives.
	if err := e.remove(); err != nil {
		t.Fatal(err)
	}
	reapEngines(local, engineDesc{})
	info, err := local.ContainerInspect(t.Context(), e.ID)
	if err != nil || !info.State.Running {
		t.Fatalf("the CI engine after a release and a cleanup: %v (running %v)", err, err == nil && info.State.Running)
	}
	if info.Config.Labels[engineOwnerLabel] != ownerCI || info.Config.Labels[enginePIDLabel] != strconv.Itoa(shell) {
		t.Errorf("labels %v", info.Config.Labels)
	}
	if _, err := AttachEngine(local, path); err != nil {
		t.Errorf("attach again: %v", err)
	}

	if err := StopEngineIn(local, dir); err != nil {
		t.Fatal(err)
	}
	if _, err := local.ContainerInspect(t.Context(), e.ID); !cerrdefs.IsNotFound(err) {
		t.Errorf("the engine's container after stop: %v", err)
	}
	if _, err := local.VolumeInspect(t.Context(), e.volume); !cerrdefs.IsNotFound(err) {
		t.Errorf("the engine's volume after stop: %v", err)
	}
	if _, err := os.Stat(dir); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("the engine's directory after stop: %v", err)
	}
	if err := StopEngineIn(local, dir); err != nil {
		t.Errorf("stop again: %v", err)
	}
	if _, err := AttachEngine(local, path); err == nil {
		t.Error("attached to a stopped engine")
	}
}

// TestReapEnginesRemovesOnlyWhoseOwnerIsGone: the stale-engine cleanup
// removes a CI engine whose shell is gone (with its volume and the files
// in its directory) and a test engine whose process is gone, and leaves a
// CI engine whose shell lives, the engine this process attached to, and
// an engine of an owner kind it does not know. The engines are created,
// not started: the labels are what the cleanup reads.
func TestReapEnginesRemovesOnlyWhoseOwnerIsGone(t *testing.T) {
	t.Parallel()
	local := RequireDocker(t)
	if err := remoteEngineImage(local, t.Logf); err != nil {
		t.Fatal(err)
	}
	live, dead := liveProcess(t), deadPID(t)
	type fake struct {
		owner   string
		pid     int
		keep    bool // the engine this process attached to
		removed bool
	}
	fakes := map[string]fake{
		"ci-live":      {owner: ownerCI, pid: live},
		"ci-dead":      {owner: ownerCI, pid: dead, removed: true},
		"test-dead":    {owner: ownerTest, pid: dead, removed: true},
		"old-dead":     {owner: "", pid: dead, removed: true},
		"ci-attached":  {owner: ownerCI, pid: dead, keep: true},
		"unknown-dead": {owner: "someone-else", pid: dead},
	}
	hostname, _ := os.Hostname()
	// The fakes carry a mark of their own: another test process's reaper
	// (every process that attaches to an engine reaps) would take those
	// whose owner is gone, the one this test keeps among them.
	mark := "reap-test-" + randomHex(6)
	var keep engineDesc
	ids, vols, dirs := map[string]string{}, map[string]string{}, map[string]string{}
	for name, f := range fakes {
		dir := filepath.Join(t.TempDir(), name)
		if err := os.Mkdir(dir, 0o700); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, EngineFile), []byte("{}"), 0o600); err != nil {
			t.Fatal(err)
		}
		labels := map[string]string{engineLabel: mark, enginePIDLabel: strconv.Itoa(f.pid), engineHostLabel: hostname, engineDirLabel: dir}
		if f.owner != "" {
			labels[engineOwnerLabel] = f.owner
		}
		vname := "fetch-reap-test-" + randomHex(6)
		if _, err := local.VolumeCreate(t.Context(), volume.CreateOptions{Name: vname, Labels: labels}); err != nil {
			t.Fatal(err)
		}
		created, err := local.ContainerCreate(t.Context(), &container.Config{Image: RemoteEngineImage, Labels: labels}, nil, nil, nil, "")
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() {
			local.ContainerRemove(context.Background(), created.ID, container.RemoveOptions{Force: true})
			local.VolumeRemove(context.Background(), vname, true)
		})
		ids[name], vols[name], dirs[name] = created.ID, vname, dir
		if f.keep {
			keep = engineDesc{ID: created.ID, Volume: vname}
		}
	}

	reapEnginesMarked(local, keep, mark)
	for name, f := range fakes {
		_, cerr := local.ContainerInspect(t.Context(), ids[name])
		_, verr := local.VolumeInspect(t.Context(), vols[name])
		_, ferr := os.Stat(filepath.Join(dirs[name], EngineFile))
		if f.removed {
			if !cerrdefs.IsNotFound(cerr) || !cerrdefs.IsNotFound(verr) {
				t.Errorf("%s: container (%v) or volume (%v) left", name, cerr, verr)
			}
			if f.owner == ownerCI && !errors.Is(ferr, os.ErrNotExist) {
				t.Errorf("%s: its engine.json is left (%v)", name, ferr)
			}
			continue
		}
		if cerr != nil || verr != nil || ferr != nil {
			t.Errorf("%s was removed: container %v, volume %v, engine.json %v", name, cerr, verr, ferr)
		}
	}
}

// liveProcess is the pid of a process that lives until t ends.
func liveProcess(t *testing.T) int {
	t.Helper()
	cmd := exec.Command("sleep", "infinity")
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		cmd.Process.Kill()
		cmd.Wait()
	})
	return cmd.Process.Pid
}

// deadPID is the pid of a process that has ended (and been waited for).
func deadPID(t *testing.T) int {
	t.Helper()
	cmd := exec.Command("true")
	if err := cmd.Run(); err != nil {
		t.Fatal(err)
	}
	return cmd.Process.Pid
}
