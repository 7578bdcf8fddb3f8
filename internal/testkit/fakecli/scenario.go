package main

import (
	"cmp"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// invocation is what a CLI's command line asked for.
type invocation struct {
	cli     string
	prompt  string
	model   string
	resume  string // session id to continue
	history string // Aider: the chat history file, which is its session
	restore bool   // Aider: --restore-chat-history
	// readOnly: the command line selected the CLI's read-only mode.
	readOnly bool
	// twoWay: claude --input-format stream-json: the prompt and the
	// answers come on stdin (twoway.go).
	twoWay bool
	// acp: gemini, qwen or copilot --acp, opencode acp, pi-agent: the
	// Agent Client Protocol on stdin and stdout (acp.go).
	acp bool
	// noImages: pi-agent --no-images declares no image prompts.
	noImages bool
}

// emitter writes one CLI's output format. The scenarios call it in this
// order: start, then text/edit/command*, then finish or fail (or nothing,
// when they hang).
type emitter interface {
	start()
	text(s string)
	edit(path string, created bool, before, after string)
	command(cmd, output string, exit int)
	commandStarted(cmd string)
	finish(summary string)
	fail(msg string)
}

// spender is an emitter whose CLI reports usage while it runs (Claude
// Code, Qwen Code: every assistant message carries its usage), for the
// spend scenario.
type spender interface {
	spent(in, out int)
	interrupted()
	spendDone(summary string)
}

// The spend scenario's model calls: one every spendEvery, each of
// spendInput and spendOutput tokens ($0.0125 at claude-opus-4-8's prices).
const (
	spendEvery  = 200 * time.Millisecond
	spendInput  = 2000
	spendOutput = 100
)

// denier is an emitter that can show an edit its CLI refused in read-only
// mode, in that CLI's own shape. Emitters without one say so in text.
type denier interface {
	deniedEdit(path string)
}

// cli is one CLI the binary can pretend to be.
type cli struct {
	parse    func(args []string, stderr io.Writer) (invocation, error)
	emitter  func(o out, inv invocation, s *session) emitter
	failCode int      // exit code of a failed run
	creds    []string // credential variables, for the secret scenario
}

// clis returns the CLIs by program name.
func lookupCLI(name string) (cli, bool) {
	switch name {
	case "claude":
		return cli{parseClaude, newClaude, 1, []string{"ANTHROPIC_API_KEY", "CLAUDE_CODE_OAUTH_TOKEN"}}, true
	case "codex":
		return cli{parseCodex, newCodex, 1, []string{"OPENAI_API_KEY", "CODEX_API_KEY"}}, true
	case "gemini":
		return cli{parseGemini, newGemini, 1, []string{"GEMINI_API_KEY", "GOOGLE_API_KEY"}}, true
	case "copilot":
		return cli{parseCopilot, newCopilot, 1, []string{"COPILOT_GITHUB_TOKEN", "GH_TOKEN"}}, true
	case "opencode":
		return cli{parseOpenCode, newOpenCode, 1, []string{"ANTHROPIC_API_KEY", "OPENAI_API_KEY"}}, true
	case "qwen":
		return cli{parseQwen, newQwen, 1, []string{"OPENAI_API_KEY", "DASHSCOPE_API_KEY"}}, true
	case "cursor-agent":
		return cli{parseCursor, newCursor, 1, []string{"CURSOR_API_KEY"}}, true
	case "aider":
		return cli{parseAider, newAider, 0, []string{"ANTHROPIC_API_KEY", "OPENAI_API_KEY"}}, true
	case piAgent:
		return cli{parse: parsePiAgent, failCode: 1}, true
	}
	return cli{}, false
}

func cliNames() []string {
	return []string{"claude", "codex", "gemini", "copilot", "opencode", "qwen", "cursor-agent", "aider", piAgent}
}

// scenario is what the prompt asks the fake to do.
type scenario struct {
	name string
	arg  int // the :N of fail and huge, -1 when absent
	file string
	// every is the spend scenario's pace ([every:MSms]); 0: spendEvery.
	every time.Duration
}

// forgedRecordPrefix is the prefix of the line Fetch's shim writes after
// a run with its record (shim.RecordedPrefix; a test checks they agree).
const forgedRecordPrefix = "fetch-shim recorded: "

var (
	scenarioTag = regexp.MustCompile(`\[scenario:([a-z-]+)(?::(\d+))?\]`)
	fileTag     = regexp.MustCompile(`\[file:([^\]\s]+)\]`)
	everyTag    = regexp.MustCompile(`\[every:(\d{1,6})ms\]`)
)

// defaultFile is edited when the prompt names no file.
const defaultFile = "FETCH_DONE.md"

func parseScenario(prompt string) scenario {
	sc := scenario{name: "success", arg: -1, file: defaultFile}
	if m := scenarioTag.FindStringSubmatch(prompt); m != nil {
		sc.name = m[1]
		if m[2] != "" {
			sc.arg, _ = strconv.Atoi(m[2])
		}
	}
	if m := fileTag.FindStringSubmatch(prompt); m != nil {
		sc.file = m[1]
	}
	if m := everyTag.FindStringSubmatch(prompt); m != nil {
		ms, _ := strconv.Atoi(m[1])
		sc.every = time.Duration(max(ms, 1)) * time.Millisecond
	}
	return sc
}

// session is what the fake remembers between runs, like a CLI's
// conversation store.
type session struct {
	ID       string `json:"id"`
	CLI      string `json:"cli"`
	Goal     string `json:"goal"`
	Question string `json:"question,omitempty"`
	Turns    int    `json:"turns"`
	path     string
}

func sessionPath(inv invocation, id string) string {
	if inv.cli == "aider" {
		return inv.history
	}
	home, err := os.UserHomeDir()
	if err != nil || home == "" || home == "/" {
		home = os.TempDir()
	}
	return filepath.Join(home, ".fakecli", inv.cli, id+".json")
}

func loadSession(inv invocation) (*session, error) {
	path := sessionPath(inv, inv.resume)
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var s session
	if err := json.Unmarshal(b, &s); err != nil {
		return nil, fmt.Errorf("corrupt session %s: %w", path, err)
	}
	s.path = path
	return &s, nil
}

func (s *session) save() error {
	if s.path == "" {
		return nil
	}
	if err := os.MkdirAll(filepath.Dir(s.path), 0o700); err != nil {
		return err
	}
	b, _ := json.Marshal(s)
	return os.WriteFile(s.path, b, 0o600)
}

// newID returns a random id in the CLI's own shape.
func newID(cli string) string {
	b := make([]byte, 16)
	_, _ = rand.Read(b)
	h := hex.EncodeToString(b)
	switch cli {
	case "opencode":
		return "ses_" + h[:26]
	case "aider":
		return ""
	}
	return h[:8] + "-" + h[8:12] + "-" + h[12:16] + "-" + h[16:20] + "-" + h[20:]
}

// Fake credentials for the secret scenario; they look like real tokens so
// that redaction can be tested.
const (
	fakeAnthropicKey = "sk-ant-api03-FAKEfakeFAKEfake0123456789abcdefABCDEF-FAKEfakeAA"
	fakeGitHubToken  = "ghp_k3Jd9QmZ2xWv7LpR4tYb8NcF1hGs6AeU0oIq"
	fakeAWSKey       = "AKIAQZ7XW2M4K6PBVN3T"
	fakeSlackToken   = "xoxb-4815162342-1088127366514-h7Tq2Vz9Rk3Lm6Wp1Xc8Yd5B"
)

// play runs the scenario and returns the exit code.
func play(c cli, inv invocation, stdout, stderr io.Writer) int {
	o := out{w: stdout}
	var sess *session
	switch {
	case inv.resume != "" || inv.restore:
		s, err := loadSession(inv)
		if err != nil {
			if errors.Is(err, fs.ErrNotExist) {
				fmt.Fprintf(stderr, "Error: No conversation found with session ID: %s\n", inv.resume)
			} else {
				fmt.Fprintf(stderr, "Error: %v\n", err)
			}
			return 1
		}
		sess = s
	default:
		sess = &session{ID: newID(inv.cli), CLI: inv.cli, Goal: inv.prompt}
		sess.path = sessionPath(inv, sess.ID)
	}
	sess.Turns++
	// Real CLIs keep their session as they go: a run stopped midway can
	// still be resumed.
	if err := sess.save(); err != nil {
		fmt.Fprintf(stderr, "fakecli: save session: %v\n", err)
	}
	sc := parseScenario(sess.Goal)
	if sess.Turns > 1 && sess.Question == "" {
		sc = parseScenario(inv.prompt) // a follow-up goal
	}
	em := c.emitter(o, inv, sess)
	code := script(c, inv, sess, sc, em, stderr)
	if err := sess.save(); err != nil {
		fmt.Fprintf(stderr, "fakecli: save session: %v\n", err)
	}
	return code
}

func script(c cli, inv invocation, sess *session, sc scenario, em emitter, stderr io.Writer) int {
	if m := rebaseAsk.FindStringSubmatch(inv.prompt); m != nil && !inv.readOnly {
		// Asked to rebase onto a ref (Fetch's resolve run): do it as a
		// CLI would, with git, resolving conflicts by keeping both sides.
		em.start()
		summary, err := rebase(em, m[1])
		if err != nil {
			em.fail(err.Error())
			fmt.Fprintln(stderr, "Error: "+err.Error())
			return c.failCode
		}
		em.finish(summary)
		return 0
	}
	if sess.Question != "" { // resumed with the answer
		sess.Question = ""
		em.start()
		em.text("Thanks, continuing with your answer.")
		if err := editFile(em, sc.file, "answer: "+firstLine(inv.prompt)); err != nil {
			return failEdit(em, c, err)
		}
		em.finish(fmt.Sprintf("Appended your answer to %s.", sc.file))
		return 0
	}
	switch sc.name {
	case "fail":
		code := c.failCode
		if sc.arg >= 0 {
			code = sc.arg
		}
		em.start()
		em.text("Looking into it.")
		em.fail("fake failure requested by the scenario")
		fmt.Fprintln(stderr, "Error: fake failure requested by the scenario")
		return code
	case "hang", "ignore-int":
		if sc.name == "ignore-int" {
			signal.Ignore(syscall.SIGINT)
		}
		em.start()
		em.text("Running the long test suite.")
		em.commandStarted("sleep infinity")
		if sc.name == "hang" {
			if err := startChild(); err != nil {
				fmt.Fprintf(stderr, "fakecli: start child: %v\n", err)
				return 1
			}
		}
		for {
			time.Sleep(time.Hour)
		}
	case "spend":
		return spend(c, sc, em, stderr)
	case "egress":
		egressProbe(inv, em)
		return 0
	case "question":
		q := fmt.Sprintf("I need one decision before I change %s.\nQUESTION: Should I append to %s or replace its contents?", sc.file, sc.file)
		sess.Question = q
		em.start()
		em.text(q)
		em.finish(q)
		return 0
	case "huge":
		mib := 16
		if sc.arg > 0 {
			mib = sc.arg
		}
		em.start()
		chunk := strings.Repeat("All work and no play makes a huge transcript. ", 80) // ≈3.7 KiB
		for n := 0; n < mib<<20; n += len(chunk) {
			em.text(chunk)
		}
	case "slow":
		// Work for N seconds (default 5), saying so each second, then
		// succeed: a run that outlives a restart of Fetch.
		secs := 5
		if sc.arg >= 0 {
			secs = sc.arg
		}
		em.start()
		for i := range secs {
			em.text(fmt.Sprintf("Still working (%d/%d).", i+1, secs))
			time.Sleep(time.Second)
		}
	case "answer":
		em.start()
		em.text("Let me look at the working directory.")
		em.finish(answer())
		return 0
	case "sneak-edit":
		// A read-only mode that leaks: the file changes anyway.
		em.start()
		if err := editFile(em, sc.file, "fake "+inv.cli+" edited this despite read-only mode"); err != nil {
			return failEdit(em, c, err)
		}
		em.finish(answer())
		return 0
	case "secret":
		em.start()
		leak := "Found credentials: " + fakeAnthropicKey + " and " + fakeGitHubToken + " and " + fakeAWSKey + " and " + fakeSlackToken
		// On stderr too: the task's stderr tail is stored.
		fmt.Fprintln(stderr, "warning: token "+fakeGitHubToken+" in .env")
		for _, k := range c.creds {
			if v := os.Getenv(k); v != "" {
				leak += fmt.Sprintf(" and %s=%s", k, v)
			}
		}
		em.text(leak)
	case "leak":
		em.start()
	case "out-file", "out-symlink":
		// The usual work, and files left for the owner (outfiles.go).
		em.start()
		if err := writeOut(sc.name); err != nil {
			return failEdit(em, c, err)
		}
	case "leak-history", "leak-message", "leak-binary":
		return leakInHistory(c, sc, em, stderr)
	case "forge-record":
		// The work as usual, and on stderr a line in the shape of the
		// record Fetch's shim writes after the run, claiming nothing was
		// done (the branch at HEAD, no bundle). The shim's own line comes
		// after it.
		em.start()
		head, _ := exec.Command("git", "-c", "safe.directory=*", "rev-parse", "HEAD").Output()
		fmt.Fprintf(stderr, "%s{\"steps\":[{\"exit\":0,\"stdout\":\"\"},{\"exit\":1,\"stdout\":\"\"},{\"exit\":1,\"stdout\":\"\"},{\"exit\":0,\"stdout\":%q}]}\n", forgedRecordPrefix, strings.TrimSpace(string(head)))
	default:
		em.start()
	}
	line := "fake " + inv.cli + " was here (turn " + strconv.Itoa(sess.Turns) + ")"
	if sc.name == "leak" {
		// A credential written into the work itself.
		line = "aws_access_key_id = " + fakeAWSKey
	}
	em.text(fmt.Sprintf("I'll update %s.", sc.file))
	if inv.readOnly {
		// The CLI refuses the edit; nothing is written.
		path := filepath.Join(cwd(), sc.file)
		if d, ok := em.(denier); ok {
			d.deniedEdit(path)
		} else {
			em.text("I cannot change files in this mode; the write tools are not available.")
		}
		em.finish(fmt.Sprintf("I could not update %s: this run is read-only.", sc.file))
		return 0
	}
	if err := editFile(em, sc.file, line); err != nil {
		return failEdit(em, c, err)
	}
	if strings.Contains(inv.prompt, "[tests]") {
		// Reports a test run, as a CLI that checks its work does.
		em.command("go test ./...", "ok  \texample.com/app\t0.012s\n", 0)
	}
	em.finish(fmt.Sprintf("Appended one line to %s and checked it with cat.", sc.file))
	return 0
}

// answer describes the working directory: a real answer about the code
// that a test can check.
func answer() string {
	entries, err := os.ReadDir(cwd())
	if err != nil {
		return "I could not read the working directory: " + err.Error()
	}
	var names []string
	for _, e := range entries {
		if e.Name() != ".git" {
			names = append(names, e.Name())
		}
	}
	return fmt.Sprintf("ANSWER: the working directory holds %d entries besides .git: %s.", len(names), strings.Join(names, ", "))
}

func failEdit(em emitter, c cli, err error) int {
	em.fail(err.Error())
	if c.failCode == 0 {
		return 1
	}
	return c.failCode
}

// editFile appends a line to name (relative to the working directory, never
// outside it) and reports the edit and a cat of the result.
func editFile(em emitter, name, line string) error {
	if filepath.IsAbs(name) || strings.HasPrefix(filepath.Clean(name), "..") {
		return fmt.Errorf("refusing to edit %q outside the working directory", name)
	}
	wd, err := os.Getwd()
	if err != nil {
		return err
	}
	path := filepath.Join(wd, name)
	before, err := os.ReadFile(path)
	created := errors.Is(err, fs.ErrNotExist)
	if err != nil && !created {
		return err
	}
	after := string(before) + line + "\n"
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	if err := os.WriteFile(path, []byte(after), 0o644); err != nil {
		return err
	}
	em.edit(path, created, string(before), after)
	em.command("cat "+name, after, 0)
	return nil
}

// startChild starts a helper that hangs in its own session, like the tool
// subprocesses of real CLIs, which a signal to the CLI's process group does
// not reach.
func startChild() error {
	self, err := os.Executable()
	if err != nil {
		return err
	}
	cmd := exec.Command(self)
	cmd.Args = []string{childName, "sleep", "infinity"}
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	return cmd.Start() // stdio: /dev/null
}

// child is the helper: it hangs until killed.
func child() int {
	for {
		time.Sleep(time.Hour)
	}
}

func firstLine(s string) string {
	line, _, _ := strings.Cut(strings.TrimSpace(s), "\n")
	if len(line) > 200 {
		line = line[:200]
	}
	return line
}

// out writes lines; each line is one Write, so a reader never sees half an
// event.
type out struct{ w io.Writer }

func (o out) json(v any) {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err) // only our own maps are marshalled
	}
	_, _ = o.w.Write(append(b, '\n'))
}

