package deptest

import (
	"encoding/json"
	"io"
	"os/exec"
	"slices"
	"strings"
	"testing"
)

const module = "github.com/fetch-dev/fetch/"

// allowed lists, for each of Fetch's packages, the packages of Fetch's own
// it may import directly. Imports point down: channels → chat ←
// conversation → instincts, intent, modes, agent → task → harness →
// kennel; store at the bottom. A package missing from this table fails
// the test: decide where it belongs and add it.
var allowed = map[string][]string{
	"internal/store": {},
	"internal/chat":  {},
	"instincts":      {},
	"intent":         {},
	"kennel":         {"kennel/shim", "kennel/egress"},
	"kennel/shim":    {},
	// egress: the kennel's way out (a proxy linked into fetch-shim); the
	// standard library only.
	"kennel/egress": {},
	"modes":         {"internal/store"},
	// gitrun: git on a workspace, run in the workspace's kennel (the host
	// never runs git in a tree the kennel writes); kennel is its transport.
	"internal/gitrun": {"kennel", "kennel/shim"},
	// github: Fetch's GitHub API client (go-github); mirror: Fetch's own
	// bare repository per workspace, fed from the kennel through gitrun;
	// ship: push and pull requests, over both.
	"internal/github": {},
	"internal/mirror": {"internal/gitrun", "kennel", "internal/redact", "internal/trust"},
	"internal/ship":   {"internal/github", "internal/mirror", "internal/store", "internal/redact", "instincts", "internal/review", "internal/checks"},
	// review: whether a change may merge without the owner (limits, and
	// Fetch's own LLM review of it); store for the workspace's limits and
	// the review's cost.
	"internal/review": {"internal/llm", "internal/store", "instincts"},
	// checks: a workspace's tests, run in its kennel before a pull
	// request; store for its settings and the scrubber, instincts for
	// /checks.
	"internal/checks": {"kennel", "internal/store", "internal/redact", "instincts"},
	// harness prices the tokens of CLIs that report no dollars.
	"harness": {"kennel", "kennel/shim", "kennel/egress", "internal/gitrun", "internal/price"},
	// price: the table of model prices, with its sources.
	"internal/price": {},
	"identity":       {},
	"internal/llm":   {},
	// workspace runs its git through gitrun, hence (through it) in the kennel.
	"internal/workspace": {"internal/store", "internal/gitrun", "kennel", "internal/trust"},
	"internal/redact":    {},
	// task: redact's rules find secrets in the work before it is committed;
	// mirror, Fetch's own repository, is where the work is taken in and read.
	"internal/task": {"harness", "kennel", "kennel/shim", "kennel/egress", "internal/gitrun", "internal/mirror", "internal/store", "internal/workspace", "internal/redact", "internal/ship", "internal/policy", "instincts"},
	// agent: progress words what became of a message to a task
	// (task_message) as the chat commands do.
	"internal/agent": {"internal/task", "internal/llm", "identity", "internal/store", "internal/workspace", "internal/chat", "intent", "instincts", "internal/code", "internal/tokens", "internal/progress"},
	// tokens: a BPE tokenizer with its vocabulary embedded.
	"internal/tokens": {},
	// code: reads a workspace's source on the host through os.Root.
	"internal/code":     {"internal/tokens"},
	"internal/schedule": {"internal/store", "internal/chat", "instincts"},
	"internal/watch":    {"internal/store", "internal/chat", "instincts", "internal/gitrun"},
	// progress shows a coding CLI's requests through redact.Visible.
	"internal/progress": {"internal/chat", "internal/store", "internal/task", "harness", "modes", "internal/redact"},
	// taskpage: the read-only task page; it reads tasks through the
	// engine's types, words cost as the chat and fetch task do
	// (progress.Cost), and shows every text through redact.
	"internal/taskpage":     {"internal/task", "harness", "internal/redact", "internal/progress"},
	"internal/conversation": {"internal/chat", "internal/store", "instincts", "intent", "modes", "internal/task", "internal/progress", "harness"},
	// attach: takes the files of the owner's messages into Fetch's data
	// directory, checked, as the task engine keeps them.
	"internal/attach":  {"internal/chat", "internal/task"},
	"internal/term":    {"internal/chat", "internal/redact"},
	"internal/discord": {"internal/chat", "internal/store", "internal/redact"},
	// doctor: checks what Fetch needs; the probe container is the kennel's,
	// the database's health the store's.
	"internal/doctor":  {"kennel", "internal/store"},
	"internal/deptest": {},
	// access: who besides the owner may talk to Fetch (/allow), kept in
	// the store and in memory for the role check of every message.
	"internal/access": {"internal/store", "instincts"},
	// hosts: the hosts the owner allows a workspace's runs to reach
	// (/hosts), kept in the store and checked by the proxy's own rule
	// (kennel/egress, the standard library only), which instincts may not
	// import.
	"internal/hosts": {"internal/store", "instincts", "kennel/egress"},
	// policy: what a coding CLI may do without the owner; store for the
	// rule and audit types, instincts for the autonomy levels.
	"internal/policy": {"internal/store", "instincts"},
	// metrics: Prometheus metrics; store for the gauges read at scrape
	// time. The packages it measures declare their own interfaces.
	"internal/metrics": {"internal/store"},
	// bench/tokens: runs the real agent on fakes to count its tokens.
	"bench/tokens": {"identity", "instincts", "intent", "internal/agent", "internal/code", "internal/llm", "internal/store", "internal/task", "internal/tokens", "internal/workspace"},
	// trust: the certificate authorities Fetch's HTTPS clients and host
	// git trust beyond the system's; the standard library only.
	"internal/trust": {},
	// journey: tests of the built binary; its only non-test file is doc.go.
	"journey": {},
}

