package journey

import (
	"bytes"
	"encoding/json"
	"fmt"
	stdimage "image"
	"image/png"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/fetch-dev/fetch/internal/testkit"
)

// The conversation carries the work: a task that ended is continued on its
// own branch (the Continue button, /continue, fetch task continue), a
// message typed while a task works reaches its coding CLI (two-way CLIs at
// their next turn, one-shot CLIs as the task's next run), and a run that
// was interrupted resumes its CLI's session.

// taskMessage is the model's call of task_message with text for task id.
func taskMessage(callID, id, text string) testkit.Step {
	args, _ := json.Marshal(map[string]string{"id": id, "text": text})
	return testkit.Use(testkit.Call{ID: callID, Name: "task_message", Arguments: string(args)})
}

// startOnCLI DMs request, for which the model starts goal on cli in app, and
// returns the mark before it and the task's id.
func (w *world) startOnCLI(cli, request, goal string) (mark, string) {
	w.t.Helper()
	w.llm.Script(taskCreateOn("call-app", goal, "app", cli), testkit.Say("Started it."))
	m := w.send(ownerID, request)
	status := w.await(m, regexp.MustCompile(`Task \S+ on app \(`+regexp.QuoteMeta(cli)+`\) — running`), "the task's status message")
	return m, taskID(w.t, status.Text)
}

// F1: a task succeeds and its pull request opens; the result's Continue
// button asks what next, and the owner's answer runs the task again in
// its CLI's session, on the same branch: the branch on GitHub gets the new
// commit and the same pull request shows it (no second one).
func TestJourneyFollowUpAddsToTheBranchAndPullRequest(t *testing.T) {
	t.Parallel()
	// What each CLI writes in the run that resumed its session.
	resumed := map[string]*regexp.Regexp{
		"claude": regexp.MustCompile(`fake claude was here \(turn 2\)`),
		"codex":  regexp.MustCompile(`fake codex edited this with the owner's permission \(turn 2\)`),
		"gemini": regexp.MustCompile(`fake gemini edited this with the owner's permission \(turn 2\)`),
	}
	for _, cli := range []string{"claude", "codex", "gemini"} {
		t.Run(cli, func(t *testing.T) {
			t.Parallel()
			w := newShipWorld(t, nil)
			w.start()
			m, id := w.startOnCLI(cli, "add a health endpoint to app", "add a health endpoint [file:health.go]")
			res := w.awaitResult(m, regexp.MustCompile(`✅ Task `+id+` succeeded on app`), "the task's result")
			w.awaitNew(m, prRe(id), "the pull request's link")
			tip := w.gh.Tip(shipRepo, "fetch/"+id)

			m2 := w.mark(ownerID)
			w.d.Click(ownerID, res.Msg.ID, w.button(res, "Continue"))
			w.awaitNew(m2, regexp.MustCompile(`What should task `+id+` do next\?`), "the question what next")
			m3 := w.send(ownerID, "also document the endpoint")
			w.awaitNew(m3, regexp.MustCompile(`▶️ Task `+id+` continues on fetch/`+id+` with your message`), "the follow-up's start")
			w.awaitResult(m3, regexp.MustCompile(`✅ Task `+id+` succeeded on app`), "the follow-up's result")
			w.must("the branch on GitHub to get the follow-up's commit", func() bool { return w.gh.Tip(shipRepo, "fetch/"+id) != tip })
			if prs := w.gh.PRs(shipRepo); len(prs) != 1 || prs[0].Head != "fetch/"+id {
				t.Errorf("pull requests after the follow-up: %+v; want the one of fetch/%s", prs, id)
			}
			if _, ok := w.find(m3, prRe(id), func(seen) bool { return true }); ok {
				t.Error("the pull request's link was announced again after the follow-up")
			}
			if re := resumed[cli]; re != nil {
				var files []string
				for _, f := range []string{"FETCH_DONE.md", "health.go"} {
					got, _ := w.gh.File(shipRepo, "fetch/"+id, f)
					files = append(files, got)
				}
				if !re.MatchString(strings.Join(files, "\n")) {
					t.Errorf("the follow-up did not resume the CLI's session (no %q on GitHub's fetch/%s): %q", re, id, files)
				}
			}
		})
	}
}

