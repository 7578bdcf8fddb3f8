package task

import (
	"bytes"
	"errors"
	"image"
	"image/png"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/fetch-dev/fetch/internal/redact"
	"github.com/fetch-dev/fetch/internal/store"
	"github.com/fetch-dev/fetch/internal/workspace"
)

func TestOutMediaTypeGoesByContent(t *testing.T) {
	var pic bytes.Buffer
	if err := png.Encode(&pic, image.NewRGBA(image.Rect(0, 0, 1, 1))); err != nil {
		t.Fatal(err)
	}
	for name, tc := range map[string]struct {
		data []byte
		want string
	}{
		"png":    {pic.Bytes(), "image/png"},
		"svg":    {[]byte(`<svg xmlns="http://www.w3.org/2000/svg" onload="alert(1)"/>`), "text/plain; charset=utf-8"},
		"html":   {[]byte("<!DOCTYPE html><script>alert(1)</script>"), "text/plain; charset=utf-8"},
		"binary": {[]byte{0, 1, 2, 0xff}, "application/octet-stream"},
		"text":   {[]byte("notes\n"), "text/plain; charset=utf-8"},
	} {
		if got := mediaType(tc.data); got != tc.want {
			t.Errorf("%s: %q; want %q", name, got, tc.want)
		}
	}
}

// TestOutFilesAreScannedKeptAndListed: a file with what looks like a
// secret is neither kept nor sent and says why; the others are kept
// (0600) under OutDir/ID/RUN, listed and readable again; what the kennel
// skipped stays skipped.
func TestOutFilesAreScannedKeptAndListed(t *testing.T) {
	const secret = "sk-ant-api03-OUTFILEoutfile0123456789abcdefABCDEF-OUTFILExx"
	red, err := redact.New(secret)
	if err != nil {
		t.Fatal(err)
	}
	db, err := store.Open(t.Context(), filepath.Join(t.TempDir(), "fetch.db"), store.WithScrub(red.String))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	dir := t.TempDir()
	e := New(Config{Store: db, Logger: slog.New(slog.DiscardHandler), OutDir: dir, Secrets: red})
	tk := Task{ID: "t-1", Runs: 2}
	out := e.keepTaken(t.Context(), tk, []workspace.OutFile{
		{Name: "notes.txt", Data: []byte("all good\n")},
		{Name: "env.txt", Data: []byte("KEY=" + secret + "\n")},
		{Name: secret + ".txt", Data: []byte("a name\n")},
		{Name: "leak.txt", Skipped: "a symlink"},
	})
	if len(out) != 4 {
		t.Fatalf("%d files; want 4", len(out))
	}
	if f := out[0]; f.Skipped != "" || string(f.Data) != "all good\n" || f.Path != filepath.Join(dir, "t-1", "2", "notes.txt") {
		t.Errorf("notes.txt = %+v; want sent and kept under OutDir/t-1/2", f)
	}
	if fi, err := os.Stat(out[0].Path); err != nil || fi.Mode().Perm() != 0o600 {
		t.Errorf("notes.txt kept as %v, %v; want mode 0600", fi, err)
	}
	if f := out[1]; !strings.Contains(f.Skipped, "secrets") || !strings.Contains(f.Skipped, "env.txt:1") || f.Data != nil || f.Path != "" {
		t.Errorf("env.txt = %+v; want not sent, not kept, with where", f)
	}
	if f := out[2]; !strings.Contains(f.Skipped, "name") || f.Data != nil || f.Path != "" {
		t.Errorf("a secret name = %+v; want not sent", f)
	}
	if f := out[3]; f.Skipped != "a symlink" || f.Path != "" {
		t.Errorf("leak.txt = %+v; want skipped as the kennel said", f)
	}
	entries, _ := os.ReadDir(filepath.Join(dir, "t-1", "2"))
	if len(entries) != 1 {
		t.Errorf("kept %d files; want only notes.txt", len(entries))
	}

	listed, err := e.OutFiles(t.Context(), "t-1")
	if err != nil || len(listed) != 4 {
		t.Fatalf("listed %+v, %v; want 4", listed, err)
	}
	for _, f := range listed {
		if strings.Contains(f.Name, secret) || strings.Contains(f.Skipped, secret) {
			t.Errorf("the store holds the secret: %+v", f)
		}
	}
	got, err := e.OutFileData(t.Context(), "t-1", 2, "notes.txt")
	if err != nil || string(got.Data) != "all good\n" || got.MediaType != "text/plain; charset=utf-8" {
		t.Errorf("notes.txt read back as %+v, %v", got, err)
	}
	for _, name := range []string{"env.txt", "leak.txt", "none.txt"} {
		if _, err := e.OutFileData(t.Context(), "t-1", 2, name); !errors.Is(err, ErrNotFound) {
			t.Errorf("%s: %v; want ErrNotFound", name, err)
		}
	}
	if _, err := e.OutFileData(t.Context(), "t-1", 1, "notes.txt"); !errors.Is(err, ErrNotFound) {
		t.Errorf("notes.txt of run 1: %v; want ErrNotFound", err)
	}

	// A retold end carries the last run's files with their data.
	e.withOut(t.Context(), &tk)
	if len(tk.Out) != 4 || string(tk.Out[0].Data) != "all good\n" {
		t.Errorf("retold files: %+v", tk.Out)
	}
}
