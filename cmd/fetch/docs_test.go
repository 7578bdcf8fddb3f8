package main

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/fetch-dev/fetch/harness"
)

// TestEveryVariableIsDocumented: every environment variable Fetch reads
// (the env* constants and getenv calls of this command, and the coding
// CLIs' keys) is in the README, and Fetch's own are in fetch help too.
func TestEveryVariableIsDocumented(t *testing.T) {
	readme, err := os.ReadFile(filepath.Join("..", "..", "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	files, _ := filepath.Glob("*.go")
	constant := regexp.MustCompile(`\benv\w*\s*=\s*"([A-Z][A-Z0-9_]+)"`)
	call := regexp.MustCompile(`getenv\("([A-Z][A-Z0-9_]+)"\)`)
	vars := map[string]bool{}
	for _, f := range files {
		if strings.HasSuffix(f, "_test.go") {
			continue
		}
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		for _, re := range []*regexp.Regexp{constant, call} {
			for _, m := range re.FindAllSubmatch(b, -1) {
				vars[string(m[1])] = true
			}
		}
	}
	if len(vars) < 20 {
		t.Fatalf("found only %d variables: the patterns no longer match the code", len(vars))
	}
	for _, k := range harnessKeys() {
		vars[k.Name] = true
	}
	for v := range vars {
		if !regexp.MustCompile(`\b` + v + `\b`).Match(readme) {
			t.Errorf("%s is read by Fetch but not in README.md", v)
		}
		if strings.HasPrefix(v, "FETCH_") || v == envOpenRouter {
			if !strings.Contains(usage, v) {
				t.Errorf("%s is read by Fetch but not in fetch help", v)
			}
		}
	}
}

// TestHelpNamesEveryHarness: fetch help lists the valid FETCH_HARNESS
// values, which are the adapters'.
func TestHelpNamesEveryHarness(t *testing.T) {
	i := strings.Index(configHelp, "FETCH_HARNESS")
	j := strings.Index(configHelp[i:], "\n  FETCH_TASK_TIMEOUT")
	if i < 0 || j < 0 {
		t.Fatal("fetch help has no FETCH_HARNESS entry before FETCH_TASK_TIMEOUT")
	}
	entry := configHelp[i : i+j]
	for _, n := range harness.NewRegistry().Names() {
		if !regexp.MustCompile(`\b` + string(n) + `\b`).MatchString(entry) {
			t.Errorf("fetch help's FETCH_HARNESS entry does not name %s:\n%s", n, entry)
		}
	}
}