// free lists packages that must not depend, even indirectly, on outside
// services' client libraries: instincts keep working when the LLM, Discord
// or Docker is down.
var free = map[string][]string{
	"instincts":     {"github.com/docker/", "github.com/revrost/", "github.com/bwmarrin/", "net/http"},
	"intent":        {"github.com/docker/", "github.com/revrost/", "github.com/bwmarrin/", "net/http"},
	"modes":         {"github.com/docker/", "github.com/revrost/", "github.com/bwmarrin/"},
	"internal/chat": {"github.com/docker/", "github.com/revrost/", "github.com/bwmarrin/"},
}

type pkg struct {
	ImportPath string
	Imports    []string
	Deps       []string
}

func listPackages(t *testing.T) []pkg {
	t.Helper()
	cmd := exec.CommandContext(t.Context(), "go", "list", "-deps=false", "-json=ImportPath,Imports,Deps", "github.com/fetch-dev/fetch/...")
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	var pkgs []pkg
	dec := json.NewDecoder(strings.NewReader(string(out)))
	for {
		var p pkg
		if err := dec.Decode(&p); err == io.EOF {
			break
		} else if err != nil {
			t.Fatal(err)
		}
		pkgs = append(pkgs, p)
	}
	if len(pkgs) < 5 {
		t.Fatalf("go list found only %d packages", len(pkgs))
	}
	return pkgs
}

func TestImportDirection(t *testing.T) {
	for _, p := range listPackages(t) {
		name := strings.TrimPrefix(p.ImportPath, module)
		switch {
		case strings.HasPrefix(name, "cmd/"):
			// Wiring: cmd may import anything of Fetch's (but not testkit,
			// checked below).
			for _, imp := range p.Imports {
				if strings.HasPrefix(imp, module+"internal/testkit") {
					t.Errorf("%s imports %s: test fakes must not reach a binary", name, imp)
				}
			}
			continue
		case strings.HasPrefix(name, "internal/testkit"):
			continue
		}
		ok, known := allowed[name]
		if !known {
			t.Errorf("package %s is not in the dependency table; add it to allowed in %s", name, "internal/deptest/deps_test.go")
			continue
		}
		for _, imp := range p.Imports {
			if !strings.HasPrefix(imp, module) {
				continue
			}
			dep := strings.TrimPrefix(imp, module)
			if strings.HasPrefix(dep, "cmd/") {
				t.Errorf("%s imports %s: nothing imports a command", name, dep)
				continue
			}
			if strings.HasPrefix(dep, "internal/testkit") {
				t.Errorf("%s imports %s outside its tests", name, dep)
				continue
			}
			if !slices.Contains(ok, dep) {
				t.Errorf("%s imports %s, which is not below it (allowed: %v)", name, dep, ok)
			}
		}
	}
}

func TestFreeOfServices(t *testing.T) {
	byName := map[string]pkg{}
	for _, p := range listPackages(t) {
		byName[strings.TrimPrefix(p.ImportPath, module)] = p
	}
	for name, banned := range free {
		p, ok := byName[name]
		if !ok {
			t.Errorf("package %s not found", name)
			continue
		}
		for _, d := range p.Deps {
			for _, b := range banned {
				if strings.HasPrefix(d, b) || d == b {
					t.Errorf("%s depends on %s", name, d)
				}
			}
		}
	}
}
