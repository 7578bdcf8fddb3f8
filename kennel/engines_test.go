package kennel_test

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

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
