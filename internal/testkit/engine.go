package testkit

import (
	"bytes"
	"context"
	"crypto/ecdsa"
	"crypto/ed25519"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/sha256"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/hex"
	"encoding/json"
	"encoding/pem"
	"errors"
	"fmt"
	"io"
	"math/big"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	cerrdefs "github.com/containerd/errdefs"
	"github.com/docker/docker/api/types/container"
	"github.com/docker/docker/api/types/filters"
	"github.com/docker/docker/api/types/mount"
	"github.com/docker/docker/api/types/volume"
	"github.com/docker/docker/client"
	"github.com/docker/docker/pkg/stdcopy"
	"github.com/docker/go-connections/nat"
	"golang.org/x/crypto/ssh"
	"golang.org/x/crypto/ssh/knownhosts"
)

// RemoteEngineImage is the image of the remote engine;
// scripts/remote-engine.sh builds it from Debian packages when it is missing
// or was built by another version of the script.
const RemoteEngineImage = "fetch-remote-engine:bookworm"

// Labels on the remote engine's container and volume; the owner, pid and
// host say which process owns them, so a later run removes what a killed one
// left.
const (
	engineLabel = "fetch.testkit.remote-engine"
	// engineOwnerLabel says what the pid is: ownerTest, the test process
	// that started the engine, or ownerCI, the shell (.ci/run) that started
	// it with fetch-test-engine for every test process of its run.
	engineOwnerLabel = "fetch.testkit.remote-engine.owner"
	enginePIDLabel   = "fetch.testkit.remote-engine.pid"
	engineHostLabel  = "fetch.testkit.remote-engine.host"
	// engineDirLabel is the directory with the engine's keys on this host.
	engineDirLabel = "fetch.testkit.remote-engine.dir"
	// engineScriptLabel carries the hash of the script that built the image
	// (set by scripts/remote-engine.sh).
	engineScriptLabel = "fetch.remote-engine.script"
)

// Owners of an engine (engineOwnerLabel).
const (
	ownerTest = "test"
	ownerCI   = "ci"
)

// EngineEnv names the engine.json of a remote engine started outside the
// test process (fetch-test-engine start, which .ci/run runs): RemoteEngine
// uses that engine instead of starting one.
const EngineEnv = "FETCH_TEST_ENGINE"

// EngineFile is the name of the description StartEngineIn writes in its
// directory.
const EngineFile = "engine.json"

const (
	// engineStartTimeout bounds the wait for dockerd and sshd to answer.
	engineStartTimeout = 90 * time.Second
	// engineStopTimeout is the grace the container gets on stop: dockerd
	// stops its own containers first (its shutdown timeout is 15s).
	engineStopTimeout = 30
	// engineOpTimeout bounds one call to the local engine.
	engineOpTimeout = 60 * time.Second
	// engineUser is the SSH user, in the docker group.
	engineUser = "fetch"
	// engineConfDir is where the container's entrypoint finds its keys.
	engineConfDir = "/etc/fetch-engine"
)

// Engine is a second, real Docker engine for tests: dockerd and sshd in a
// container on the local engine (capabilities instead of --privileged,
// /var/lib/docker on a named volume), reachable on 127.0.0.1 over TLS
// (--tlsverify, certificates made for the test) and over SSH (user fetch,
// key only). Its ports stay the same across Stop and Start.
type Engine struct {
	// ID is the engine container's id on the local engine.
	ID string
	// Host is dockerd's TLS endpoint, tcp://127.0.0.1:PORT (DOCKER_HOST).
	Host string
	// CertPath is a directory with ca.pem, cert.pem and key.pem, the client's
	// TLS material (DOCKER_CERT_PATH).
	CertPath string
	// SSHURL is ssh://fetch@127.0.0.1:PORT; the user may use the engine's
	// unix socket /var/run/docker.sock.
	SSHURL string
	// SSHAddr is the SSH server's host:port.
	SSHAddr string
	// SSHKey is the path of the user's private key (OpenSSH format, 0600).
	SSHKey string
	// KnownHosts is the path of a known_hosts file holding the engine's
	// host key for SSHAddr.
	KnownHosts string

	local  *client.Client
	volume string
	shared bool
	// attached: another process started the engine (EngineEnv) and owns
	// it; this one never stops or removes it.
	attached bool
	// owner is who the engine's labels name as its owner.
	owner engineOwner
	// ownDir: CertPath is the engine's own temporary directory, removed
	// with it.
	ownDir bool

	// mu serializes Stop and Start.
	mu sync.Mutex
}

// engineOwner is the process that owns an engine: the one that removes it
// when done, and whose absence lets reapEngines remove it.
type engineOwner struct {
	kind string // ownerTest or ownerCI
	pid  int
}

// shared is the engine that RemoteEngine hands out, with the number of
// holders (tests, and a TestMain's HoldRemoteEngine). Test helpers are the
// one place that keeps package state: the engine outlives each test.
var shared struct {
	mu   sync.Mutex
	eng  *Engine
	refs int
}

