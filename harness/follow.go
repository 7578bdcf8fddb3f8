package harness

import (
	"context"
	"fmt"

	"github.com/fetch-dev/fetch/kennel"
)

// Follower reads a run back from the kennel; *kennel.Kennel implements it.
type Follower interface {
	Follow(ctx context.Context, workspace, taskID string, fn kennel.LineHandler) (kennel.Result, error)
}

// Follow reads back a run that an earlier process started with Run under
// task.ID (a Fetch that was killed while the CLI worked): it replays the
// run's output from its log in the kennel through the adapter's parser,
// calling onEvent for every event in order, follows it while the CLI still
// runs, and returns how the run ended.
//
// The Outcome has no Files, and Prepared when the run had a Prepare: the snapshot Run takes before a run died with
// the process that took it; the caller measures the changes itself. When
// the kennel has no trace of the run the error wraps kennel.ErrNoTask; when
// its wrapper was killed before recording the exit, kennel.ErrTaskLost.
// Cancelling ctx stops the reading, not the run.
func Follow(ctx context.Context, f Follower, adapter Adapter, task Task, onEvent func(Event)) (Outcome, error) {
	name := adapter.Name()
	s := newStream(adapter.NewParser(task), onEvent)
	res, err := f.Follow(ctx, task.Workspace, task.ID, s.output)
	s.flush()
	e := end{
		exitCode:   res.ExitCode,
		stderrTail: string(res.StderrTail),
		stopped:    res.Stopped || ctx.Err() != nil,
	}
	e.notInKennel(adapter)
	o := s.tally.outcome(e)
	o.Prepared, o.Recorded = s.prepared, s.recorded
	if err != nil {
		return o, fmt.Errorf("harness: follow %s: %w", name, err)
	}
	return o, nil
}
