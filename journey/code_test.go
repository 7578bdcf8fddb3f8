package journey

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/fetch-dev/fetch/internal/testkit"
)

// codeServer is a file of the demo workspace the code tools read.
const codeServer = `package demo

import "net/http"

// limiter allows ten requests a second per client.
var limiter = newLimiter(10)

func newLimiter(perSecond int) *rateLimiter { return &rateLimiter{rate: perSecond} }

type rateLimiter struct{ rate int }

func Routes(mux *http.ServeMux) {
	mux.HandleFunc("/healthz", func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(200) })
}
`

// toolResults are the tool results of the last request the fake
// OpenRouter received, by call id.
func toolResults(w *world) map[string]string {
	reqs := w.llm.Requests()
	out := map[string]string{}
	for _, m := range reqs[len(reqs)-1].Body.Messages {
		if m.Role == "tool" {
			out[m.ToolCallID] = m.Content.Text
		}
	}
	return out
}

// J-code-1: a question about code gets the code: the model maps the
// workspace, reads a range of a file, and answers; what it was given are
// the file's real lines with their numbers, and the system prompt carries
// the workspace's map.
func TestJourneyCodeQuestionReadsTheCode(t *testing.T) {
	t.Parallel()
	w := newWorld(t, "demo")
	if err := os.WriteFile(filepath.Join(w.workspacePath("demo"), "server.go"), []byte(codeServer), 0o644); err != nil {
		t.Fatal(err)
	}
	w.start()
	w.llm.Script(
		testkit.Use(testkit.Call{ID: "sel", Name: "workspace_select", Arguments: `{"name":"demo"}`}),
		testkit.Say("demo is selected."),
	)
	w.ask(ownerID, "use the demo workspace", regexp.MustCompile(`demo is selected\.`))

	w.llm.Script(
		testkit.Use(
			testkit.Call{ID: "map", Name: "code_map", Arguments: `{}`},
			testkit.Call{ID: "read", Name: "code_read", Arguments: `{"path":"server.go","from":5,"to":7}`},
		),
		testkit.Say("The rate limiter is configured in server.go, line 6: ten requests a second."),
	)
	w.ask(ownerID, "where is the rate limiter configured?", regexp.MustCompile(`configured in server\.go`))

	got := toolResults(w)
	if !strings.Contains(got["map"], "server.go") || !strings.Contains(got["map"], "func Routes(mux *http.ServeMux)") {
		t.Errorf("code_map result = %q", got["map"])
	}
	want := "server.go, lines 5-7 of 14:\n5\t// limiter allows ten requests a second per client.\n6\tvar limiter = newLimiter(10)\n7\t"
	if got["read"] != want {
		t.Errorf("code_read result = %q, want %q", got["read"], want)
	}
	reqs := w.llm.Requests()
	if sys := reqs[len(reqs)-1].System(); !strings.Contains(sys, "# Code map of demo") || !strings.Contains(sys, "server.go") {
		t.Errorf("the system prompt has no code map of demo:\n%s", sys)
	}
	for _, name := range []string{"code_map", "code_outline", "code_read", "code_search"} {
		if !strings.Contains(strings.Join(reqs[len(reqs)-1].Tools(), " "), name) {
			t.Errorf("an inquiry is not offered %s: %v", name, reqs[len(reqs)-1].Tools())
		}
	}
}

// J-code-2: paths out of the workspace are refused: "..", an absolute
// path, and a symbolic link to /etc/passwd that the host planted in the
// workspace (as a harness could). The model reads that they were refused,
// and nothing of /etc/passwd reaches the provider.
func TestJourneyCodeReadRefusesEscapes(t *testing.T) {
	t.Parallel()
	passwd, err := os.ReadFile("/etc/passwd")
	if err != nil || len(passwd) == 0 {
		t.Skip("no /etc/passwd to guard")
	}
	w := newWorld(t, "demo")
	ws := w.workspacePath("demo")
	if err := os.Symlink("/etc/passwd", filepath.Join(ws, "passwd")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("/etc", filepath.Join(ws, "etc")); err != nil {
		t.Fatal(err)
	}
	w.start()
	w.llm.Script(
		testkit.Use(
			testkit.Call{ID: "up", Name: "code_read", Arguments: `{"workspace":"demo","path":"../../../../../../etc/passwd"}`},
			testkit.Call{ID: "abs", Name: "code_read", Arguments: `{"workspace":"demo","path":"/etc/passwd"}`},
			testkit.Call{ID: "link", Name: "code_read", Arguments: `{"workspace":"demo","path":"passwd"}`},
			testkit.Call{ID: "dir", Name: "code_read", Arguments: `{"workspace":"demo","path":"etc/passwd"}`},
			testkit.Call{ID: "grep", Name: "code_search", Arguments: `{"workspace":"demo","pattern":"root"}`},
		),
		testkit.Say("Those paths are outside the workspace."),
	)
	w.ask(ownerID, "what is in the file passwd of the demo workspace?", regexp.MustCompile(`outside the workspace`))

	got := toolResults(w)
	for _, id := range []string{"up", "abs", "link", "dir"} {
		if !strings.Contains(got[id], "refused") {
			t.Errorf("code_read %s: result %q does not say refused", id, got[id])
		}
	}
	if !strings.Contains(got["grep"], "No matches") {
		t.Errorf("code_search followed a link out of the workspace: %q", got["grep"])
	}
	first, _, _ := strings.Cut(string(passwd), "\n")
	for i, r := range w.llm.Requests() {
		if strings.Contains(r.Raw, first) {
			t.Errorf("request %d holds /etc/passwd's first line %q", i, first)
		}
	}
}
