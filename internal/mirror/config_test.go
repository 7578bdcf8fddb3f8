package mirror

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// The settings written as text are the ones git reads back.
func TestAppendConfigIsWhatGitReads(t *testing.T) {
	path := filepath.Join(t.TempDir(), "config")
	if err := os.WriteFile(path, []byte("[core]\n\tbare = false\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := appendConfig(path, repoConfig); err != nil {
		t.Fatal(err)
	}
	for _, kv := range repoConfig {
		out, err := exec.Command("git", "config", "--file", path, "--get", kv[0]).Output()
		if err != nil && kv[1] != "" {
			t.Fatalf("git config --get %s: %v", kv[0], err)
		}
		if got := strings.TrimSuffix(string(out), "\n"); got != kv[1] {
			t.Errorf("%s = %q, want %q", kv[0], got, kv[1])
		}
	}
	for _, bad := range [][2]string{{"nodot", "x"}, {"a.b", "x\n[core]"}, {"a.", "x"}, {"a.b", `"q"`}} {
		if err := appendConfig(path, [][2]string{bad}); err == nil {
			t.Errorf("%q accepted", bad)
		}
	}
}