// F2: `fetch task run --wait` is interrupted (Ctrl-C twice: cancel) while the CLI works;
// `fetch task continue` then resumes the CLI's own session, which the
// interrupted run had told, on the task's branch.
func TestJourneyFollowUpAfterAnInterruptedRunResumesTheSession(t *testing.T) {
	t.Parallel()
	w := newWorld(t, "app")
	p, id := w.runWaiting("take your time [scenario:slow:120]", "Still working (2/120)")
	// Ctrl-C leaves the task running; a second one cancels it.
	cancelTwice(t, p)
	shown, err := w.fetchCLI("task", "show", "--json", id)
	if err != nil {
		t.Fatalf("fetch task show: %v\n%s", err, shown)
	}
	var st struct {
		State     string `json:"state"`
		SessionID string `json:"session_id"`
	}
	if err := json.Unmarshal([]byte(shown), &st); err != nil {
		t.Fatal(err)
	}
	if st.State != "cancelled" || st.SessionID == "" {
		t.Fatalf("after Ctrl-C the task is %s with session %q; want cancelled, with the session the CLI told", st.State, st.SessionID)
	}
	out, err := w.fetchCLI("task", "continue", id, "finish the work")
	if err != nil {
		t.Fatalf("fetch task continue: %v\n%s", err, out)
	}
	if !strings.Contains(out, "Task "+id+" continues on fetch/"+id) || !strings.Contains(out, "✅ Task "+id+" succeeded") {
		t.Errorf("fetch task continue printed %q; want the follow-up's start and its success", out)
	}
	got, err := w.gitShow("app", "fetch/"+id, "FETCH_DONE.md")
	if err != nil || !strings.Contains(got, "fake claude was here (turn 2)") {
		t.Errorf("FETCH_DONE.md on fetch/%s = %q (%v); want the resumed session's second turn", id, got, err)
	}
}

// F3: "fix it" typed while a two-way CLI works reaches the running CLI
// process (it writes the message into the work) rather than only the
// agent, and the owner is told so.
func TestJourneyMessageReachesTheRunningCLI(t *testing.T) {
	t.Parallel()
	for cli, scenario := range map[string]string{
		"claude": "[scenario:await-message]",
		"codex":  "[scenario:await-message]",
		// An ACP agent runs one turn at a time: the message waits for the
		// running turn's end, then is a session/prompt of its own to the
		// same process (the scripted agent records it only then).
		"gemini": "[scenario:slow:10]",
	} {
		t.Run(cli, func(t *testing.T) {
			t.Parallel()
			w := newWorld(t, "app")
			w.start()
			_, id := w.startOnCLI(cli, "add a health endpoint to app", "add a health endpoint "+scenario+" [file:health.go]")
			w.llm.Script(taskMessage("call-msg", id, "fix it: also log the errors"), testkit.Say("Passing it on."))
			m := w.send(ownerID, "fix it: also log the errors")
			w.awaitNew(m, regexp.MustCompile(`📨 Sent to task `+id+`'s `+cli+` while it works`), "word that the message went to the CLI")
			w.awaitResult(m, regexp.MustCompile(`✅ Task `+id+` succeeded on app`), "the task's result")
			got, err := w.gitShow("app", "fetch/"+id, "health.go")
			if err != nil || !strings.Contains(got, "message: fix it: also log the errors") {
				t.Errorf("health.go on fetch/%s = %q (%v); want the message as the running CLI took it", id, got, err)
			}
		})
	}
}

