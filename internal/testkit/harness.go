package testkit

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"testing"
)

// HarnessRepo is the repository name of the harness test image; the tag is a
// hash of the kennel test image and the fake CLI.
const HarnessRepo = "fetch-kennel-harness"

// HarnessImage returns the kennel test image (KennelImage) with the scripted
// fake CLI installed under every name of FakeCLINames in /usr/local/bin. It
// is built once per content (see KennelLayer) and reused across test
// processes.
func HarnessImage(t testing.TB) string {
	t.Helper()
	base := KennelImage(t)
	data, err := os.ReadFile(FakeCLI(t))
	if err != nil {
		t.Fatalf("testkit: %v", err)
	}
	var files []ImageFile
	for _, name := range FakeCLINames() {
		files = append(files, ImageFile{Path: "/usr/local/bin/" + name, Mode: 0o755, Data: data})
	}
	return KennelLayer(t, base, HarnessRepo, files)
}

// FakeCLINames are the program names the scripted coding CLI
// (internal/testkit/fakecli) answers to: those of the CLIs Fetch drives.
func FakeCLINames() []string {
	return []string{"claude", "codex", "gemini", "copilot", "opencode", "qwen", "cursor-agent", "aider"}
}

// FakeCLI builds internal/testkit/fakecli as a static binary (CGO_ENABLED=0)
// and returns its path. The binary is cached in the temporary directory
// under the hash of the fake's sources and the Go version, so repeated and
// concurrent test processes build it once.
func FakeCLI(t testing.TB) string {
	t.Helper()
	src := fakeCLISource(t)
	sum, err := hashDir(src)
	if err != nil {
		t.Fatalf("testkit: hash fakecli sources: %v", err)
	}
	dir := filepath.Join(os.TempDir(), "fetch-fakecli-"+sum[:16])
	bin := filepath.Join(dir, "fakecli")
	if _, err := os.Stat(bin); err == nil {
		return bin
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatalf("testkit: %v", err)
	}
	tmp, err := os.CreateTemp(dir, "fakecli-build-*")
	if err != nil {
		t.Fatalf("testkit: %v", err)
	}
	tmp.Close()
	defer os.Remove(tmp.Name())
	cmd := exec.Command(goTool(), "build", "-trimpath", "-ldflags=-s -w", "-o", tmp.Name(), ".")
	cmd.Dir = src
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0", "GOOS=linux")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("testkit: build fakecli: %v\n%s", err, out)
	}
	// Rename is atomic: a concurrent builder's binary is as good as ours.
	if err := os.Rename(tmp.Name(), bin); err != nil {
		t.Fatalf("testkit: %v", err)
	}
	return bin
}

// FakeCLIBin returns a directory in which the fake CLI is installed under
// every name of FakeCLINames, for running it on the host.
func FakeCLIBin(t testing.TB) string {
	t.Helper()
	bin := FakeCLI(t)
	dir := t.TempDir()
	for _, name := range FakeCLINames() {
		if err := os.Symlink(bin, filepath.Join(dir, name)); err != nil {
			t.Fatalf("testkit: %v", err)
		}
	}
	return dir
}

// fakeCLISource is the directory of the fakecli package.
func fakeCLISource(t testing.TB) string {
	t.Helper()
	return filepath.Join(repoRoot(t), "internal", "testkit", "fakecli")
}

// hashDir hashes the names and contents of the .go files in dir, and the Go
// version that builds them.
func hashDir(dir string) (string, error) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return "", err
	}
	h := sha256.New()
	h.Write([]byte(runtime.Version()))
	var names []string
	for _, e := range entries {
		if filepath.Ext(e.Name()) == ".go" {
			names = append(names, e.Name())
		}
	}
	if len(names) == 0 {
		return "", errors.New("no Go files")
	}
	slices.Sort(names)
	for _, n := range names {
		b, err := os.ReadFile(filepath.Join(dir, n))
		if err != nil {
			return "", err
		}
		h.Write([]byte(n + "\x00"))
		h.Write(b)
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}

// goTool returns the go command that runs the tests.
func goTool() string {
	if p, err := exec.LookPath("go"); err == nil {
		return p
	}
	p := filepath.Join(runtime.GOROOT(), "bin", "go")
	if _, err := os.Stat(p); errors.Is(err, fs.ErrNotExist) {
		return "go"
	}
	return p
}
