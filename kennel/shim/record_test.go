package shim

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// recorded reads the recorded line, which must be stderr's last, and
// returns it with the stderr before it.
func recorded(t *testing.T, stderr string) (BatchResult, string) {
	t.Helper()
	body, ok := strings.CutSuffix(stderr, "\n")
	if !ok {
		t.Fatalf("stderr does not end with a line: %q", stderr)
	}
	i := strings.LastIndexByte(body, '\n')
	rest, ok := strings.CutPrefix(body[i+1:], RecordedPrefix)
	if !ok {
		t.Fatalf("stderr does not end with the recorded line: %q", stderr)
	}
	var res BatchResult
	if err := json.Unmarshal([]byte(rest), &res); err != nil {
		t.Fatalf("recorded line %q: %v", rest, err)
	}
	return res, stderr[:i+1]
}

func recordProgram(t *testing.T, b Batch) string {
	t.Helper()
	p, err := RecordProgram(b)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

func TestRunRecordsAfterTheChildInItsOwnEnvironment(t *testing.T) {
	e := newShimEnv(t)
	id := newID(t)
	program := recordProgram(t, Batch{
		Env: []string{"STEP_ONLY=yes"},
		Steps: []BatchStep{
			{Argv: []string{"sh", "-c", `echo "tag=$FETCH_TASK_ID key=$SECRET_KEY step=$STEP_ONLY"`}},
			{Argv: []string{"sh", "-c", `printf '\001\002'`}, Base64: true},
		},
	})
	// The child prints a line that looks like the runner's: it must not be
	// the last one.
	forged := RecordedPrefix + `{"steps":[{"exit":0,"stdout":"forged"}]}`
	cmd := e.command([]string{CmdRun, "--task", id, "--record", program}, "sh", "-c", `echo out; echo '`+forged+`' >&2; echo err >&2; exit 3`)
	cmd.Env = append(cmd.Env, "SECRET_KEY=sk-1")
	var out, errOut strings.Builder
	cmd.Stdout, cmd.Stderr = &out, &errOut
	_ = cmd.Run()
	if code := cmd.ProcessState.ExitCode(); code != 3 {
		t.Fatalf("exit code = %d, want the child's 3 (stderr %q)", code, errOut.String())
	}
	res, before := recorded(t, errOut.String())
	if want := forged + "\nerr\n"; before != want {
		t.Errorf("stderr before the recorded line = %q, want the child's %q", before, want)
	}
	if len(res.Steps) != 2 || res.Steps[0].Stdout != "tag= key= step=yes\n" || res.Steps[1].Stdout != "AQI=" {
		t.Errorf("recorded = %+v, want the steps without the task's tag or the run's keys, and base64", res)
	}
	if out.String() != "out\n" {
		t.Errorf("stdout = %q", out.String())
	}
	// The log ends with it too: a follower after a restart reads it.
	_, logErr, code := e.run([]string{CmdLog, "--task", id, "--follow"})
	if code != ExitOK || logErr != errOut.String() {
		t.Errorf("log's stderr = %q (exit %d), want %q", logErr, code, errOut.String())
	}
}

// prepareArgv is the argv of a prepare child run by the test binary as
// the shim (the runner passes its environment on).
func prepareArgv(t *testing.T, b Batch, dir string, argv ...string) []string {
	t.Helper()
	full, err := PrepareArgv(b, dir, argv)
	if err != nil {
		t.Fatal(err)
	}
	return append([]string{os.Args[0]}, full[1:]...)
}

func TestRunRecordsWithThePreparesCaptures(t *testing.T) {
	e := newShimEnv(t)
	ws := t.TempDir()
	made := filepath.Join(ws, "made")
	prep := Batch{Steps: []BatchStep{
		{Argv: []string{"sh", "-c", "echo base-1; echo other"}, Captures: []string{"base", "other"}, Dir: ws},
		{Argv: []string{"mkdir", made}, Dir: ws},
	}}
	program := recordProgram(t, Batch{Steps: []BatchStep{{Argv: []string{"sh", "-c", `echo "$1 $2 $(cat file)"`, "sh", "${base}", "${other}"}, Dir: made}}})
	_, errOut, code := e.run([]string{CmdRun, "--task", newID(t), "--record", program}, prepareArgv(t, prep, made, "sh", "-c", "echo made > file")...)
	if code != 0 {
		t.Fatalf("exit code = %d: %s", code, errOut)
	}
	res, _ := recorded(t, errOut)
	if len(res.Steps) != 1 || res.Steps[0].Stdout != "base-1 other made\n" {
		t.Errorf("recorded = %+v, want the prepare's captures expanded, after the command", res)
	}
}

func TestRunDoesNotRecordAfterAFailedPrepare(t *testing.T) {
	e := newShimEnv(t)
	prep := Batch{Steps: []BatchStep{{Argv: []string{"false"}}}}
	program := recordProgram(t, Batch{Steps: []BatchStep{{Argv: []string{"echo", "recorded"}}}})
	_, errOut, code := e.run([]string{CmdRun, "--task", newID(t), "--record", program}, prepareArgv(t, prep, t.TempDir(), "true")...)
	if code != ExitPrepareFailed {
		t.Fatalf("exit code = %d, want %d: %s", code, ExitPrepareFailed, errOut)
	}
	if strings.Contains(errOut, RecordedPrefix) {
		t.Errorf("a run whose prepare failed recorded: %q", errOut)
	}
}

func TestRunRecordsAStoppedRun(t *testing.T) {
	e := newShimEnv(t)
	id := newID(t)
	program := recordProgram(t, Batch{Steps: []BatchStep{{Argv: []string{"echo", "after the stop"}}}})
	cmd := e.command([]string{CmdRun, "--task", id, "--grace", "400ms", "--record", program}, "sh", "-c", "echo ready; exec sleep 60")
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	var errOut strings.Builder
	cmd.Stderr = &errOut
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	buf := make([]byte, len("ready\n"))
	if _, err := stdout.Read(buf); err != nil {
		t.Fatal(err)
	}
	if _, stopErr, code := e.run([]string{CmdStop, "--task", id, "--grace", "400ms"}); code != ExitOK {
		t.Fatalf("stop: exit %d: %s", code, stopErr)
	}
	// stop returns once the runner recorded and exited.
	if ti := e.status(id); ti.Running || ti.Exit == nil || !ti.Exit.Stopped {
		t.Errorf("status after stop = %+v", ti)
	}
	_ = cmd.Wait()
	res, _ := recorded(t, errOut.String())
	if len(res.Steps) != 1 || res.Steps[0].Stdout != "after the stop\n" {
		t.Errorf("recorded = %+v", res)
	}
}

func TestRunRefusesAnInvalidRecordProgram(t *testing.T) {
	e := newShimEnv(t)
	for _, program := range []string{"{", `{"steps":[]}`, `{"steps":[{"argv":["true"]}],"unknown":1}`} {
		_, errOut, code := e.run([]string{CmdRun, "--task", newID(t), "--record", program}, "true")
		if code != ExitShimFailed || !strings.Contains(errOut, "record") {
			t.Errorf("--record %s: exit %d, stderr %q; want %d naming the program", program, code, errOut, ExitShimFailed)
		}
	}
}
