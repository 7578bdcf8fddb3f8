package shim

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// outfilesWorld is a workspace with a work tree whose out folder holds
// what a CLI left, and a secret outside the work tree.
func outfilesWorld(t *testing.T) (root, rel, outside string) {
	t.Helper()
	root = t.TempDir()
	rel = "wt/.fetch/out"
	out := filepath.Join(root, rel)
	if err := os.MkdirAll(out, 0o755); err != nil {
		t.Fatal(err)
	}
	outside = filepath.Join(t.TempDir(), "passwd")
	write := func(p, s string) {
		t.Helper()
		if err := os.WriteFile(p, []byte(s), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write(outside, "root:x:0:0:secret")
	write(filepath.Join(out, "b.png"), "\x89PNG\r\n\x1a\nbytes")
	write(filepath.Join(out, "a.txt"), "notes")
	write(filepath.Join(out, "big.bin"), strings.Repeat("x", 100))
	if err := os.Symlink(outside, filepath.Join(out, "leak.txt")); err != nil {
		t.Fatal(err)
	}
	if err := os.Link(filepath.Join(out, "a.txt"), filepath.Join(root, "wt", "a-again.txt")); err != nil {
		t.Fatal(err)
	}
	write(filepath.Join(out, "c.txt"), "linked")
	if err := os.Link(outside, filepath.Join(out, "hard.txt")); err != nil {
		t.Fatal(err)
	}
	if err := os.Mkdir(filepath.Join(out, "sub"), 0o755); err != nil {
		t.Fatal(err)
	}
	return root, rel, outside
}

// outfiles runs the outfiles command on root/rel (at most 10 files of 50
// bytes) and returns what it printed.
func outfiles(t *testing.T, root, rel string) *bytes.Buffer {
	t.Helper()
	var out, errOut bytes.Buffer
	if code := Main(t.Context(), OutfilesArgv(root, rel, OutLimits{Files: 10, Bytes: 50, Total: 1000})[1:], &out, &errOut); code != ExitOK {
		t.Fatalf("exit %d: %s", code, errOut.String())
	}
	return &out
}

func TestOutfilesSendsRegularFilesOnlyAndEmptiesTheFolder(t *testing.T) {
	root, rel, outside := outfilesWorld(t)
	// a.txt has a second name: not sent.
	files, err := ReadOutfiles(outfiles(t, root, rel), OutLimits{Files: 10, Bytes: 50, Total: 1000})
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]OutFile{}
	for _, f := range files {
		got[f.Name] = f
	}
	if f := got["b.png"]; f.Skipped != "" || string(f.Data) != "\x89PNG\r\n\x1a\nbytes" {
		t.Errorf("b.png = %+v; want sent whole", f)
	}
	if f := got["c.txt"]; f.Skipped != "" || string(f.Data) != "linked" {
		t.Errorf("c.txt = %+v; want sent", f)
	}
	for name, why := range map[string]string{"leak.txt": "symlink", "a.txt": "hard link", "hard.txt": "hard link", "big.bin": "over 50 bytes", "sub": "folder"} {
		if f := got[name]; !strings.Contains(f.Skipped, why) || f.Data != nil {
			t.Errorf("%s = %+v; want skipped as a %s, without data", name, f, why)
		}
	}
	left, err := os.ReadDir(filepath.Join(root, rel))
	if err != nil {
		t.Fatal(err)
	}
	if len(left) != 1 || left[0].Name() != "sub" {
		t.Errorf("left in the folder: %v; want only the folder sub", left)
	}
	if data, err := os.ReadFile(outside); err != nil || string(data) != "root:x:0:0:secret" {
		t.Errorf("the file a link named: %q, %v; want it untouched", data, err)
	}
}

func TestOutfilesCountsAndFolderLinks(t *testing.T) {
	root := t.TempDir()
	out := filepath.Join(root, "wt", ".fetch", "out")
	if err := os.MkdirAll(out, 0o755); err != nil {
		t.Fatal(err)
	}
	for _, n := range []string{"1", "2", "3"} {
		if err := os.WriteFile(filepath.Join(out, n+".txt"), []byte(n), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	var buf, errOut bytes.Buffer
	if code := Main(t.Context(), OutfilesArgv(root, "wt/.fetch/out", OutLimits{Files: 2, Bytes: 10, Total: 1000})[1:], &buf, &errOut); code != ExitOK {
		t.Fatalf("exit %d: %s", code, errOut.String())
	}
	files, err := ReadOutfiles(&buf, OutLimits{Files: 2, Bytes: 10, Total: 1000})
	if err != nil || len(files) != 3 || files[0].Skipped != "" || files[1].Skipped != "" || !strings.Contains(files[2].Skipped, "over the 2 files") {
		t.Fatalf("files %+v, %v; want 1.txt and 2.txt sent, 3.txt over the count", files, err)
	}

	// And the total: two bytes in all.
	for _, n := range []string{"1", "2", "3"} {
		if err := os.WriteFile(filepath.Join(out, n+".txt"), []byte(n), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	buf.Reset()
	if code := Main(t.Context(), OutfilesArgv(root, "wt/.fetch/out", OutLimits{Files: 10, Bytes: 10, Total: 2})[1:], &buf, &errOut); code != ExitOK {
		t.Fatalf("exit %d: %s", code, errOut.String())
	}
	files, err = ReadOutfiles(&buf, OutLimits{Files: 10, Bytes: 10, Total: 2})
	if err != nil || len(files) != 3 || files[1].Skipped != "" || !strings.Contains(files[2].Skipped, "over the 2 bytes") {
		t.Fatalf("files %+v, %v; want 1.txt and 2.txt sent, 3.txt over the total", files, err)
	}

	// The folder (or a folder on the way) planted as a symlink is not
	// followed.
	elsewhere := t.TempDir()
	if err := os.WriteFile(filepath.Join(elsewhere, "x.txt"), []byte("elsewhere"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.RemoveAll(filepath.Join(root, "wt", ".fetch")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(elsewhere, filepath.Join(root, "wt", ".fetch")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(".", filepath.Join(elsewhere, "out")); err != nil {
		t.Fatal(err)
	}
	buf.Reset()
	errOut.Reset()
	if code := Main(t.Context(), OutfilesArgv(root, "wt/.fetch/out", OutLimits{Files: 2, Bytes: 10, Total: 1000})[1:], &buf, &errOut); code != ExitFailed {
		t.Fatalf("exit %d, stdout %q; want a failure for a folder through a symlink", code, buf.String())
	}
	if _, err := os.Stat(filepath.Join(elsewhere, "x.txt")); err != nil {
		t.Errorf("a file through the symlink was removed: %v", err)
	}

	// No folder: nothing, without a failure.
	buf.Reset()
	if code := Main(t.Context(), OutfilesArgv(root, "none/.fetch/out", OutLimits{Files: 2, Bytes: 10, Total: 1000})[1:], &buf, &errOut); code != ExitOK {
		t.Fatalf("exit %d: %s", code, errOut.String())
	}
	if files, err := ReadOutfiles(&buf, OutLimits{Files: 2, Bytes: 10, Total: 1000}); err != nil || len(files) != 0 {
		t.Fatalf("files %+v, %v; want none", files, err)
	}
	for _, bad := range []string{"../x", "a/./b", "", "/abs"} {
		if code := Main(t.Context(), OutfilesArgv(root, bad, OutLimits{Files: 2, Bytes: 10, Total: 1000})[1:], &buf, &errOut); code != ExitUsage {
			t.Errorf("--dir %q: exit %d; want usage", bad, code)
		}
	}
}

func TestOutfilesInABatch(t *testing.T) {
	root, rel, _ := outfilesWorld(t)
	prog, _ := json.Marshal(Batch{Steps: []BatchStep{{Argv: OutfilesArgv(root, rel, OutLimits{Files: 10, Bytes: 50, Total: 1000}), Base64: true}}})
	res, code, stderr := runBatchJSON(t, string(prog))
	if code != ExitOK || len(res.Steps) != 1 || res.Steps[0].Exit != 0 {
		t.Fatalf("exit %d, %+v: %s", code, res, stderr)
	}
	data, err := base64.StdEncoding.DecodeString(res.Steps[0].Stdout)
	if err != nil {
		t.Fatal(err)
	}
	files, err := ReadOutfiles(bytes.NewReader(data), OutLimits{Files: 10, Bytes: 50, Total: 1000})
	if err != nil || len(files) != 7 {
		t.Fatalf("files %+v, %v; want the seven entries", files, err)
	}
}

func TestReadOutfilesHoldsTheLimitsAgain(t *testing.T) {
	root, rel, _ := outfilesWorld(t)
	// The kennel's shim may be a forged one: the reader's limits hold.
	files, err := ReadOutfiles(outfiles(t, root, rel), OutLimits{Files: 1, Bytes: 6, Total: 1000})
	if err != nil {
		t.Fatal(err)
	}
	sent := 0
	for _, f := range files {
		if f.Skipped == "" {
			sent++
			if len(f.Data) > 6 {
				t.Errorf("%s: %d bytes read; want at most 6", f.Name, len(f.Data))
			}
		}
	}
	if sent != 1 {
		t.Errorf("%d files sent; want 1 (c.txt)", sent)
	}
}