// RemoteEngine returns the remote engine shared by the tests of this test
// binary. When EngineEnv names an engine.json (.ci/run sets it, after
// starting the engine with fetch-test-engine), that engine is used: it must
// answer, and it is never stopped or removed here, so the test binaries of
// one run share it. Without EngineEnv the first caller starts one, and when
// the last holder lets go its container and volume are removed (a later
// caller starts a new one); under CI=true a missing EngineEnv is a failure,
// so that CI proves .ci/run started the engine. A test holds it until its
// cleanup; to keep one engine, and the images loaded into it, across all of
// a package's tests, hold it in TestMain with HoldRemoteEngine.
//
// Tests must not Stop it, nor cut its network for everyone: other packages'
// tests use it at the same time. A test that stops and starts an engine
// uses NewRemoteEngine for one of its own; one that cuts the network puts a
// TCPProxy of its own in front of this one. Skips without Docker, except
// under CI=true (RequireDocker).
func RemoteEngine(t testing.TB) *Engine {
	t.Helper()
	RequireDocker(t)
	shared.mu.Lock()
	defer shared.mu.Unlock()
	if shared.eng == nil {
		// Not t's client: the engine may outlive t.
		c, err := client.NewClientWithOpts(client.FromEnv, client.WithAPIVersionNegotiation())
		if err != nil {
			t.Fatalf("testkit: docker client: %v", err)
		}
		e, err := sharedEngine(t, c, os.Getenv)
		if err != nil {
			c.Close()
			t.Fatalf("testkit: remote engine: %v", err)
		}
		e.shared = true
		shared.eng = e
	}
	shared.refs++
	t.Cleanup(func() {
		if err := releaseShared(); err != nil {
			t.Errorf("testkit: %v", err)
		}
	})
	return shared.eng
}

// errNoEngineEnv: under CI=true the shared engine must come from .ci/run.
var errNoEngineEnv = errors.New(EngineEnv + " is not set under CI=true: .ci/run starts the remote engine (fetch-test-engine start) and names its engine.json there; the tests do not start their own")

// sharedEngine attaches to the engine that getenv(EngineEnv) describes or,
// without one, starts an engine owned by this process (except under
// CI=true).
func sharedEngine(t testing.TB, local *client.Client, getenv func(string) string) (*Engine, error) {
	t.Helper()
	if path := getenv(EngineEnv); path != "" {
		begin := time.Now()
		e, err := AttachEngine(local, path)
		if err != nil {
			return nil, err
		}
		t.Logf("testkit: remote engine %.12s from %s answers (%s): %s, %s", e.ID, path, time.Since(begin).Round(time.Millisecond), e.Host, e.SSHURL)
		return e, nil
	}
	if getenv("CI") == "true" {
		return nil, errNoEngineEnv
	}
	return startEngine(local, "", engineOwner{kind: ownerTest, pid: os.Getpid()}, t.Logf)
}

// HoldRemoteEngine keeps the engine RemoteEngine hands out from being
// removed between tests, until release is called; it starts nothing. For
// TestMain:
//
//	release := testkit.HoldRemoteEngine()
//	code := m.Run()
//	if err := release(); err != nil { … code = 1 }
//	os.Exit(code)
func HoldRemoteEngine() (release func() error) {
	shared.mu.Lock()
	shared.refs++
	shared.mu.Unlock()
	return sync.OnceValue(releaseShared)
}

// releaseShared lets go of one hold on the shared engine and removes it when
// that was the last (an attached engine is only let go of).
func releaseShared() error {
	shared.mu.Lock()
	defer shared.mu.Unlock()
	shared.refs--
	if shared.refs > 0 || shared.eng == nil {
		return nil
	}
	e := shared.eng
	shared.eng = nil
	defer e.local.Close()
	if err := e.remove(); err != nil {
		return fmt.Errorf("remove remote engine: %w", err)
	}
	return nil
}

// NewRemoteEngine starts a remote engine of t's own, removed (container and
// volume) when t ends. Use it to Stop and Start an engine: it is never the
// one EngineEnv names, which other test processes share.
func NewRemoteEngine(t testing.TB) *Engine {
	t.Helper()
	local := RequireDocker(t)
	e, err := startEngine(local, "", engineOwner{kind: ownerTest, pid: os.Getpid()}, t.Logf)
	if err != nil {
		t.Fatalf("testkit: remote engine: %v", err)
	}
	t.Cleanup(func() {
		if err := e.remove(); err != nil {
			t.Errorf("testkit: remove remote engine: %v", err)
		}
	})
	return e
}

