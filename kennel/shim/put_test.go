package shim

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestPutStaysInsideItsRoot(t *testing.T) {
	root := filepath.Join(t.TempDir(), "ws", ".fetch", "in")
	if err := putFile(root, "t1/shot.png", strings.NewReader("png")); err != nil {
		t.Fatal(err)
	}
	if got, err := os.ReadFile(filepath.Join(root, "t1", "shot.png")); err != nil || string(got) != "png" {
		t.Fatalf("the file = %q, %v", got, err)
	}
	for _, rel := range []string{"../out.txt", "/etc/passwd", "..", "."} {
		if err := putFile(root, rel, strings.NewReader("x")); !errors.Is(err, errPutPath) {
			t.Errorf("put %q: %v; want errPutPath", rel, err)
		}
	}
	// A symlink planted on the way does not lead the write out.
	outside := t.TempDir()
	if err := os.Symlink(outside, filepath.Join(root, "t2")); err != nil {
		t.Fatal(err)
	}
	if err := putFile(root, "t2/x.txt", strings.NewReader("x")); err == nil {
		t.Error("put followed a symlink out of its root")
	}
	if _, err := os.Stat(filepath.Join(outside, "x.txt")); err == nil {
		t.Error("the file was written outside the root")
	}
}
