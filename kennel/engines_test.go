package kennel_test

import (
	"context"
	"crypto/ecdsa"
	"crypto/ed25519"
	"crypto/elliptic"
	cryptorand "crypto/rand"
	"crypto/sha256"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/hex"
	"encoding/json"
	"encoding/pem"
	"errors"
	"fmt"
	"log/slog"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/docker/docker/api/types/container"
	"github.com/docker/docker/api/types/image"
	"github.com/docker/docker/client"
	"github.com/google/go-cmp/cmp"
	"golang.org/x/crypto/ssh"
	"golang.org/x/crypto/ssh/knownhosts"

	"github.com/fetch-dev/fetch/internal/testkit"

	"github.com/fetch-dev/fetch/kennel"
)

func TestParseEngines(t *testing.T) {
	tests := []struct {
		spec string
		want []kennel.EngineSpec
	}{
		{"", []kennel.EngineSpec{{Name: "local", Kind: kennel.EngineLocal}}},
		{"  ", []kennel.EngineSpec{{Name: "local", Kind: kennel.EngineLocal}}},
		{"local", []kennel.EngineSpec{{Name: "local", Kind: kennel.EngineLocal}}},
		{"default", []kennel.EngineSpec{{Name: "default", Kind: kennel.EngineLocal}}},
		{"build-box", []kennel.EngineSpec{{Name: "build-box", Kind: kennel.EngineContext, Context: "build-box"}}},
		{"gpu=ssh://fetch@gpu.lan", []kennel.EngineSpec{{Name: "gpu", Kind: kennel.EngineSSH, Host: "ssh://fetch@gpu.lan:22"}}},
		{
			"local, gpu=ssh://fetch@10.0.0.7:2222?key=~/.ssh/fetch_ed25519&known_hosts=/etc/fetch/known_hosts ,ci=tcp://ci.lan?certs=/etc/fetch/ci,sock=unix:///run/user/1000/docker.sock",
			[]kennel.EngineSpec{
				{Name: "local", Kind: kennel.EngineLocal},
				{Name: "gpu", Kind: kennel.EngineSSH, Host: "ssh://fetch@10.0.0.7:2222", KeyFile: "~/.ssh/fetch_ed25519", KnownHosts: "/etc/fetch/known_hosts"},
				{Name: "ci", Kind: kennel.EngineTCP, Host: "tcp://ci.lan:2376", CertDir: "/etc/fetch/ci"},
				{Name: "sock", Kind: kennel.EngineUnix, Host: "unix:///run/user/1000/docker.sock"},
			},
		},
		{"v6=ssh://fetch@[::1]:22", []kennel.EngineSpec{{Name: "v6", Kind: kennel.EngineSSH, Host: "ssh://fetch@[::1]:22"}}},
	}
	for _, tt := range tests {
		t.Run(tt.spec, func(t *testing.T) {
			got, err := kennel.ParseEngines(tt.spec)
			if err != nil {
				t.Fatalf("ParseEngines: %v", err)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("ParseEngines (-want +got):\n%s", diff)
			}
		})
	}
}

func TestParseEnginesRefuses(t *testing.T) {
	tests := []struct{ spec, want string }{
		{"GPU=ssh://fetch@gpu", `engine name "GPU"`},
		{"a-name-that-is-much-longer-than-32-chars", "1 to 32"},
		{"a,,b", "entry 2: empty entry"},
		{"a,", "entry 2: empty entry"},
		{"a,a", `engine "a" named twice`},
		{"local=unix:///x", `engine "local": the name is the environment's engine`},
		{"gpu=ssh://gpu.lan", "want ssh://USER@HOST"},
		{"gpu=ssh://fetch:secret@gpu.lan", "no password"},
		{"gpu=ssh://fetch@gpu.lan/path", "want ssh://USER@HOST"},
		{"gpu=ssh://fetch@gpu.lan?key=id_rsa", "key=id_rsa: want an absolute path"},
		{"gpu=ssh://fetch@gpu.lan?identity=/k", "unknown option identity"},
		{"ci=tcp://ci.lan:2375", "plain TCP gives root"},
		{"ci=tcp://ci.lan?key=/k", "plain TCP"},
		{"ci=http://ci.lan", "want an ssh://, tcp:// or unix:// URL"},
		{"s=unix://relative", "want unix:///PATH"},
	}
	for _, tt := range tests {
		t.Run(tt.spec, func(t *testing.T) {
			_, err := kennel.ParseEngines(tt.spec)
			if !errors.Is(err, kennel.ErrInvalid) || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("ParseEngines(%q) = %v, want ErrInvalid saying %q", tt.spec, err, tt.want)
			}
			if err != nil && strings.Contains(err.Error(), "secret") {
				t.Errorf("the error shows the password: %v", err)
			}
		})
	}
	// Every problem at once.
	_, err := kennel.ParseEngines("A,b=http://x,c")
	if err == nil || !strings.Contains(err.Error(), "entry 1") || !strings.Contains(err.Error(), "entry 2") {
		t.Errorf("two bad entries: %v", err)
	}
}