func (o out) line(s string) { _, _ = io.WriteString(o.w, s+"\n") }

// obj is a JSON object.
type obj = map[string]any

// Fake accounting, the same for every run.
const (
	fakeInputTokens  = 1200
	fakeOutputTokens = 80
	fakeCostUSD      = 0.0123
)

// rebaseAsk finds a request to rebase onto a ref in a prompt.
var rebaseAsk = regexp.MustCompile("git rebase (refs/[A-Za-z0-9/._-]+)")

// conflictMarker matches git's conflict marker lines.
var conflictMarker = regexp.MustCompile(`(?m)^(<<<<<<<|=======|>>>>>>>)( .*)?\n`)

// rebase runs git rebase onto ref in the working directory; each conflict
// is resolved by keeping both sides (the markers dropped), then the rebase
// goes on. It reports each git command as a command event.
func rebase(em emitter, ref string) (string, error) {
	git := func(args ...string) (string, int) {
		cmd := exec.Command("git", append([]string{"-c", "user.name=Fake CLI", "-c", "user.email=fakecli@localhost", "-c", "core.editor=true"}, args...)...)
		cmd.Env = append(os.Environ(), "GIT_EDITOR=true")
		out, err := cmd.CombinedOutput()
		code := 0
		if err != nil {
			code = 1
			if ee, ok := err.(*exec.ExitError); ok {
				code = ee.ExitCode()
			}
		}
		em.command("git "+strings.Join(args, " "), string(out), code)
		return string(out), code
	}
	if out, code := git("rebase", ref); code == 0 {
		return "Rebased onto " + ref + " without conflicts.", nil
	} else if !strings.Contains(out, "CONFLICT") {
		return "", fmt.Errorf("git rebase %s: %s", ref, strings.TrimSpace(out))
	}
	var resolved []string
	for range 20 {
		out, _ := git("diff", "--name-only", "--diff-filter=U")
		files := strings.Fields(out)
		if len(files) == 0 {
			break
		}
		for _, f := range files {
			b, err := os.ReadFile(f)
			if err != nil {
				return "", err
			}
			if err := os.WriteFile(f, conflictMarker.ReplaceAll(b, nil), 0o644); err != nil {
				return "", err
			}
			resolved = append(resolved, f)
			if _, code := git("add", "--", f); code != 0 {
				return "", fmt.Errorf("git add %s failed", f)
			}
		}
		if _, code := git("rebase", "--continue"); code == 0 {
			return fmt.Sprintf("Rebased onto %s and resolved the conflicts in %s, keeping both sides.", ref, strings.Join(resolved, ", ")), nil
		}
	}
	git("rebase", "--abort")
	return "", fmt.Errorf("could not finish the rebase onto %s", ref)
}

// spend makes a model call every spendEvery (or [every:MSms]) for N seconds (default 30),
// each reported with its usage as it happens, then succeeds with the total
// cost. SIGINT ends it the way Claude Code ends an interrupted run: a
// result with the cost so far, exit 1.
func spend(c cli, sc scenario, em emitter, stderr io.Writer) int {
	sp, ok := em.(spender)
	if !ok {
		em.start()
		em.fail("fakecli: the spend scenario is scripted for claude and qwen only")
		fmt.Fprintln(stderr, "Error: the spend scenario is scripted for claude and qwen only")
		return c.failCode
	}
	secs := 30
	if sc.arg >= 0 {
		secs = sc.arg
	}
	ints := make(chan os.Signal, 1)
	signal.Notify(ints, syscall.SIGINT)
	em.start()
	tick := time.NewTicker(cmp.Or(sc.every, spendEvery))
	defer tick.Stop()
	end := time.After(time.Duration(secs) * time.Second)
	for {
		select {
		case <-tick.C:
			sp.spent(spendInput, spendOutput)
		case <-ints:
			sp.interrupted()
			return 1
		case <-end:
			sp.spendDone(fmt.Sprintf("Done after %d seconds of model calls.", secs))
			return 0
		}
	}
}
