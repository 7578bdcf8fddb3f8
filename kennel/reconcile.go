package kennel

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/docker/docker/api/types/container"
	"golang.org/x/sync/errgroup"

	"github.com/fetch-dev/fetch/kennel/shim"
)

// reconcileParallel bounds the containers asked at once during Reconcile.
const reconcileParallel = 4

// Leftover is one of this instance's containers as Reconcile found it.
type Leftover struct {
	Workspace string
	Container string // ID
	Name      string
	// State is Docker's state of the container ("running", "exited", …), or
	// "gone" when it stopped while Reconcile looked into it.
	State string
	// Tasks are the tasks the container's wrapper knows of: running ones,
	// finished ones not yet forgotten, and processes that still carry a task
	// id. Only running containers have any.
	Tasks []TaskState
}

// Reconcile finds this instance's containers (by label) and, in each running
// one, the tasks left from before a restart. It reports; it changes nothing.
// The caller decides what to Follow, Stop, Forget or Remove.
func (k *Kennel) Reconcile(ctx context.Context) ([]Leftover, error) {
	list, err := k.docker.ContainerList(ctx, container.ListOptions{All: true, Filters: k.instanceFilter()})
	if err != nil {
		return nil, fmt.Errorf("kennel: reconcile: list containers: %w", classify(err))
	}
	list = slices.DeleteFunc(list, func(c container.Summary) bool { return c.Labels[LabelEgress] != "" }) // the proxy is no kennel
	out := make([]Leftover, len(list))
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(reconcileParallel)
	for i, c := range list {
		out[i] = Leftover{
			Workspace: c.Labels[LabelWorkspace],
			Container: c.ID,
			Name:      containerName(c.Names),
			State:     string(c.State),
		}
		if c.State != container.StateRunning {
			continue
		}
		g.Go(func() error {
			tasks, err := k.tasksIn(gctx, c.ID)
			if errors.Is(err, errContainerGone) {
				out[i].State = "gone"
				return nil // died since the listing
			}
			if err != nil {
				return fmt.Errorf("container %s: %w", out[i].Name, err)
			}
			out[i].Tasks = tasks
			return nil
		})
	}
	if err := g.Wait(); err != nil {
		return nil, fmt.Errorf("kennel: reconcile: %w", err)
	}
	for _, l := range out {
		k.log.Info("kennel: found container", logWorkspace, l.Workspace, logContainer, l.Name, logState, l.State, logTasks, len(l.Tasks))
	}
	return out, nil
}

// tasksIn lists the shim's tasks in a container.
func (k *Kennel) tasksIn(ctx context.Context, ctr string) ([]TaskState, error) {
	res, err := k.control(ctx, ctr, shim.PsArgv(), shim.ExitOK)
	if err != nil {
		return nil, err
	}
	var tasks []TaskState
	sc := bufio.NewScanner(bytes.NewReader(res.stdout))
	sc.Buffer(nil, controlOutputMax)
	for sc.Scan() {
		var ti shim.TaskInfo
		if err := json.Unmarshal(sc.Bytes(), &ti); err != nil {
			return nil, fmt.Errorf("ps: %w: %w", ErrShim, err)
		}
		tasks = append(tasks, taskState(ti))
	}
	return tasks, sc.Err()
}

func containerName(names []string) string {
	if len(names) == 0 {
		return ""
	}
	return strings.TrimPrefix(names[0], "/")
}