// writeContext writes a docker context into the CLI store under dir, as
// `docker context create` does, with TLS files when tlsFiles is set.
func writeContext(t *testing.T, dir, name, host string, skipVerify, tlsFiles bool) {
	t.Helper()
	sum := sha256.Sum256([]byte(name))
	id := hex.EncodeToString(sum[:])
	meta := map[string]any{
		"Name":     name,
		"Metadata": map[string]any{"Description": "test"},
		"Endpoints": map[string]any{
			"docker": map[string]any{"Host": host, "SkipTLSVerify": skipVerify},
		},
	}
	b, err := json.Marshal(meta)
	if err != nil {
		t.Fatal(err)
	}
	metaDir := filepath.Join(dir, "contexts", "meta", id)
	if err := os.MkdirAll(metaDir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(metaDir, "meta.json"), b, 0o644); err != nil {
		t.Fatal(err)
	}
	if tlsFiles {
		tlsDir := filepath.Join(dir, "contexts", "tls", id, "docker")
		if err := os.MkdirAll(tlsDir, 0o700); err != nil {
			t.Fatal(err)
		}
		for _, f := range []string{"ca.pem", "cert.pem", "key.pem"} {
			if err := os.WriteFile(filepath.Join(tlsDir, f), []byte("x"), 0o600); err != nil {
				t.Fatal(err)
			}
		}
	}
}

