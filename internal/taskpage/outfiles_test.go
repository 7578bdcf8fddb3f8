package taskpage

import (
	"context"
	"html"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/fetch-dev/fetch/internal/task"
)

func (f *tasks) OutFiles(_ context.Context, id string) ([]task.OutFile, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]task.OutFile(nil), f.out[id]...), nil
}

func (f *tasks) OutFileData(_ context.Context, id string, run int, name string) (task.OutFile, error) {
	files, _ := f.OutFiles(context.Background(), id)
	for _, o := range files {
		if o.Run == run && o.Name == name && o.Path != "" {
			data, err := os.ReadFile(o.Path)
			if err != nil {
				return task.OutFile{}, err
			}
			o.Data = data
			return o, nil
		}
	}
	return task.OutFile{}, task.ErrNotFound
}

func (f *tasks) putOut(t *testing.T, id string, files ...task.OutFile) {
	t.Helper()
	dir := t.TempDir()
	for i, o := range files {
		if o.Data != nil {
			o.Path = filepath.Join(dir, o.Name)
			if err := os.WriteFile(o.Path, o.Data, 0o600); err != nil {
				t.Fatal(err)
			}
			files[i] = o
		}
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.out == nil {
		f.out = map[string][]task.OutFile{}
	}
	f.out[id] = files
}

func TestPageShowsAndServesOutFiles(t *testing.T) {
	f := newFixture(t)
	png := []byte("\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR")
	f.tasks.putOut(t, "ab12cd34",
		task.OutFile{Name: "shot.png", Run: 1, Size: int64(len(png)), MediaType: "image/png", Data: png},
		task.OutFile{Name: "notes.txt", Run: 1, Size: 20, MediaType: "text/plain; charset=utf-8", Data: []byte("key " + planted + "\n")},
		task.OutFile{Name: "logo.svg", Run: 1, Size: 30, MediaType: "text/plain; charset=utf-8", Data: []byte(`<svg onload="alert(1)"></svg>`)},
		task.OutFile{Name: "leak.txt", Run: 1, Skipped: "a symlink (only files are sent, never what a link names)"},
	)
	code, page := f.get(t, f.links.Task("ab12cd34"))
	if code != http.StatusOK {
		t.Fatalf("task page = %d:\n%s", code, page)
	}
	img := regexp.MustCompile(`<img src="([^"]+)" alt="shot.png">`).FindStringSubmatch(page)
	if img == nil {
		t.Fatalf("the page shows no picture shot.png:\n%s", page)
	}
	if !strings.Contains(page, "leak.txt") || !strings.Contains(page, "not sent: a symlink") {
		t.Errorf("the page does not say leak.txt was not sent")
	}
	base := f.http.URL + "/t/"
	get := func(href string) *http.Response {
		t.Helper()
		resp, err := http.Get(base + html.UnescapeString(href))
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { resp.Body.Close() })
		return resp
	}
	resp := get(img[1])
	if resp.StatusCode != http.StatusOK || resp.Header.Get("Content-Type") != "image/png" || resp.Header.Get("X-Content-Type-Options") != "nosniff" ||
		!strings.HasPrefix(resp.Header.Get("Content-Disposition"), "inline") || !strings.Contains(resp.Header.Get("Content-Security-Policy"), "sandbox") {
		t.Errorf("the picture is served as %d %v; want image/png inline, nosniff, sandboxed", resp.StatusCode, resp.Header)
	}
	for _, name := range []string{"notes.txt", "logo.svg"} {
		href := regexp.MustCompile(`<a href="([^"]+)" download>` + regexp.QuoteMeta(name) + `</a>`).FindStringSubmatch(page)
		if href == nil {
			t.Errorf("the page has no download link for %s", name)
			continue
		}
		resp := get(href[1])
		var body strings.Builder
		buf := make([]byte, 1024)
		n, _ := resp.Body.Read(buf)
		body.Write(buf[:n])
		if resp.Header.Get("Content-Type") != "application/octet-stream" || !strings.HasPrefix(resp.Header.Get("Content-Disposition"), "attachment") || strings.Contains(body.String(), planted) {
			t.Errorf("%s served as %v, %q; want a download, redacted", name, resp.Header, body.String())
		}
	}
	// Not without the link, not another task's, not a file not kept.
	for _, link := range []string{
		f.http.URL + "/t/ab12cd34/out/1/shot.png",
		strings.Replace(f.links.Task("ab12cd35"), "/t/ab12cd35", "/t/ab12cd34/out/1/shot.png", 1),
	} {
		if code, _ := f.get(t, link); code != http.StatusUnauthorized {
			t.Errorf("GET %s = %d; want 401", link, code)
		}
	}
	for _, p := range []string{"/out/1/leak.txt", "/out/2/shot.png", "/out/0/shot.png", "/out/x/shot.png"} {
		link := strings.Replace(f.links.Task("ab12cd34"), "/t/ab12cd34", "/t/ab12cd34"+p, 1)
		if code, _ := f.get(t, link); code != http.StatusNotFound {
			t.Errorf("GET %s = %d; want 404", p, code)
		}
	}
}