// F4: a one-shot CLI takes no message while it works: the message waits,
// the owner can see that (and take it back), and it becomes the task's
// next run, on the same branch, in the CLI's session.
func TestJourneyMessageToAOneShotCLIIsQueued(t *testing.T) {
	t.Parallel()
	w := newWorld(t, "app")
	w.start()
	_, id := w.startOnCLI("cursor", "add a note to app", "add a note [scenario:slow:6]")
	w.llm.Script(taskMessage("call-msg", id, "also add the date to it"), testkit.Say("Noted."))
	m := w.send(ownerID, "also add the date to it")
	queued := w.awaitNew(m, regexp.MustCompile(`📥 Task `+id+`'s cursor takes no message while it works`), "word that the message waits")
	w.button(queued, "Take it back")
	w.await(m, regexp.MustCompile(`▶️|✅ Task `+id+` succeeded on app`), "the first run's result")
	w.must("the follow-up run's commit on the branch", func() bool {
		got, err := w.gitShow("app", "fetch/"+id, "FETCH_DONE.md")
		return err == nil && strings.Contains(got, "(turn 2)")
	})
}

// pngOf is a small real PNG.
func pngOf(t *testing.T) []byte {
	var b bytes.Buffer
	if err := png.Encode(&b, stdimage.NewRGBA(stdimage.Rect(0, 0, 3, 2))); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

// F5: a screenshot the owner attaches in Discord reaches the coding CLI in
// its own protocol's form: an image block on Claude Code's stdin, a
// localImage input (a file in the kennel) for Codex; the scripted CLIs
// record what they got into the work. A file of a type Fetch does not take
// gets one clear reply, and nothing reaches the agent or a CLI.
func TestJourneyPictureReachesTheCLI(t *testing.T) {
	t.Parallel()
	shot := pngOf(t)
	for cli, want := range map[string]*regexp.Regexp{
		"claude": regexp.MustCompile(fmt.Sprintf(`image: image/png %d bytes`, len(shot))),
		"codex":  regexp.MustCompile(fmt.Sprintf(`image: /\S+/\.fetch/in/\S+/shot\.png %d bytes`, len(shot))),
		// The ACP agent says which parts its prompt had.
		"gemini": regexp.MustCompile(fmt.Sprintf(`Got an image part \(image/png, %d bytes\)`, len(shot))),
	} {
		t.Run(cli, func(t *testing.T) {
			t.Parallel()
			w := newWorld(t, "app")
			w.start()
			w.llm.Script(taskCreateOn("call-app", "fix the layout shown in the screenshot [file:layout.css]", "app", cli), testkit.Say("Started it."))
			m := w.mark(ownerID)
			w.d.Post(testkit.DiscordPost{AuthorID: ownerID, Content: "fix the layout in this screenshot", Files: []testkit.DiscordFile{{Name: "shot.png", ContentType: "image/png", Data: shot}}})
			status := w.await(m, regexp.MustCompile(`Task \S+ on app \(`+cli+`\) — running`), "the task's status message")
			id := taskID(t, status.Text)
			res := w.awaitResult(m, regexp.MustCompile(`✅ Task `+id+` succeeded on app`), "the task's result")
			got, err := w.gitShow("app", "fetch/"+id, "IMAGES.txt")
			if cli == "gemini" {
				got, err = res.Text, nil
			}
			if err != nil || !want.MatchString(got) {
				t.Errorf("IMAGES.txt on fetch/%s = %q (%v); want the picture as the CLI's protocol carries it (%s)", id, got, err, want)
			}
		})
	}
	t.Run("refused", func(t *testing.T) {
		t.Parallel()
		w := newWorld(t, "app")
		w.start()
		m := w.mark(ownerID)
		w.d.Post(testkit.DiscordPost{AuthorID: ownerID, Content: "install this tool in app", Files: []testkit.DiscordFile{{Name: "tool.zip", Data: append([]byte("PK\x03\x04"), make([]byte, 60)...)}}})
		w.awaitNew(m, regexp.MustCompile(`I didn't take your files, and nothing was sent on: tool\.zip: a application/zip file`), "the refusal")
		if n := len(w.llm.Requests()); n != 0 {
			t.Errorf("the agent was asked %d times about a message whose file was refused", n)
		}
	})
}

// F6: /model picks the coding CLI's model for the conversation's tasks
// (the CLI is started with it); fetch task run --model with a name the CLI
// does not take is refused with the names it takes, and nothing starts.
func TestJourneyModelPerTask(t *testing.T) {
	t.Parallel()
	w := newWorld(t, "app")
	w.start()
	w.ask(ownerID, "/model opus", regexp.MustCompile(`^Tasks here use the model opus from now on`))
	m, id := w.startOnCLI("claude", "add a note to app", "add a note")
	w.awaitResult(m, regexp.MustCompile(`✅ Task `+id+` succeeded on app`), "the task's result")
	out, err := w.fetchCLI("task", "show", "--json", id)
	if err != nil {
		t.Fatalf("fetch task show: %v\n%s", err, out)
	}
	var shown struct {
		Model      string `json:"model"`
		StderrTail string `json:"stderr_tail"`
	}
	if err := json.Unmarshal([]byte(out), &shown); err != nil {
		t.Fatal(err)
	}
	if shown.Model != "opus" || !strings.Contains(shown.StderrTail, `"--model","opus"`) {
		t.Errorf("task %s has model %q and its CLI was started with %q; want opus", id, shown.Model, shown.StderrTail)
	}
	out, err = w.fetchCLI("task", "run", "--workspace", "app", "--model", "gpt-5.5", "add another note")
	if err == nil || !strings.Contains(out, `claude does not take the model "gpt-5.5"; it takes sonnet, opus, haiku`) {
		t.Errorf("fetch task run --model gpt-5.5 on claude: %v\n%s", err, out)
	}
}

// F2 on Codex and an ACP agent: /stop while the CLI works; the result's
// Continue button then resumes the CLI's own session (Codex's thread, the
// ACP session, told at the run's start), on the task's branch.
func TestJourneyFollowUpAfterAStopResumesTheSession(t *testing.T) {
	t.Parallel()
	for cli, goal := range map[string]string{
		"codex":  "add a health endpoint [scenario:await-message] [file:health.go]",
		"gemini": "add a health endpoint [scenario:slow:60] [file:health.go]",
	} {
		t.Run(cli, func(t *testing.T) {
			t.Parallel()
			w := newWorld(t, "app")
			w.start()
			_, id := w.startOnCLI(cli, "add a health endpoint to app", goal)
			// The CLI told its session (fetch task show has it) before the
			// stop.
			w.must("the run's session id", func() bool {
				shown, _ := w.fetchCLI("task", "show", "--json", id)
				return regexp.MustCompile(`"session_id":\s*"\S+"`).MatchString(shown)
			})
			m := w.mark(ownerID)
			w.d.DM(ownerID, "/stop")
			res := w.awaitResult(m, regexp.MustCompile(`Task `+id+` was cancelled`), "the task stopped")
			m2 := w.mark(ownerID)
			w.d.Click(ownerID, res.Msg.ID, w.button(res, "Continue"))
			w.awaitNew(m2, regexp.MustCompile(`What should task `+id+` do next\?`), "the question what next")
			m3 := w.send(ownerID, "finish the endpoint")
			w.awaitResult(m3, regexp.MustCompile(`✅ Task `+id+` succeeded on app`), "the follow-up's result")
			// The follow-up edits the session's file (Codex) or the
			// default one (the ACP fake).
			var files []string
			for _, f := range []string{"health.go", "FETCH_DONE.md"} {
				got, _ := w.gitShow("app", "fetch/"+id, f)
				files = append(files, got)
			}
			if !strings.Contains(strings.Join(files, "\n"), "edited this with the owner's permission (turn 2)") {
				t.Errorf("fetch/%s has no edit of the resumed session's second turn: %q", id, files)
			}
		})
	}
}

// F7: fetch task run --attach gives the CLI a file: it is in the kennel
// under the workspace's .fetch/in, the prompt names it, and a file of a
// type Fetch does not take is refused before anything starts.
func TestJourneyAttachFromTheTerminal(t *testing.T) {
	t.Parallel()
	w := newWorld(t, "app")
	shot := filepath.Join(t.TempDir(), "shot.png")
	if err := os.WriteFile(shot, pngOf(t), 0o600); err != nil {
		t.Fatal(err)
	}
	out, err := w.fetchCLI("task", "run", "--wait", "--workspace", "app", "--attach", shot, "fix the layout shown in the screenshot")
	if err != nil {
		t.Fatalf("fetch task run --attach: %v\n%s", err, out)
	}
	id := regexp.MustCompile(`Task (\S+) running on app`).FindStringSubmatch(out)
	if id == nil {
		t.Fatalf("no task id in %q", out)
	}
	kept, err := os.ReadFile(filepath.Join(w.workspacePath("app"), ".fetch", "in", id[1], "shot.png"))
	if err != nil || !bytes.Equal(kept, pngOf(t)) {
		t.Errorf("the picture in the kennel's workspace: %v (%d bytes)", err, len(kept))
	}
	shown, err := w.fetchCLI("task", "show", "--json", id[1])
	if err != nil || !strings.Contains(shown, ".fetch/in/"+id[1]+"/shot.png") {
		t.Errorf("the CLI was not told of the file (its argv in the task's stderr): %v\n%s", err, shown)
	}
	// fetch task show says how to take the work home (fetch task apply,
	// shown working in TestJourneyApplyBringsTheWorkHome).
	if human, err := w.fetchCLI("task", "show", id[1]); err != nil || !regexp.MustCompile(`Take it:\s+fetch task apply `+id[1]).MatchString(human) {
		t.Errorf("fetch task show does not say how to take the work: %v\n%s", err, human)
	}
	zip := filepath.Join(t.TempDir(), "tool.zip")
	os.WriteFile(zip, append([]byte("PK\x03\x04"), make([]byte, 60)...), 0o600)
	out, err = w.fetchCLI("task", "run", "--workspace", "app", "--attach", zip, "install this tool")
	if err == nil || !strings.Contains(out, "tool.zip: a application/zip file") {
		t.Errorf("fetch task run --attach tool.zip: %v\n%s", err, out)
	}
	if ls, _ := w.fetchCLI("task", "ls"); strings.Contains(ls, "install this tool") {
		t.Errorf("a task was made although its file was refused:\n%s", ls)
	}
}

// F8: a task started from the terminal on the workspace selected in chat
// is seen by /status and stopped by the owner's /stop.
func TestJourneyChatSeesTerminalTasks(t *testing.T) {
	t.Parallel()
	w := newWorld(t, "app")
	w.start()
	w.selectWorkspace("app")
	p := startWatched(t, w.environ(), w.watch, "task", "run", "--wait", "--workspace", "app", "take your time [scenario:slow:120]")
	var id string
	w.must("the terminal task to run", func() bool {
		out := p.log.String()
		if m := regexp.MustCompile(`Task (\S+) running on app`).FindStringSubmatch(out); m != nil {
			id = m[1]
		}
		return id != "" && strings.Contains(out, "Still working (1/120)")
	})
	st := w.ask(ownerID, "/status", statusRe)
	if !strings.Contains(st.Text, "Task: "+id+" on claude in app") {
		t.Errorf("/status does not show the terminal task %s:\n%s", id, st.Text)
	}
	w.ask(ownerID, "/stop", regexp.MustCompile(`^Stopping task `+id))
	if code := exited(t, p, waitTimeout); code != 3 {
		t.Errorf("fetch task run --wait exited %d after the chat's /stop; want 3 (cancelled)\n%s", code, p.log.String())
	}
}