// sshHome is a home directory with the given keys in ~/.ssh.
func sshHome(t *testing.T, keys ...string) string {
	t.Helper()
	home := t.TempDir()
	if err := os.MkdirAll(filepath.Join(home, ".ssh"), 0o700); err != nil {
		t.Fatal(err)
	}
	for _, k := range keys {
		if err := os.WriteFile(filepath.Join(home, ".ssh", k), []byte("key"), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	return home
}

func TestResolveDockerContext(t *testing.T) {
	home := sshHome(t, "id_rsa")
	store := filepath.Join(t.TempDir(), "docker-config")
	writeContext(t, store, "ci", "tcp://ci.lan:2376", false, true)
	writeContext(t, store, "lab", "tcp://lab.lan:2376", true, false)
	writeContext(t, store, "gpu", "ssh://fetch@gpu.lan", false, false)
	cfg := kennel.DialConfig{Home: home, DockerConfig: store}
	id := func(name string) string { s := sha256.Sum256([]byte(name)); return hex.EncodeToString(s[:]) }

	specs, err := kennel.ParseEngines("ci,lab,gpu")
	if err != nil {
		t.Fatal(err)
	}
	var got []kennel.EngineSpec
	for _, s := range specs {
		r, err := s.Resolve(cfg)
		if err != nil {
			t.Fatalf("Resolve %s: %v", s.Name, err)
		}
		got = append(got, r)
	}
	want := []kennel.EngineSpec{
		{Name: "ci", Kind: kennel.EngineTCP, Context: "ci", Host: "tcp://ci.lan:2376", CertDir: filepath.Join(store, "contexts", "tls", id("ci"), "docker")},
		{Name: "lab", Kind: kennel.EngineTCP, Context: "lab", Host: "tcp://lab.lan:2376", SkipTLSVerify: true},
		{Name: "gpu", Kind: kennel.EngineSSH, Context: "gpu", Host: "ssh://fetch@gpu.lan:22",
			KeyFile: filepath.Join(home, ".ssh", "id_rsa"), KnownHosts: filepath.Join(home, ".ssh", "known_hosts")},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("resolved (-want +got):\n%s", diff)
	}

	// Without DOCKER_CONFIG the store is ~/.docker.
	writeContext(t, filepath.Join(home, ".docker"), "home-ctx", "unix:///run/docker.sock", false, false)
	r, err := kennel.EngineSpec{Name: "home-ctx", Kind: kennel.EngineContext, Context: "home-ctx"}.Resolve(kennel.DialConfig{Home: home})
	if err != nil || r.Host != "unix:///run/docker.sock" {
		t.Errorf("context in ~/.docker: %+v, %v", r, err)
	}
}

func TestResolveUnknownContext(t *testing.T) {
	specs, err := kennel.ParseEngines("nosuch")
	if err != nil {
		t.Fatal(err)
	}
	store := t.TempDir()
	_, err = specs[0].Resolve(kennel.DialConfig{Home: t.TempDir(), DockerConfig: store})
	for _, want := range []string{`engine "nosuch"`, `no docker context "nosuch"`, store, "docker context ls"} {
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("unknown context: %v, want it to say %q", err, want)
		}
	}
	if !errors.Is(err, kennel.ErrInvalid) {
		t.Errorf("unknown context: %v, want ErrInvalid", err)
	}
	// Dial says the same, connecting to nothing.
	_, dialErr := kennel.Dial(t.Context(), specs[0], kennel.DialConfig{Home: t.TempDir(), DockerConfig: store})
	if dialErr == nil || !strings.Contains(dialErr.Error(), `no docker context "nosuch"`) {
		t.Errorf("Dial of an unknown context: %v", dialErr)
	}
}

func TestResolveLocal(t *testing.T) {
	local := kennel.EngineSpec{Name: "local", Kind: kennel.EngineLocal}
	tests := []struct {
		name string
		cfg  kennel.DialConfig
		want kennel.EngineSpec
	}{
		{"default socket", kennel.DialConfig{}, kennel.EngineSpec{Name: "local", Kind: kennel.EngineUnix, Host: "unix:///var/run/docker.sock"}},
		{"DOCKER_HOST unix", kennel.DialConfig{DockerHost: "unix:///run/user/1000/docker.sock"},
			kennel.EngineSpec{Name: "local", Kind: kennel.EngineUnix, Host: "unix:///run/user/1000/docker.sock"}},
		{"DOCKER_HOST tcp with TLS", kennel.DialConfig{DockerHost: "tcp://10.0.0.1:2376", DockerTLSVerify: true, DockerCertPath: "/certs"},
			kennel.EngineSpec{Name: "local", Kind: kennel.EngineTCP, Host: "tcp://10.0.0.1:2376", CertDir: "/certs"}},
		{"DOCKER_TLS_VERIFY alone: ~/.docker", kennel.DialConfig{Home: "/home/u", DockerHost: "tcp://10.0.0.1", DockerTLSVerify: true},
			kennel.EngineSpec{Name: "local", Kind: kennel.EngineTCP, Host: "tcp://10.0.0.1:2376", CertDir: "/home/u/.docker"}},
		{"DOCKER_CERT_PATH without verify", kennel.DialConfig{DockerHost: "tcp://10.0.0.1:2376", DockerCertPath: "/certs"},
			kennel.EngineSpec{Name: "local", Kind: kennel.EngineTCP, Host: "tcp://10.0.0.1:2376", CertDir: "/certs", SkipTLSVerify: true}},
		{"plain DOCKER_HOST tcp", kennel.DialConfig{DockerHost: "tcp://10.0.0.1:2375"},
			kennel.EngineSpec{Name: "local", Kind: kennel.EngineTCP, Host: "tcp://10.0.0.1:2375"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := local.Resolve(tt.cfg)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("Resolve (-want +got):\n%s", diff)
			}
		})
	}
}

