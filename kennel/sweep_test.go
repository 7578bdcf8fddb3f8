package kennel_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/fetch-dev/fetch/kennel"
)

// daemon is a shell loop that leaves its task with nothing to find it by:
// an empty environment, a session of its own, SIGTERM, SIGINT and SIGHUP
// ignored, and a new short-lived child every 10 ms. mark is its $0, so that
// the tests see it in ps.
func daemon(mark, body string) string {
	return `env -i /usr/bin/setsid sh -c 'trap "" TERM INT HUP; while :; do ` + body + ` sleep 0.3 & sleep 0.01; done' ` + mark
}

// TestTrackedRunLeavesNothing: a tracked run that leaves a detached process
// (env -i setsid) and one that double-forks out of it and ignores SIGTERM
// leaves neither once the run has ended.
func TestTrackedRunLeavesNothing(t *testing.T) {
	e := newEnv(t)
	mark := "mark-" + newTaskID()
	script := daemon(mark, "") + ` &
( ` + daemon(mark, "") + ` & ) &
sleep 0.3; echo started`
	res, l, err := e.exec(context.Background(), kennel.ExecSpec{Argv: []string{"sh", "-c", script}, TaskID: newTaskID()})
	if err != nil || res.ExitCode != 0 {
		t.Fatalf("run: %+v, %v (stderr %q)", res, err, l.err())
	}
	if left := e.processesMatching(mark); len(left) > 0 {
		t.Errorf("processes left after the run: %q", left)
	}
}

// TestTrackedRunStartsAlone: what a run whose shim was killed left behind (a
// detached daemon that reads every process's environment into /tmp) is gone
// before the next tracked run's child starts; that child sees no trace of it,
// and the daemon never saw the new run's secret.
func TestTrackedRunStartsAlone(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	mark := "mark-" + newTaskID()
	first := newTaskID()
	spy := `cat /proc/[0-9]*/environ 2>/dev/null | tr "\0" "\n" | grep SECRET_KEY >> /tmp/stolen;`
	script := daemon(mark, spy) + ` &
sleep 0.3; echo ready; sleep 600`
	run := e.start(ctx, e.k, kennel.ExecSpec{Argv: []string{"sh", "-c", script}, TaskID: first, Env: []string{"SECRET_KEY=first-secret"}}, "ready")
	// The shim dies as the OOM killer or a crash would kill it: it cleans
	// up nothing.
	res, l := e.mustExec("pkill", "-KILL", "-f", "^/usr/local/bin/fetch-shim run --task "+first+" ")
	if res.ExitCode != 0 {
		t.Fatalf("pkill: %+v %q", res, l.err())
	}
	if res, err := run.wait(t, stopLimit); err == nil && res.ExitCode != 137 {
		t.Fatalf("the killed run: %+v, %v", res, err)
	}
	if len(e.processesMatching(mark)) == 0 {
		t.Fatal("the daemon is not running: the test tests nothing")
	}

	// The mark reaches the check through its environment, so that no
	// command line of the check holds it.
	check := `seen=alone; ps -ww -eo args > /tmp/ps
while read -r line; do case $line in *"$MARK"*) seen=seen ;; esac; done < /tmp/ps
echo $seen; sleep 0.2; grep -c second-secret /tmp/stolen || true`
	res, l, err := e.exec(ctx, kennel.ExecSpec{Argv: []string{"sh", "-c", check}, TaskID: newTaskID(), Env: []string{"SECRET_KEY=second-secret", "MARK=" + mark}})
	if err != nil || res.ExitCode != 0 {
		t.Fatalf("second run: %+v, %v (stderr %q)", res, err, l.err())
	}
	if got := strings.Join(l.out(), " "); got != "alone 0" {
		t.Errorf("the second run saw %q, want %q", got, "alone 0")
	}
	if left := e.processesMatching(mark); len(left) > 0 {
		t.Errorf("processes left: %q", left)
	}
}

// TestTrackedRunSparesConcurrentExecs: a tracked run's sweep, when it starts
// and when it ends, does not touch an untracked exec running meanwhile (a
// read of git, say).
func TestTrackedRunSparesConcurrentExecs(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	e.mustExec("true") // the container exists
	slow := e.start(ctx, e.k, kennel.ExecSpec{Argv: []string{"sh", "-c", "echo started; sleep 2; echo survived"}}, "started")
	res, l, err := e.exec(ctx, kennel.ExecSpec{Argv: []string{"true"}, TaskID: newTaskID()})
	if err != nil || res.ExitCode != 0 {
		t.Fatalf("tracked run: %+v, %v (stderr %q)", res, err, l.err())
	}
	res, err = slow.wait(t, 10*time.Second)
	if err != nil || res.ExitCode != 0 || res.Stopped {
		t.Fatalf("the concurrent exec: %+v, %v", res, err)
	}
	if got := slow.lines.out(); strings.Join(got, " ") != "started survived" {
		t.Errorf("the concurrent exec printed %q", got)
	}
}