// Client returns a Docker client for the engine over TLS, closed when t ends.
func (e *Engine) Client(t testing.TB) *client.Client {
	t.Helper()
	c, err := e.client()
	if err != nil {
		t.Fatalf("testkit: remote engine client: %v", err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

// Stop stops the engine's container, keeping its volume (images, containers),
// as an engine that goes away. Stopping a stopped engine does nothing.
func (e *Engine) Stop(t testing.TB) {
	t.Helper()
	e.halt(t, "stop", func(ctx context.Context) error {
		timeout := engineStopTimeout
		return e.local.ContainerStop(ctx, e.ID, container.StopOptions{Timeout: &timeout})
	})
}

// Kill ends the engine's container at once (SIGKILL), keeping its volume,
// as an engine whose machine goes away: unlike Stop, there is no moment in
// which dockerd still answers with its containers already ended. Killing a
// stopped engine does nothing.
func (e *Engine) Kill(t testing.TB) {
	t.Helper()
	e.halt(t, "kill", func(ctx context.Context) error {
		waited, failed := e.local.ContainerWait(ctx, e.ID, container.WaitConditionNotRunning)
		if err := e.local.ContainerKill(ctx, e.ID, "KILL"); err != nil {
			if info, ierr := e.local.ContainerInspect(ctx, e.ID); ierr == nil && info.State != nil && !info.State.Running {
				return nil
			}
			return err
		}
		select {
		case <-waited:
			return nil
		case err := <-failed:
			return fmt.Errorf("wait for its end: %w", err)
		}
	})
}

// halt runs fn, which ends the engine's container, under the engine's lock.
func (e *Engine) halt(t testing.TB, verb string, fn func(context.Context) error) {
	t.Helper()
	if e.shared || e.attached {
		t.Fatalf("testkit: %s on the shared remote engine; use NewRemoteEngine", verb)
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	ctx, cancel := context.WithTimeout(context.Background(), engineOpTimeout)
	defer cancel()
	if err := fn(ctx); err != nil {
		t.Fatalf("testkit: %s remote engine: %v", verb, err)
	}
}

// Start starts a stopped engine again, on the same ports with the same
// keys, and waits until it answers.
func (e *Engine) Start(t testing.TB) {
	t.Helper()
	e.mu.Lock()
	defer e.mu.Unlock()
	ctx, cancel := context.WithTimeout(context.Background(), engineStartTimeout)
	defer cancel()
	if err := e.local.ContainerStart(ctx, e.ID, container.StartOptions{}); err != nil {
		t.Fatalf("testkit: start remote engine: %v", err)
	}
	begin := time.Now()
	if err := e.waitReady(ctx); err != nil {
		t.Fatalf("testkit: start remote engine: %v", err)
	}
	t.Logf("testkit: remote engine %.12s up again in %s", e.ID, time.Since(begin).Round(time.Millisecond))
}

// LoadImage copies an image from the local engine into the remote one
// (ImageSave streamed into ImageLoad); an image the remote already has is
// left alone.
func (e *Engine) LoadImage(t testing.TB, ref string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	remote, err := e.client()
	if err != nil {
		t.Fatalf("testkit: load image %s: %v", ref, err)
	}
	defer remote.Close()
	info, err := e.local.ImageInspect(ctx, ref)
	if err != nil {
		t.Fatalf("testkit: load image %s: %v", ref, err)
	}
	if have, err := remote.ImageInspect(ctx, ref); err == nil && have.ID == info.ID {
		return
	} else if err != nil && !cerrdefs.IsNotFound(err) {
		t.Fatalf("testkit: load image %s: %v", ref, err)
	}
	saved, err := e.local.ImageSave(ctx, []string{ref})
	if err != nil {
		t.Fatalf("testkit: load image %s: save: %v", ref, err)
	}
	defer saved.Close()
	resp, err := remote.ImageLoad(ctx, saved, client.ImageLoadWithQuiet(true))
	if err != nil {
		t.Fatalf("testkit: load image %s: %v", ref, err)
	}
	defer resp.Body.Close()
	if err := readJSONMessages(resp.Body); err != nil {
		t.Fatalf("testkit: load image %s: %v", ref, err)
	}
}

func (e *Engine) client() (*client.Client, error) {
	return client.NewClientWithOpts(
		client.WithHost(e.Host),
		client.WithTLSClientConfig(
			filepath.Join(e.CertPath, "ca.pem"),
			filepath.Join(e.CertPath, "cert.pem"),
			filepath.Join(e.CertPath, "key.pem")),
		client.WithAPIVersionNegotiation())
}

// startEngine creates and starts an engine container on local, owned by
// owner, with its keys in dir or, when dir is "", in a new directory of its
// own (removed with the engine). It first removes the engines whose owner
// is gone (reapEngines).
func startEngine(local *client.Client, dir string, owner engineOwner, logf func(string, ...any)) (*Engine, error) {
	if err := remoteEngineImage(local, logf); err != nil {
		return nil, err
	}
	reapEngines(local, attachedEngine())
	ownDir := dir == ""
	if ownDir {
		var err error
		if dir, err = os.MkdirTemp("", "fetch-remote-engine-"); err != nil {
			return nil, err
		}
	}
	dropDir := func() {
		if ownDir {
			os.RemoveAll(dir)
		} else {
			removeEngineFiles(dir)
		}
	}
	files, err := engineKeys(dir)
	if err != nil {
		dropDir()
		return nil, err
	}
	e := &Engine{
		CertPath:   dir,
		SSHKey:     filepath.Join(dir, "id_ed25519"),
		KnownHosts: filepath.Join(dir, "known_hosts"),
		local:      local,
		owner:      owner,
		ownDir:     ownDir,
	}
	// The ports are chosen here, not by the engine, so that they survive a
	// stop: one another process takes in between fails the start, and a new
	// pair is tried.
	const attempts = 3
	begin := time.Now()
	for i := 1; ; i++ {
		err = e.create(files)
		if err == nil {
			logf("testkit: remote engine %.12s up in %s: %s, %s", e.ID, time.Since(begin).Round(time.Millisecond), e.Host, e.SSHURL)
			return e, nil
		}
		if rmErr := e.removeContainer(); rmErr != nil {
			err = errors.Join(err, rmErr)
		}
		e.ID, e.volume = "", ""
		if i == attempts {
			dropDir()
			return nil, err
		}
		logf("testkit: remote engine: %v; trying again", err)
	}
}

// engineDesc is engine.json (EngineFile): what another process needs to use
// an engine that StartEngineIn started, the paths absolute.
type engineDesc struct {
	ID         string `json:"id"`
	Volume     string `json:"volume"`
	Host       string `json:"host"`
	CertPath   string `json:"cert_path"`
	SSHURL     string `json:"ssh_url"`
	SSHAddr    string `json:"ssh_addr"`
	SSHKey     string `json:"ssh_key"`
	KnownHosts string `json:"known_hosts"`
	OwnerPID   int    `json:"owner_pid"`
}

// engineFiles are the files StartEngineIn writes into its directory (keys,
// known_hosts, EngineFile): StopEngineIn removes these and nothing else.
var engineFiles = []string{"ca.pem", "cert.pem", "key.pem", "id_ed25519", "id_ed25519.pub", "ssh_host_key.pub", "known_hosts", EngineFile}

// engineAttachTimeout bounds the wait for an attached engine to answer: it
// was started before, so it should answer at once.
const engineAttachTimeout = 30 * time.Second

// StartEngineIn starts a remote engine for the test processes of a CI run
// (fetch-test-engine start): owned by the process ownerPID (the shell that
// will stop it), its keys and its EngineFile in dir, created mode 0700 (an
// existing dir must be empty). It waits until the engine answers over TLS
// and SSH and returns the path of the EngineFile, which EngineEnv names to
// the tests. The engine stays until StopEngineIn(dir), or until a later
// start (of any test engine on this host) finds ownerPID gone.
func StartEngineIn(local *client.Client, dir string, ownerPID int, logf func(string, ...any)) (string, error) {
	// An owner that is gone already would have the engine reaped by the
	// next start.
	if ownerPID <= 0 || errors.Is(syscall.Kill(ownerPID, 0), syscall.ESRCH) {
		return "", fmt.Errorf("testkit: start engine: no process %d to own it", ownerPID)
	}
	dir, err := engineDir(dir)
	if err != nil {
		return "", fmt.Errorf("testkit: start engine: %w", err)
	}
	if err := os.Mkdir(dir, 0o700); errors.Is(err, os.ErrExist) {
		ents, rerr := os.ReadDir(dir)
		if rerr != nil {
			return "", fmt.Errorf("testkit: start engine: %w", rerr)
		}
		if len(ents) > 0 {
			return "", fmt.Errorf("testkit: start engine: %s is not empty", dir)
		}
		if err := os.Chmod(dir, 0o700); err != nil {
			return "", fmt.Errorf("testkit: start engine: %w", err)
		}
	} else if err != nil {
		return "", fmt.Errorf("testkit: start engine: %w", err)
	}
	e, err := startEngine(local, dir, engineOwner{kind: ownerCI, pid: ownerPID}, logf)
	if err != nil {
		return "", fmt.Errorf("testkit: start engine: %w", err)
	}
	b, err := json.MarshalIndent(engineDesc{
		ID: e.ID, Volume: e.volume, Host: e.Host, CertPath: e.CertPath,
		SSHURL: e.SSHURL, SSHAddr: e.SSHAddr, SSHKey: e.SSHKey, KnownHosts: e.KnownHosts,
		OwnerPID: ownerPID,
	}, "", "  ")
	if err == nil {
		// Written whole, then renamed: a reader never sees half of it.
		tmp := filepath.Join(dir, EngineFile+".tmp")
		if err = os.WriteFile(tmp, append(b, '\n'), 0o600); err == nil {
			err = os.Rename(tmp, filepath.Join(dir, EngineFile))
		}
	}
	if err != nil {
		err = errors.Join(err, e.removeContainer())
		removeEngineFiles(dir)
		return "", fmt.Errorf("testkit: start engine: write %s: %w", EngineFile, err)
	}
	return filepath.Join(dir, EngineFile), nil
}

// StopEngineIn removes the engine that StartEngineIn(dir) started (its
// container and volume, found by their labels, so an engine whose start was
// cut short goes too), the files it wrote in dir, and dir when that leaves
// it empty. Nothing there is no error: stopping twice is fine.
func StopEngineIn(local *client.Client, dir string) error {
	dir, err := engineDir(dir)
	if err != nil {
		return fmt.Errorf("testkit: stop engine: %w", err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), engineOpTimeout)
	defer cancel()
	f := filters.NewArgs(
		filters.Arg("label", engineOwnerLabel+"="+ownerCI),
		filters.Arg("label", engineDirLabel+"="+dir))
	var errs []error
	list, err := local.ContainerList(ctx, container.ListOptions{All: true, Filters: f})
	if err != nil {
		errs = append(errs, fmt.Errorf("list containers: %w", err))
	}
	for _, c := range list {
		err := local.ContainerRemove(ctx, c.ID, container.RemoveOptions{Force: true, RemoveVolumes: true})
		if err != nil && !cerrdefs.IsNotFound(err) {
			errs = append(errs, fmt.Errorf("remove container: %w", err))
		}
	}
	vols, err := local.VolumeList(ctx, volume.ListOptions{Filters: f})
	if err != nil {
		errs = append(errs, fmt.Errorf("list volumes: %w", err))
	} else {
		for _, v := range vols.Volumes {
			err := local.VolumeRemove(ctx, v.Name, true)
			if err != nil && !cerrdefs.IsNotFound(err) {
				errs = append(errs, fmt.Errorf("remove volume: %w", err))
			}
		}
	}
	if len(errs) == 0 {
		// The keys go only with the engine, so that a failed stop can be
		// tried again.
		removeEngineFiles(dir)
		if err := os.Remove(dir); err != nil && !errors.Is(err, os.ErrNotExist) {
			errs = append(errs, err)
		}
	}
	if err := errors.Join(errs...); err != nil {
		return fmt.Errorf("testkit: stop engine: %w", err)
	}
	return nil
}

// engineDir is dir made absolute and clean: it is the engine's label, and
// engine.json's paths are read by processes with other working directories.
func engineDir(dir string) (string, error) {
	if dir == "" {
		return "", errors.New("no directory")
	}
	return filepath.Abs(dir)
}

// removeEngineFiles removes what StartEngineIn wrote into dir.
func removeEngineFiles(dir string) {
	for _, name := range append(engineFiles, EngineFile+".tmp") {
		os.Remove(filepath.Join(dir, name))
	}
}

// AttachEngine returns the engine that the EngineFile at path describes,
// once it answers over TLS and SSH. The engine is another process's: Stop
// refuses it, and letting go of it leaves it running.
func AttachEngine(local *client.Client, path string) (*Engine, error) {
	d, err := readEngineDesc(path)
	if err != nil {
		return nil, err
	}
	e := &Engine{
		ID: d.ID, Host: d.Host, CertPath: d.CertPath,
		SSHURL: d.SSHURL, SSHAddr: d.SSHAddr, SSHKey: d.SSHKey, KnownHosts: d.KnownHosts,
		local: local, volume: d.Volume, attached: true,
		owner: engineOwner{kind: ownerCI, pid: d.OwnerPID},
	}
	ctx, cancel := context.WithTimeout(context.Background(), engineAttachTimeout)
	defer cancel()
	if err := e.waitReady(ctx); err != nil {
		return nil, fmt.Errorf("engine of %s (%.12s): %w", path, d.ID, err)
	}
	return e, nil
}

// readEngineDesc reads and checks an EngineFile.
func readEngineDesc(path string) (engineDesc, error) {
	var d engineDesc
	b, err := os.ReadFile(path)
	if err != nil {
		return d, fmt.Errorf("read %s: %w", EngineEnv, err)
	}
	if err := json.Unmarshal(b, &d); err != nil {
		return d, fmt.Errorf("read %s %s: %w", EngineEnv, path, err)
	}
	for name, v := range map[string]string{"id": d.ID, "volume": d.Volume, "host": d.Host, "cert_path": d.CertPath, "ssh_url": d.SSHURL, "ssh_addr": d.SSHAddr, "ssh_key": d.SSHKey, "known_hosts": d.KnownHosts} {
		if v == "" {
			return d, fmt.Errorf("read %s %s: no %s", EngineEnv, path, name)
		}
	}
	return d, nil
}

// attachedEngine is the engine EngineEnv names, if any: reapEngines leaves
// it alone whatever its labels say.
func attachedEngine() engineDesc {
	path := os.Getenv(EngineEnv)
	if path == "" {
		return engineDesc{}
	}
	d, _ := readEngineDesc(path)
	return d
}

// create makes the volume and the container, copies the keys in, starts it
// and waits until dockerd and sshd answer.
func (e *Engine) create(files []ImageFile) error {
	ctx, cancel := context.WithTimeout(context.Background(), engineStartTimeout)
	defer cancel()
	tcpPort, err := freePort()
	if err != nil {
		return err
	}
	sshPort, err := freePort()
	if err != nil {
		return err
	}
	e.Host = "tcp://127.0.0.1:" + tcpPort
	e.SSHAddr = "127.0.0.1:" + sshPort
	e.SSHURL = "ssh://" + engineUser + "@" + e.SSHAddr
	hostKey, err := os.ReadFile(filepath.Join(e.CertPath, "ssh_host_key.pub"))
	if err != nil {
		return err
	}
	pub, _, _, _, err := ssh.ParseAuthorizedKey(hostKey)
	if err != nil {
		return err
	}
	line := knownhosts.Line([]string{knownhosts.Normalize(e.SSHAddr)}, pub) + "\n"
	if err := os.WriteFile(e.KnownHosts, []byte(line), 0o600); err != nil {
		return err
	}

	hostname, _ := os.Hostname()
	labels := map[string]string{
		engineLabel:      engineMark,
		engineOwnerLabel: e.owner.kind,
		enginePIDLabel:   strconv.Itoa(e.owner.pid),
		engineHostLabel:  hostname,
		engineDirLabel:   e.CertPath,
	}
	name := "fetch-remote-engine-" + randomHex(6)
	vol, err := e.local.VolumeCreate(ctx, volume.CreateOptions{Name: name, Labels: labels})
	if err != nil {
		return fmt.Errorf("create volume: %w", err)
	}
	e.volume = vol.Name
	bind := func(port string) []nat.PortBinding { return []nat.PortBinding{{HostIP: "127.0.0.1", HostPort: port}} }
	stop := engineStopTimeout
	created, err := e.local.ContainerCreate(ctx,
		&container.Config{
			Image:        RemoteEngineImage,
			Hostname:     "remote-engine",
			Cmd:          []string{"--log-level=warn"},
			Labels:       labels,
			ExposedPorts: nat.PortSet{"2376/tcp": {}, "22/tcp": {}},
			StopTimeout:  &stop,
		},
		&container.HostConfig{
			// What works without --privileged (which these machines refuse):
			// every capability but SYS_RESOURCE, no seccomp or AppArmor
			// profile, no masked or read-only /proc paths; the entrypoint
			// remounts the cgroup hierarchies read-write.
			CapAdd:        []string{"ALL"},
			CapDrop:       []string{"SYS_RESOURCE"},
			SecurityOpt:   []string{"seccomp=unconfined", "apparmor=unconfined"},
			MaskedPaths:   []string{},
			ReadonlyPaths: []string{},
			Mounts:        []mount.Mount{{Type: mount.TypeVolume, Source: e.volume, Target: "/var/lib/docker"}},
			// /run in memory, as on a machine: a stop or a kill clears it
			// like a reboot, and containerd's fifos are not made on the
			// container's layer (where, after a kill, making one failed
			// with an I/O error on this host's fuse-overlayfs).
			Tmpfs:        map[string]string{"/run": "rw,nosuid,nodev,mode=755"},
			PortBindings: nat.PortMap{"2376/tcp": bind(tcpPort), "22/tcp": bind(sshPort)},
		}, nil, nil, name)
	if err != nil {
		return fmt.Errorf("create container: %w", err)
	}
	e.ID = created.ID
	archive, err := tarFiles(files)
	if err != nil {
		return err
	}
	if err := e.local.CopyToContainer(ctx, e.ID, engineConfDir, archive, container.CopyToContainerOptions{}); err != nil {
		return fmt.Errorf("copy keys: %w", err)
	}
	if err := e.local.ContainerStart(ctx, e.ID, container.StartOptions{}); err != nil {
		return fmt.Errorf("start: %w", err)
	}
	return e.waitReady(ctx)
}

// waitReady waits until dockerd answers a ping over TLS and sshd lets the
// user in, or the container exits (then its log says why).
func (e *Engine) waitReady(ctx context.Context) error {
	c, err := e.client()
	if err != nil {
		return err
	}
	defer c.Close()
	cfg, err := e.sshConfig()
	if err != nil {
		return err
	}
	tick := time.NewTicker(100 * time.Millisecond)
	defer tick.Stop()
	var last error
	for {
		select {
		case <-ctx.Done():
			return fmt.Errorf("not ready: %w (last: %v)\n%s", ctx.Err(), last, e.logTail())
		case <-tick.C:
		}
		info, err := e.local.ContainerInspect(ctx, e.ID)
		if err != nil {
			return fmt.Errorf("inspect: %w", err)
		}
		if !info.State.Running {
			return fmt.Errorf("engine container exited (%d)\n%s", info.State.ExitCode, e.logTail())
		}
		pctx, cancel := context.WithTimeout(ctx, time.Second)
		_, last = c.Ping(pctx)
		cancel()
		if last != nil {
			continue
		}
		if last = sshPing(e.SSHAddr, cfg); last == nil {
			return nil
		}
	}
}

// sshConfig is a client configuration for the engine's sshd: the user key,
// the host key checked against KnownHosts.
func (e *Engine) sshConfig() (*ssh.ClientConfig, error) {
	keyPEM, err := os.ReadFile(e.SSHKey)
	if err != nil {
		return nil, err
	}
	signer, err := ssh.ParsePrivateKey(keyPEM)
	if err != nil {
		return nil, err
	}
	check, err := knownhosts.New(e.KnownHosts)
	if err != nil {
		return nil, err
	}
	return &ssh.ClientConfig{
		User:            engineUser,
		Auth:            []ssh.AuthMethod{ssh.PublicKeys(signer)},
		HostKeyCallback: check,
		Timeout:         2 * time.Second,
	}, nil
}

func sshPing(addr string, cfg *ssh.ClientConfig) error {
	c, err := ssh.Dial("tcp", addr, cfg)
	if err != nil {
		return err
	}
	return c.Close()
}

// logTail is the end of the engine container's output, for error messages.
func (e *Engine) logTail() string {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	rc, err := e.local.ContainerLogs(ctx, e.ID, container.LogsOptions{ShowStdout: true, ShowStderr: true, Tail: "40"})
	if err != nil {
		return "no log: " + err.Error()
	}
	defer rc.Close()
	var out bytes.Buffer
	if _, err := stdcopy.StdCopy(&out, &out, rc); err != nil {
		fmt.Fprintf(&out, "(log: %v)", err)
	}
	return out.String()
}

// remove removes the engine's container, its volume and its keys; what is
// already gone is no error. An attached engine is left alone: its owner
// removes it.
func (e *Engine) remove() error {
	if e.attached {
		return nil
	}
	err := e.removeContainer()
	switch {
	case e.ownDir:
		err = errors.Join(err, os.RemoveAll(e.CertPath))
	case e.CertPath != "":
		removeEngineFiles(e.CertPath)
	}
	return err
}

// removeContainer removes the engine's container and its volume.
func (e *Engine) removeContainer() error {
	ctx, cancel := context.WithTimeout(context.Background(), engineOpTimeout)
	defer cancel()
	var errs []error
	if e.ID != "" {
		err := e.local.ContainerRemove(ctx, e.ID, container.RemoveOptions{Force: true, RemoveVolumes: true})
		if err != nil && !cerrdefs.IsNotFound(err) {
			errs = append(errs, fmt.Errorf("remove container: %w", err))
		}
	}
	if e.volume != "" {
		err := e.local.VolumeRemove(ctx, e.volume, true)
		if err != nil && !cerrdefs.IsNotFound(err) {
			errs = append(errs, fmt.Errorf("remove volume: %w", err))
		}
	}
	return errors.Join(errs...)
}

// reapEngines removes the engine containers and volumes of this host whose
// owner is gone: a test process that was killed, or a CI shell (.ci/run)
// that was killed before its trap could stop the engine. An engine whose
// owner lives is left alone, whatever its kind, and so is keep (the engine
// this process attached to) and any engine whose owner this version does
// not know. Failures are ignored: this is housekeeping.
func reapEngines(local *client.Client, keep engineDesc) {
	reapEnginesMarked(local, keep, engineMark)
}

// engineMark is the value of engineLabel on the engines this package
// starts; a test of the reaper marks its fakes otherwise, so that the
// reapers of other test processes leave them alone.
const engineMark = "1"

// reapEnginesMarked is reapEngines over the engines whose engineLabel is
// mark.
func reapEnginesMarked(local *client.Client, keep engineDesc, mark string) {
	ctx, cancel := context.WithTimeout(context.Background(), engineOpTimeout)
	defer cancel()
	hostname, _ := os.Hostname()
	f := filters.NewArgs(filters.Arg("label", engineLabel+"="+mark))
	list, err := local.ContainerList(ctx, container.ListOptions{All: true, Filters: f})
	if err == nil {
		for _, c := range list {
			if keep.ID != "" && c.ID == keep.ID || !ownerGone(c.Labels, hostname) {
				continue
			}
			local.ContainerRemove(ctx, c.ID, container.RemoveOptions{Force: true, RemoveVolumes: true})
			dir := c.Labels[engineDirLabel]
			switch c.Labels[engineOwnerLabel] {
			case ownerCI:
				// The CI shell's own directory: only what it was given.
				if filepath.IsAbs(dir) {
					removeEngineFiles(dir)
					os.Remove(dir)
				}
			default:
				if strings.HasPrefix(filepath.Base(dir), "fetch-remote-engine-") {
					os.RemoveAll(dir)
				}
			}
		}
	}
	vols, err := local.VolumeList(ctx, volume.ListOptions{Filters: f})
	if err == nil {
		for _, v := range vols.Volumes {
			if keep.Volume != "" && v.Name == keep.Volume || !ownerGone(v.Labels, hostname) {
				continue
			}
			local.VolumeRemove(ctx, v.Name, true)
		}
	}
}

// ownerGone reports whether the labels name an owner on this host whose
// process is gone. A test engine (ownerTest, or no owner label: engines of
// older versions) is owned by the test process that started it; a CI
// engine (ownerCI) by the shell that runs the whole test run, not by any
// test process, so a test process finishing never lets it go.
func ownerGone(labels map[string]string, hostname string) bool {
	if labels[engineHostLabel] != hostname {
		return false
	}
	switch labels[engineOwnerLabel] {
	case "", ownerTest, ownerCI:
	default:
		return false
	}
	pid, err := strconv.Atoi(labels[enginePIDLabel])
	if err != nil || pid <= 0 {
		return false
	}
	return errors.Is(syscall.Kill(pid, 0), syscall.ESRCH)
}

// remoteEngineImage makes sure RemoteEngineImage exists and was built by the
// current scripts/remote-engine.sh (the script labels the image with its
// hash), running the script otherwise.
func remoteEngineImage(local *client.Client, logf func(string, ...any)) error {
	script, err := engineScript()
	if err != nil {
		return err
	}
	b, err := os.ReadFile(script)
	if err != nil {
		return err
	}
	sum := sha256.Sum256(b)
	want := hex.EncodeToString(sum[:])[:16]
	ctx, cancel := context.WithTimeout(context.Background(), engineOpTimeout)
	defer cancel()
	info, err := local.ImageInspect(ctx, RemoteEngineImage)
	if err == nil && info.Config != nil && info.Config.Labels[engineScriptLabel] == want {
		return nil
	}
	if err != nil && !cerrdefs.IsNotFound(err) {
		return fmt.Errorf("inspect %s: %w", RemoteEngineImage, err)
	}
	logf("testkit: %s missing or outdated; running scripts/remote-engine.sh", RemoteEngineImage)
	cmd := exec.Command("bash", script, RemoteEngineImage)
	if out, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("scripts/remote-engine.sh: %w\n%s", err, out)
	}
	return nil
}

// engineScript is the path of scripts/remote-engine.sh in the checkout this
// package was built from (as repoRoot finds it, without a test: the
// fetch-test-engine program uses it too).
func engineScript() (string, error) {
	root, err := checkoutRoot()
	if err != nil {
		return "", err
	}
	return filepath.Join(root, "scripts", "remote-engine.sh"), nil
}

// engineKeys writes the client's side of the keys into dir (ca.pem, cert.pem,
// key.pem; id_ed25519; ssh_host_key.pub) and returns the files that go into
// the engine container's engineConfDir.
func engineKeys(dir string) ([]ImageFile, error) {
	now := time.Now()
	caKey, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, err
	}
	caTmpl := &x509.Certificate{
		SerialNumber:          serial(),
		Subject:               pkix.Name{CommonName: "fetch test remote engine CA"},
		NotBefore:             now.Add(-time.Hour),
		NotAfter:              now.Add(24 * time.Hour),
		KeyUsage:              x509.KeyUsageCertSign | x509.KeyUsageDigitalSignature,
		BasicConstraintsValid: true,
		IsCA:                  true,
	}
	caDER, err := x509.CreateCertificate(rand.Reader, caTmpl, caTmpl, &caKey.PublicKey, caKey)
	if err != nil {
		return nil, err
	}
	ca, err := x509.ParseCertificate(caDER)
	if err != nil {
		return nil, err
	}
	leaf := func(cn string, usage x509.ExtKeyUsage, server bool) (certPEM, keyPEM []byte, err error) {
		key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
		if err != nil {
			return nil, nil, err
		}
		tmpl := &x509.Certificate{
			SerialNumber: serial(),
			Subject:      pkix.Name{CommonName: cn},
			NotBefore:    now.Add(-time.Hour),
			NotAfter:     now.Add(24 * time.Hour),
			KeyUsage:     x509.KeyUsageDigitalSignature,
			ExtKeyUsage:  []x509.ExtKeyUsage{usage},
		}
		if server {
			tmpl.DNSNames = []string{"localhost"}
			tmpl.IPAddresses = []net.IP{net.IPv4(127, 0, 0, 1), net.IPv6loopback}
		}
		der, err := x509.CreateCertificate(rand.Reader, tmpl, ca, &key.PublicKey, caKey)
		if err != nil {
			return nil, nil, err
		}
		pkcs8, err := x509.MarshalPKCS8PrivateKey(key)
		if err != nil {
			return nil, nil, err
		}
		return pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}),
			pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: pkcs8}), nil
	}
	serverCert, serverKey, err := leaf("localhost", x509.ExtKeyUsageServerAuth, true)
	if err != nil {
		return nil, err
	}
	clientCert, clientKey, err := leaf("fetch test client", x509.ExtKeyUsageClientAuth, false)
	if err != nil {
		return nil, err
	}
	caPEM := pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: caDER})

	sshKey := func(comment string) (priv []byte, pub ssh.PublicKey, err error) {
		_, key, err := ed25519.GenerateKey(rand.Reader)
		if err != nil {
			return nil, nil, err
		}
		block, err := ssh.MarshalPrivateKey(key, comment)
		if err != nil {
			return nil, nil, err
		}
		pub, err = ssh.NewPublicKey(key.Public())
		if err != nil {
			return nil, nil, err
		}
		return pem.EncodeToMemory(block), pub, nil
	}
	hostPriv, hostPub, err := sshKey("fetch test remote engine")
	if err != nil {
		return nil, err
	}
	userPriv, userPub, err := sshKey("fetch test user")
	if err != nil {
		return nil, err
	}

	local := []ImageFile{
		{Path: "ca.pem", Mode: 0o644, Data: caPEM},
		{Path: "cert.pem", Mode: 0o644, Data: clientCert},
		{Path: "key.pem", Mode: 0o600, Data: clientKey},
		{Path: "id_ed25519", Mode: 0o600, Data: userPriv},
		{Path: "id_ed25519.pub", Mode: 0o644, Data: ssh.MarshalAuthorizedKey(userPub)},
		{Path: "ssh_host_key.pub", Mode: 0o644, Data: ssh.MarshalAuthorizedKey(hostPub)},
	}
	for _, f := range local {
		if err := os.WriteFile(filepath.Join(dir, f.Path), f.Data, f.Mode); err != nil {
			return nil, err
		}
	}
	return []ImageFile{
		{Path: "ca.pem", Mode: 0o644, Data: caPEM},
		{Path: "server-cert.pem", Mode: 0o644, Data: serverCert},
		{Path: "server-key.pem", Mode: 0o600, Data: serverKey},
		{Path: "ssh_host_key", Mode: 0o600, Data: hostPriv},
		{Path: "authorized_keys", Mode: 0o644, Data: ssh.MarshalAuthorizedKey(userPub)},
	}, nil
}

// readJSONMessages reads a stream of Docker JSON messages to the end and
// returns the error one of them reports.
func readJSONMessages(r io.Reader) error {
	dec := json.NewDecoder(r)
	for {
		var msg struct {
			Error       string `json:"error"`
			ErrorDetail struct {
				Message string `json:"message"`
			} `json:"errorDetail"`
		}
		if err := dec.Decode(&msg); errors.Is(err, io.EOF) {
			return nil
		} else if err != nil {
			return err
		}
		if msg.Error != "" {
			return errors.New(msg.Error)
		}
		if msg.ErrorDetail.Message != "" {
			return errors.New(msg.ErrorDetail.Message)
		}
	}
}

// freePort is a port on 127.0.0.1 that was free a moment ago.
func freePort() (string, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", err
	}
	defer l.Close()
	_, port, err := net.SplitHostPort(l.Addr().String())
	return port, err
}

func serial() *big.Int {
	n, err := rand.Int(rand.Reader, new(big.Int).Lsh(big.NewInt(1), 120))
	if err != nil {
		panic(err) // crypto/rand does not fail
	}
	return n
}

func randomHex(n int) string {
	b := make([]byte, n)
	rand.Read(b)
	return hex.EncodeToString(b)
}