func TestResolveSSHKeys(t *testing.T) {
	spec := kennel.EngineSpec{Name: "gpu", Kind: kennel.EngineSSH, Host: "ssh://fetch@gpu.lan:22"}

	home := sshHome(t, "id_ecdsa", "id_rsa")
	r, err := spec.Resolve(kennel.DialConfig{Home: home})
	if err != nil || r.KeyFile != filepath.Join(home, ".ssh", "id_ecdsa") || r.KnownHosts != filepath.Join(home, ".ssh", "known_hosts") {
		t.Errorf("defaults: %+v, %v", r, err)
	}

	named := spec
	named.KeyFile, named.KnownHosts = "~/keys/fetch", "~/kh"
	r, err = named.Resolve(kennel.DialConfig{Home: home})
	if err != nil || r.KeyFile != filepath.Join(home, "keys", "fetch") || r.KnownHosts != filepath.Join(home, "kh") {
		t.Errorf("named files: %+v, %v", r, err)
	}

	_, err = spec.Resolve(kennel.DialConfig{Home: sshHome(t)})
	if !errors.Is(err, kennel.ErrInvalid) || !strings.Contains(err.Error(), `engine "gpu": no SSH key`) || !strings.Contains(err.Error(), "ssh-keygen") {
		t.Errorf("no key: %v", err)
	}
}

// localConfig is the DialConfig of this test process's environment.
func localConfig(t testing.TB) kennel.DialConfig {
	t.Helper()
	home, err := os.UserHomeDir()
	if err != nil {
		t.Fatal(err)
	}
	return kennel.DialConfig{
		Home:            home,
		DockerConfig:    os.Getenv("DOCKER_CONFIG"),
		DockerHost:      os.Getenv("DOCKER_HOST"),
		DockerTLSVerify: os.Getenv("DOCKER_TLS_VERIFY") != "",
		DockerCertPath:  os.Getenv("DOCKER_CERT_PATH"),
		Logger:          slog.New(slog.NewTextHandler(t.Output(), nil)),
	}
}

// dialSpec parses one FETCH_ENGINES entry and dials it, closing the engine
// when t ends.
func dialSpec(t testing.TB, entry string, cfg kennel.DialConfig) *kennel.Engine {
	t.Helper()
	specs, err := kennel.ParseEngines(entry)
	if err != nil {
		t.Fatal(err)
	}
	e, err := kennel.Dial(t.Context(), specs[0], cfg)
	if err != nil {
		t.Fatalf("Dial %s: %v", entry, err)
	}
	t.Cleanup(func() {
		if err := e.Close(); err != nil {
			t.Errorf("close %s: %v", e.Name(), err)
		}
	})
	return e
}

// tlsEntry and sshEntry are the FETCH_ENGINES entries of testkit's remote
// engine.
func tlsEntry(r *testkit.Engine) string {
	return "remote-tls=" + r.Host + "?certs=" + r.CertPath
}

func sshEntry(r *testkit.Engine) string {
	return "remote-ssh=" + r.SSHURL + "?key=" + r.SSHKey + "&known_hosts=" + r.KnownHosts
}

