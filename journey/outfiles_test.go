package journey

import (
	"bytes"
	"html"
	stdimage "image"
	"image/color"
	"image/png"
	"io"
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"testing"

	"github.com/fetch-dev/fetch/internal/testkit"
)

// fakePNG is the picture the scripted CLI leaves in [scenario:out-file]
// (internal/testkit/fakecli/outfiles.go): 2×1 pixels, red then blue.
func fakePNG(t testing.TB) []byte {
	t.Helper()
	img := stdimage.NewRGBA(stdimage.Rect(0, 0, 2, 1))
	img.Set(0, 0, color.RGBA{R: 255, A: 255})
	img.Set(1, 0, color.RGBA{B: 255, A: 255})
	var b bytes.Buffer
	if err := png.Encode(&b, img); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

// attachment is the file of that name a message carries.
func attachment(m testkit.DiscordMessage, name string) (testkit.DiscordFile, bool) {
	for _, f := range m.Files {
		if f.Name == name {
			return f, true
		}
	}
	return testkit.DiscordFile{}, false
}

// Files back: what the CLI writes to .fetch/out/ in its worktree comes
// with the result in Discord — a picture as an image Discord shows inline,
// a text file as an attachment — and never reaches the task's branch. A
// hostile CLI's symlink to /etc/passwd sends nothing of it, and a file
// holding a credential is not sent: the result says which and why. The
// task page shows the picture too.
func TestJourneyFilesBack(t *testing.T) {
	t.Parallel()
	w := newWorld(t, "app")
	w.env["FETCH_PAGE_ADDR"] = "127.0.0.1:0"
	w.start()

	m, status := w.startTask(ownerID, "fix the header in the app workspace and send me a screenshot",
		"take a screenshot of the page [scenario:out-file]", "app")
	id := taskID(t, status.Text)
	res := w.awaitResult(m, regexp.MustCompile(`✅ Task `+id+` succeeded on app`), "the task's result")
	if !strings.Contains(res.Text, "screenshot.png") {
		t.Errorf("the result %q does not name the picture it sends", res.Text)
	}
	shot, ok := attachment(res.Msg, "screenshot.png")
	switch {
	case !ok:
		t.Errorf("the result carries %d attachments, none screenshot.png: %v", len(res.Msg.Files), names(res.Msg.Files))
	case shot.ContentType != "image/png":
		t.Errorf("screenshot.png sent as %q; want image/png (shown inline)", shot.ContentType)
	case !bytes.Equal(shot.Data, fakePNG(t)):
		t.Errorf("screenshot.png arrived as %d bytes %q; want the CLI's PNG unchanged", len(shot.Data), shot.Data)
	}
	if notes, ok := attachment(res.Msg, "notes.txt"); !ok || string(notes.Data) != "The page after the change.\n" {
		t.Errorf("notes.txt: %v, %q; want the CLI's text file attached", ok, notes.Data)
	}
	if _, err := w.gitShow("app", "fetch/"+id, "FETCH_DONE.md"); err != nil {
		t.Fatalf("the task's work is not on its branch: %v", err)
	}
	for _, p := range []string{".fetch/out/screenshot.png", ".fetch/out/notes.txt"} {
		if got, err := w.gitShow("app", "fetch/"+id, p); err == nil {
			t.Errorf("%s is on the task's branch (%d bytes); the out folder must stay off it", p, len(got))
		}
	}

	// The task page shows the picture (inline, from the page itself) and
	// links the text file.
	link := pageButton(res.Msg)
	if link == "" {
		t.Fatalf("the result has no Task page button: %+v", res.Msg.Components)
	}
	if code, page := get(t, link); code != http.StatusOK || !strings.Contains(page, "notes.txt") {
		t.Errorf("the task page = %d, without notes.txt:\n%s", code, page)
	} else if img := regexp.MustCompile(`<img src="([^"]+)" alt="screenshot.png">`).FindStringSubmatch(page); img == nil {
		t.Errorf("the task page shows no picture screenshot.png:\n%s", page)
	} else {
		u, _ := url.Parse(link)
		src, err := u.Parse(html.UnescapeString(img[1]))
		if err != nil {
			t.Fatal(err)
		}
		resp, err := http.Get(src.String())
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK || resp.Header.Get("Content-Type") != "image/png" || !bytes.Equal(body, fakePNG(t)) {
			t.Errorf("the page's picture = %d %q, %d bytes; want the CLI's PNG as image/png", resp.StatusCode, resp.Header.Get("Content-Type"), len(body))
		}
	}

	// A hostile CLI: a symlink to /etc/passwd and a file with a key.
	m, status = w.startTask(ownerID, "update the logging in the app workspace and leave me the logs",
		"leave the logs [scenario:out-symlink]", "app")
	id = taskID(t, status.Text)
	res = w.awaitResult(m, regexp.MustCompile(`✅ Task `+id+` succeeded on app`), "the hostile task's result")
	for _, f := range res.Msg.Files {
		if f.Name == "leak.txt" || f.Name == "keys.txt" || bytes.Contains(f.Data, []byte("root:x:0:0")) {
			t.Errorf("the result carries %s (%q); a symlink's target and a file with a key are never sent", f.Name, f.Data)
		}
	}
	if !regexp.MustCompile(`leak\.txt: a symlink`).MatchString(res.Text) || !regexp.MustCompile(`keys\.txt: it holds what look like secrets`).MatchString(res.Text) {
		t.Errorf("the result %q does not say that leak.txt (a symlink) and keys.txt (secrets) were not sent", res.Text)
	}
	for _, s := range w.since(m) {
		if strings.Contains(s.Text, "root:x:0:0") || strings.Contains(s.Text, "AKIA") {
			t.Errorf("a message shows what the CLI must not send: %q", s.Text)
		}
	}
}

func names(files []testkit.DiscordFile) []string {
	var out []string
	for _, f := range files {
		out = append(out, f.Name+" ("+f.ContentType+")")
	}
	return out
}
