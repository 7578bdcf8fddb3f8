package attach

import (
	"bytes"
	"context"
	"errors"
	"image"
	"image/png"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"strings"
	"testing"

	"github.com/fetch-dev/fetch/internal/chat"
)

func pngBytes(t *testing.T) []byte {
	var b bytes.Buffer
	if err := png.Encode(&b, image.NewRGBA(image.Rect(0, 0, 2, 2))); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

func TestFetch(t *testing.T) {
	files := map[string][]byte{
		"shot.png":  pngBytes(t),
		"log.txt":   []byte("build failed at line 3\n"),
		"leak.txt":  []byte("AKIAIOSFODNN7EXAMPLE is the key\n"),
		"tool.zip":  append([]byte("PK\x03\x04"), make([]byte, 40)...),
		"large.txt": bytes.Repeat([]byte("a"), 2000),
	}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		data, ok := files[strings.TrimPrefix(r.URL.Path, "/attachments/")]
		if !ok {
			http.NotFound(w, r)
			return
		}
		w.Write(data)
	}))
	defer srv.Close()
	u, _ := url.Parse(srv.URL)
	dir := t.TempDir()
	f, err := New(Config{Dir: dir, Hosts: []string{"cdn.discordapp.com"}, Insecure: []string{u.Hostname()}, MaxBytes: 1000,
		Secret: func(s string) bool { return strings.Contains(s, "AKIA") }})
	if err != nil {
		t.Fatal(err)
	}
	at := func(name string) chat.Attachment {
		return chat.Attachment{Name: name, URL: srv.URL + "/attachments/" + name}
	}

	got, err := f.Fetch(context.Background(), []chat.Attachment{at("shot.png"), at("log.txt")})
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 2 || got[0].MediaType != "image/png" || got[1].MediaType != "text/plain" {
		t.Fatalf("got %+v", got)
	}
	if data, err := os.ReadFile(got[0].File); err != nil || !bytes.Equal(data, files["shot.png"]) {
		t.Errorf("the kept PNG differs: %v", err)
	}
	for _, c := range []struct {
		atts []chat.Attachment
		want string
	}{
		{[]chat.Attachment{at("log.txt"), at("leak.txt")}, "looks like a secret"},
		{[]chat.Attachment{at("tool.zip")}, "a application/zip file"},
		{[]chat.Attachment{at("large.txt")}, "more than 1000 bytes"},
		{[]chat.Attachment{{Name: "x.png", URL: "https://evil.example/x.png"}}, "not served by the chat's own file host"},
		{[]chat.Attachment{{Name: "x.png", URL: srv.URL + "/attachments/missing.png"}}, "404"},
		{[]chat.Attachment{{Name: "big.png", URL: srv.URL + "/attachments/shot.png", Size: 5000}}, "5000 bytes"},
	} {
		before, _ := os.ReadDir(dir)
		_, err := f.Fetch(context.Background(), c.atts)
		if !errors.Is(err, ErrRefused) || !strings.Contains(err.Error(), c.want) {
			t.Errorf("Fetch(%v) = %v; want a refusal saying %q", c.atts[len(c.atts)-1].Name, err, c.want)
		}
		if after, _ := os.ReadDir(dir); len(after) != len(before) {
			t.Errorf("a refused message left %d files", len(after)-len(before))
		}
	}
}

func TestCleanName(t *testing.T) {
	for in, want := range map[string]string{"../../etc/passwd": "passwd", "Screen Shot 1.png": "Screen_Shot_1.png", ".bashrc": "bashrc", "-rf": "rf", "ä.txt": "txt", "": "file"} {
		if got := CleanName(in); got != want {
			t.Errorf("CleanName(%q) = %q; want %q", in, got, want)
		}
	}
}