// TestEngines runs against testkit's remote engine (dockerd in a container,
// over TLS and SSH); the subtests share it.
func TestEngines(t *testing.T) {
	remote := testkit.RemoteEngine(t)
	cfg := localConfig(t)
	local := dialSpec(t, "local", cfg)

	t.Run("DialTLS", func(t *testing.T) {
		t.Parallel()
		e := dialSpec(t, tlsEntry(remote), cfg)
		if e.Name() != "remote-tls" || e.Spec().Kind != kennel.EngineTCP {
			t.Errorf("engine %s, spec %+v", e.Name(), e.Spec())
		}
		if _, err := e.Ping(t.Context()); err != nil {
			t.Errorf("ping: %v", err)
		}
	})

	t.Run("DialSSH", func(t *testing.T) {
		t.Parallel()
		e := dialSpec(t, sshEntry(remote), cfg)
		v, err := e.ServerVersion(t.Context())
		if err != nil {
			t.Fatalf("version over SSH: %v", err)
		}
		t.Logf("remote engine over SSH: Docker %s, API %s", v.Version, v.APIVersion)
		// Many requests at once share the one SSH connection.
		var wg sync.WaitGroup
		for range 8 {
			wg.Go(func() {
				if _, err := e.Ping(t.Context()); err != nil {
					t.Errorf("ping: %v", err)
				}
			})
		}
		wg.Wait()
	})

	t.Run("DialDockerContext", func(t *testing.T) {
		t.Parallel()
		store := t.TempDir()
		writeContext(t, store, "remote-ctx", remote.Host, false, false)
		sum := sha256.Sum256([]byte("remote-ctx"))
		tlsDir := filepath.Join(store, "contexts", "tls", hex.EncodeToString(sum[:]), "docker")
		if err := os.MkdirAll(tlsDir, 0o700); err != nil {
			t.Fatal(err)
		}
		for _, f := range []string{"ca.pem", "cert.pem", "key.pem"} {
			b, err := os.ReadFile(filepath.Join(remote.CertPath, f))
			if err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(filepath.Join(tlsDir, f), b, 0o600); err != nil {
				t.Fatal(err)
			}
		}
		c := cfg
		c.DockerConfig = store
		e := dialSpec(t, "remote-ctx", c)
		if _, err := e.Ping(t.Context()); err != nil {
			t.Errorf("ping through a docker context: %v", err)
		}
	})

	t.Run("SSHHostKeyNotTrusted", func(t *testing.T) {
		t.Parallel()
		_, port, _ := net.SplitHostPort(remote.SSHAddr)
		other := filepath.Join(t.TempDir(), "known_hosts")
		line := knownhosts.Line([]string{knownhosts.Normalize(remote.SSHAddr)}, newHostKey(t)) + "\n"
		if err := os.WriteFile(other, []byte(line), 0o600); err != nil {
			t.Fatal(err)
		}
		empty := filepath.Join(t.TempDir(), "known_hosts")
		if err := os.WriteFile(empty, nil, 0o600); err != nil {
			t.Fatal(err)
		}
		missing := filepath.Join(t.TempDir(), "known_hosts")
		tests := []struct {
			name, file string
			want       []string
		}{
			{"mismatch", other, []string{"does not match " + other + ":1", "someone may be in between", "ssh-keygen -R", "ssh-keyscan -p " + port + " 127.0.0.1 >> " + other}},
			{"unknown host", empty, []string{"is not in " + empty, "SHA256:", "ssh-keyscan -p " + port + " 127.0.0.1 >> " + empty}},
			{"no known_hosts", missing, []string{missing + " does not exist", "ssh-keyscan -p " + port}},
		}
		for _, tt := range tests {
			t.Run(tt.name, func(t *testing.T) {
				specs, err := kennel.ParseEngines("remote-ssh=" + remote.SSHURL + "?key=" + remote.SSHKey + "&known_hosts=" + tt.file)
				if err != nil {
					t.Fatal(err)
				}
				_, err = kennel.Dial(t.Context(), specs[0], cfg)
				if !errors.Is(err, kennel.ErrHostKey) {
					t.Fatalf("Dial: %v, want ErrHostKey", err)
				}
				t.Log(err)
				for _, w := range append(tt.want, `engine "remote-ssh"`) {
					if !strings.Contains(err.Error(), w) {
						t.Errorf("Dial: %v\nwant it to say %q", err, w)
					}
				}
			})
		}
	})

	t.Run("ExpiredClientCertificate", func(t *testing.T) {
		t.Parallel()
		// The engine's own material, two days on: the client certificate
		// (valid for a day) has expired.
		c := cfg
		c.Now = func() time.Time { return time.Now().Add(48 * time.Hour) }
		specs, err := kennel.ParseEngines(tlsEntry(remote))
		if err != nil {
			t.Fatal(err)
		}
		_, err = kennel.Dial(t.Context(), specs[0], c)
		if !errors.Is(err, kennel.ErrCertExpired) || !strings.Contains(err.Error(), `engine "remote-tls"`) {
			t.Errorf("Dial with expired material: %v", err)
		}
	})

	t.Run("EnsureImageCopiesOnce", func(t *testing.T) {
		t.Parallel()
		e := dialSpec(t, sshEntry(remote), cfg)
		ref := uniqueTag(t, local, testkit.KennelImage(t))
		t.Cleanup(func() { e.ImageRemove(context.Background(), ref, image.RemoveOptions{}) })
		copied, err := kennel.EnsureImage(t.Context(), local, e, ref)
		if err != nil || !copied {
			t.Fatalf("EnsureImage: copied %v, %v; want a copy", copied, err)
		}
		copied, err = kennel.EnsureImage(t.Context(), local, e, ref)
		if err != nil || copied {
			t.Errorf("EnsureImage again: copied %v, %v; want nothing to do", copied, err)
		}
	})

	for _, entry := range []func(*testkit.Engine) string{tlsEntry, sshEntry} {
		e := dialSpec(t, entry(remote), cfg)
		t.Run("KennelExec/"+e.Name(), func(t *testing.T) {
			t.Parallel()
			img := testkit.KennelImage(t)
			if _, err := kennel.EnsureImage(t.Context(), local, e, img); err != nil {
				t.Fatal(err)
			}
			ws := remoteWorkspace(t, e, img)
			k, err := kennel.New(e, kennel.Config{
				Image:    img,
				Instance: "test-" + strings.ToLower(cryptorand.Text()[:10]),
				Memory:   256 << 20,
				CPUs:     1,
				Pids:     64,
				TmpSize:  16 << 20,
				HomeSize: 16 << 20,
			}, slog.New(slog.NewTextHandler(t.Output(), nil)))
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() {
				if err := k.Remove(context.Background(), ws); err != nil {
					t.Errorf("remove: %v", err)
				}
			})
			// stdin copied in, then closed (CloseWrite on the hijacked
			// stream), output back line by line.
			var lines []string
			res, err := k.Exec(t.Context(), kennel.ExecSpec{
				Workspace: ws,
				Argv:      []string{"cat"},
				Stdin:     strings.NewReader("through " + e.Name() + "\n"),
			}, func(s kennel.Stream, line []byte) { lines = append(lines, s.String()+": "+string(line)) })
			if err != nil || res.ExitCode != 0 {
				t.Fatalf("Exec cat: %+v, %v", res, err)
			}
			if want := []string{"stdout: through " + e.Name()}; !cmp.Equal(lines, want) {
				t.Errorf("Exec cat: %q, want %q", lines, want)
			}
			res, err = k.Exec(t.Context(), kennel.ExecSpec{Workspace: ws, Argv: []string{"sh", "-c", "pwd; exit 3"}},
				func(kennel.Stream, []byte) {})
			if err != nil || res.ExitCode != 3 {
				t.Errorf("Exec exit 3: %+v, %v", res, err)
			}
		})
	}
}

