package deptest

import (
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestGoroutineLeakChecks: every package whose code starts goroutines
// checks, in its tests, that none is left behind (goleak in TestMain or a
// test). A package that starts goroutines without that check fails here.
func TestGoroutineLeakChecks(t *testing.T) {
	root := repoRoot(t)
	starts := map[string]bool{} // package dir → starts goroutines
	checks := map[string]bool{} // package dir → its tests use goleak
	fset := token.NewFileSet()
	err := filepath.WalkDir(root, func(path string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if name := d.Name(); path != root && (strings.HasPrefix(name, ".") || name == "testdata") {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(path, ".go") {
			return nil
		}
		dir, _ := filepath.Rel(root, filepath.Dir(path))
		src, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		if strings.HasSuffix(path, "_test.go") {
			if strings.Contains(string(src), "go.uber.org/goleak") {
				checks[dir] = true
			}
			return nil
		}
		f, err := parser.ParseFile(fset, path, src, 0)
		if err != nil {
			return err
		}
		ast.Inspect(f, func(n ast.Node) bool {
			if _, ok := n.(*ast.GoStmt); ok {
				starts[dir] = true
				return false
			}
			return true
		})
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	for dir := range starts {
		if !checks[dir] {
			t.Errorf("%s starts goroutines but its tests do not check for leaks (goleak.VerifyTestMain or goleak.VerifyNone)", dir)
		}
	}
	if len(starts) == 0 {
		t.Fatal("found no package that starts goroutines: the walk is broken")
	}
}

// repoRoot is the module's root directory, from go env GOMOD.
func repoRoot(t *testing.T) string {
	t.Helper()
	out, err := exec.CommandContext(t.Context(), "go", "env", "GOMOD").Output()
	if err != nil || len(strings.TrimSpace(string(out))) == 0 {
		t.Fatalf("go env GOMOD: %v", err)
	}
	return filepath.Dir(strings.TrimSpace(string(out)))
}