// TestEngineSSHReconnects restarts an engine under an open SSH engine: the
// connection drops, and the next request makes a new one.
func TestEngineSSHReconnects(t *testing.T) {
	remote := testkit.NewRemoteEngine(t)
	e := dialSpec(t, sshEntry(remote), localConfig(t))
	remote.Stop(t)
	ctx, cancel := context.WithTimeout(t.Context(), 5*time.Second)
	_, err := e.Ping(ctx)
	cancel()
	if !errors.Is(err, kennel.ErrEngineUnavailable) || !strings.Contains(err.Error(), `engine "remote-ssh"`) {
		t.Errorf("ping a stopped engine: %v, want ErrEngineUnavailable naming the engine", err)
	}
	t.Logf("ping a stopped engine: %v", err)
	if !client.IsErrConnectionFailed(err) {
		t.Errorf("ping a stopped engine: %v, want a connection failure for the SDK's IsErrConnectionFailed", err)
	}
	remote.Start(t)
	if _, err := e.Ping(t.Context()); err != nil {
		t.Errorf("ping after the restart: %v", err)
	}
}

func TestDialUnreachable(t *testing.T) {
	port := closedPort(t)
	certs := t.TempDir()
	writeCerts(t, certs, time.Now().Add(-time.Hour), time.Now().Add(time.Hour))
	key := writeUserKey(t)
	kh := filepath.Join(t.TempDir(), "known_hosts")
	if err := os.WriteFile(kh, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	for _, entry := range []string{
		"gone=tcp://127.0.0.1:" + port + "?certs=" + certs,
		"gone=ssh://fetch@127.0.0.1:" + port + "?key=" + key + "&known_hosts=" + kh,
		"gone=unix://" + filepath.Join(t.TempDir(), "docker.sock"),
	} {
		t.Run(entry, func(t *testing.T) {
			specs, err := kennel.ParseEngines(entry)
			if err != nil {
				t.Fatal(err)
			}
			_, err = kennel.Dial(t.Context(), specs[0], kennel.DialConfig{Home: t.TempDir()})
			if !errors.Is(err, kennel.ErrEngineUnavailable) || !strings.Contains(err.Error(), `engine "gone"`) {
				t.Errorf("Dial: %v, want ErrEngineUnavailable naming the engine", err)
			}
			t.Log(err)
		})
	}
}

func TestDialExpiredCertificate(t *testing.T) {
	tests := []struct {
		name                string
		notBefore, notAfter time.Time
		want                string
	}{
		{"expired", time.Now().Add(-48 * time.Hour), time.Now().Add(-24 * time.Hour), "client certificate " + "%s/cert.pem expired on"},
		{"not yet valid", time.Now().Add(24 * time.Hour), time.Now().Add(48 * time.Hour), "is valid only from"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			writeCerts(t, dir, tt.notBefore, tt.notAfter)
			specs, err := kennel.ParseEngines("old=tcp://127.0.0.1:" + closedPort(t) + "?certs=" + dir)
			if err != nil {
				t.Fatal(err)
			}
			_, err = kennel.Dial(t.Context(), specs[0], kennel.DialConfig{})
			want := tt.want
			if strings.Contains(want, "%s") {
				want = fmt.Sprintf(want, dir)
			}
			if !errors.Is(err, kennel.ErrCertExpired) || !strings.Contains(err.Error(), want) || !strings.Contains(err.Error(), `engine "old"`) {
				t.Errorf("Dial: %v, want ErrCertExpired saying %q", err, want)
			}
		})
	}
}

// uniqueTag tags img with a new name on c, untagged when t ends.
func uniqueTag(t *testing.T, c *kennel.Engine, img string) string {
	t.Helper()
	ref := "fetch-engines-test:" + strings.ToLower(cryptorand.Text()[:12])
	if err := c.ImageTag(t.Context(), img, ref); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.ImageRemove(context.Background(), ref, image.RemoveOptions{}) })
	return ref
}

// remoteWorkspace makes a directory on the engine's host, for a kennel's
// bind mount there: a root container of img with the host's /tmp mounted
// creates it.
func remoteWorkspace(t *testing.T, e *kennel.Engine, img string) string {
	t.Helper()
	ctx := t.Context()
	ws := "/tmp/fetch-ws-" + strings.ToLower(cryptorand.Text()[:10])
	created, err := e.ContainerCreate(ctx,
		&container.Config{Image: img, User: "0:0", Entrypoint: []string{"mkdir", "-m", "0777", "/host" + ws}},
		&container.HostConfig{Binds: []string{"/tmp:/host/tmp"}}, nil, nil, "")
	if err != nil {
		t.Fatal(err)
	}
	defer e.ContainerRemove(context.WithoutCancel(ctx), created.ID, container.RemoveOptions{Force: true})
	waitC, errC := e.ContainerWait(ctx, created.ID, container.WaitConditionNextExit)
	if err := e.ContainerStart(ctx, created.ID, container.StartOptions{}); err != nil {
		t.Fatal(err)
	}
	select {
	case w := <-waitC:
		if w.StatusCode != 0 {
			t.Fatalf("mkdir %s on the engine: exit %d", ws, w.StatusCode)
		}
	case err := <-errC:
		t.Fatal(err)
	}
	return ws
}

// newHostKey is a fresh Ed25519 public key.
func newHostKey(t testing.TB) ssh.PublicKey {
	t.Helper()
	pub, _, err := ed25519.GenerateKey(cryptorand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	k, err := ssh.NewPublicKey(pub)
	if err != nil {
		t.Fatal(err)
	}
	return k
}

// writeUserKey writes a fresh SSH user key and returns its path.
func writeUserKey(t testing.TB) string {
	t.Helper()
	_, priv, err := ed25519.GenerateKey(cryptorand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	block, err := ssh.MarshalPrivateKey(priv, "test")
	if err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(t.TempDir(), "id_ed25519")
	if err := os.WriteFile(p, pem.EncodeToMemory(block), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

// writeCerts writes ca.pem, cert.pem and key.pem into dir: a CA valid now
// and a client certificate valid from notBefore to notAfter.
func writeCerts(t testing.TB, dir string, notBefore, notAfter time.Time) {
	t.Helper()
	caKey, err := ecdsa.GenerateKey(elliptic.P256(), cryptorand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	caTmpl := &x509.Certificate{
		SerialNumber:          big.NewInt(1),
		Subject:               pkix.Name{CommonName: "test CA"},
		NotBefore:             time.Now().Add(-time.Hour),
		NotAfter:              time.Now().Add(72 * time.Hour),
		KeyUsage:              x509.KeyUsageCertSign,
		BasicConstraintsValid: true,
		IsCA:                  true,
	}
	caDER, err := x509.CreateCertificate(cryptorand.Reader, caTmpl, caTmpl, &caKey.PublicKey, caKey)
	if err != nil {
		t.Fatal(err)
	}
	ca, err := x509.ParseCertificate(caDER)
	if err != nil {
		t.Fatal(err)
	}
	key, err := ecdsa.GenerateKey(elliptic.P256(), cryptorand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	der, err := x509.CreateCertificate(cryptorand.Reader, &x509.Certificate{
		SerialNumber: big.NewInt(2),
		Subject:      pkix.Name{CommonName: "test client"},
		NotBefore:    notBefore,
		NotAfter:     notAfter,
		KeyUsage:     x509.KeyUsageDigitalSignature,
		ExtKeyUsage:  []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth},
	}, ca, &key.PublicKey, caKey)
	if err != nil {
		t.Fatal(err)
	}
	pkcs8, err := x509.MarshalPKCS8PrivateKey(key)
	if err != nil {
		t.Fatal(err)
	}
	files := map[string][]byte{
		"ca.pem":   pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: caDER}),
		"cert.pem": pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}),
		"key.pem":  pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: pkcs8}),
	}
	for name, b := range files {
		if err := os.WriteFile(filepath.Join(dir, name), b, 0o600); err != nil {
			t.Fatal(err)
		}
	}
}

// closedPort is a port on 127.0.0.1 that nothing listens on (a moment ago).
func closedPort(t testing.TB) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	_, port, _ := net.SplitHostPort(l.Addr().String())
	l.Close()
	return port
}

// TestResolveLocalFromContext: without DOCKER_HOST, the local engine is the
// docker CLI's: DOCKER_CONTEXT, else config.json's currentContext; DOCKER_HOST
// wins over both, and the "default" context is the default socket.
func TestResolveLocalFromContext(t *testing.T) {
	store := filepath.Join(t.TempDir(), "docker-config")
	writeContext(t, store, "rootless", "unix:///run/user/1000/docker.sock", false, false)
	writeContext(t, store, "other", "unix:///run/other.sock", false, false)
	if err := os.WriteFile(filepath.Join(store, "config.json"), []byte(`{"auths":{},"currentContext":"rootless"}`), 0o600); err != nil {
		t.Fatal(err)
	}
	local := kennel.EngineSpec{Name: "local", Kind: kennel.EngineLocal}
	for _, tt := range []struct {
		name string
		cfg  kennel.DialConfig
		host string
	}{
		{"current context", kennel.DialConfig{DockerConfig: store}, "unix:///run/user/1000/docker.sock"},
		{"DOCKER_CONTEXT", kennel.DialConfig{DockerConfig: store, DockerContext: "other"}, "unix:///run/other.sock"},
		{"DOCKER_HOST wins", kennel.DialConfig{DockerConfig: store, DockerHost: "unix:///x.sock"}, "unix:///x.sock"},
		{"default context", kennel.DialConfig{DockerConfig: store, DockerContext: "default"}, "unix:///var/run/docker.sock"},
	} {
		got, err := local.Resolve(tt.cfg)
		if err != nil || got.Host != tt.host || got.Name != "local" {
			t.Errorf("%s: %+v, %v; want host %s", tt.name, got, err, tt.host)
		}
	}
	if _, err := local.Resolve(kennel.DialConfig{DockerConfig: store, DockerContext: "gone"}); err == nil || !strings.Contains(err.Error(), `no docker context "gone"`) {
		t.Errorf("unknown DOCKER_CONTEXT: %v", err)
	}
}
