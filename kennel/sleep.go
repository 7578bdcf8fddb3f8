package kennel

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"path"
	"strings"
	"time"

	cerrdefs "github.com/containerd/errdefs"
	"github.com/docker/docker/api/types/container"
)

// Sleep puts this instance's idle kennels of the workspaces at or under
// root (an absolute path: another Fetch on the engine may use the same
// instance name for workspaces elsewhere, and its kennels are not this
// one's to stop) to sleep: it removes each running workspace container
// (never the egress proxy) that has been idle for at least idle, and
// returns their workspaces. The next run in such a
// workspace creates its container again (Exec); nothing of a run is kept
// across the sleep, as nothing is kept from one run to the next.
//
// Idle means that no run of this Kennel is going on in the workspace and
// none started or ended there within idle; that every look of Sleep within
// idle found no exec running in the container (another Fetch's runs,
// someone's docker exec); and, at the last look, that the shim knows of no
// task there that runs, has live processes, or ended less than idle ago
// with its log still unread (see holders). A container this Kennel has not
// seen running is idle at the earliest idle after Sleep first saw it quiet.
// An exec of another process that starts and ends between two looks is not
// seen.
//
// The decision and the removal happen under the lock that creating a
// container takes, and the container stops being the workspace's container
// for this Kennel before it is removed: a run of this Kennel that starts
// meanwhile waits and gets a new container, never the one being removed.
// A run of another Fetch whose exec fails because the container went away
// before the exec started tries again in a new container (createExec, run).
// idle <= 0 puts nothing to sleep.
func (k *Kennel) Sleep(ctx context.Context, idle time.Duration, root string) ([]string, error) {
	if idle <= 0 {
		return nil, nil
	}
	if !path.IsAbs(root) || path.Clean(root) != root {
		return nil, fmt.Errorf("kennel: sleep: root %q: want an absolute, clean path: %w", root, ErrInvalid)
	}
	list, err := k.docker.ContainerList(ctx, container.ListOptions{Filters: k.instanceFilter()})
	if err != nil {
		return nil, fmt.Errorf("kennel: sleep: list containers: %w", classify(err))
	}
	running := make(map[string]bool, len(list))
	var slept []string
	var errs []error
	for _, c := range list {
		ws := c.Labels[LabelWorkspace]
		if c.Labels[LabelEgress] != "" || ws == "" || c.State != container.StateRunning || !under(ws, root) {
			continue // the proxy is no kennel; another Fetch's kennels are not ours
		}
		running[c.ID] = true
		since, busy := k.quietSince(ws, c.ID)
		if busy {
			continue
		}
		execs, err := k.runningExecs(ctx, c.ID)
		switch {
		case errors.Is(err, errContainerGone):
			continue
		case err != nil:
			errs = append(errs, fmt.Errorf("container %s: %w", containerName(c.Names), err))
			continue
		case len(execs) > 0:
			k.noise(c.ID)
			continue
		case time.Since(since) < idle:
			continue
		}
		ok, err := k.sleepOne(ctx, ws, c.ID, containerName(c.Names), idle)
		if err != nil {
			errs = append(errs, err)
		}
		if ok {
			slept = append(slept, ws)
		}
	}
	k.mu.Lock()
	for id := range k.quiet {
		if !running[id] {
			delete(k.quiet, id)
		}
	}
	k.mu.Unlock()
	if len(errs) > 0 {
		return slept, fmt.Errorf("kennel: sleep: %w", errors.Join(errs...))
	}
	return slept, nil
}

// under reports whether the path p is root or lies below it.
func under(p, root string) bool {
	return p == root || strings.HasPrefix(p, strings.TrimSuffix(root, "/")+"/")
}

// quietSince is since when the workspace's container ctr has been quiet as
// far as this Kennel knows (its own runs' last use, the first look of Sleep
// that found it quiet), and whether a run of this Kennel goes on in the
// workspace.
func (k *Kennel) quietSince(workspace, ctr string) (time.Time, bool) {
	k.mu.Lock()
	defer k.mu.Unlock()
	if k.runningIn(workspace) {
		delete(k.quiet, ctr)
		return time.Time{}, true
	}
	q, ok := k.quiet[ctr]
	if !ok {
		q = time.Now()
		k.quiet[ctr] = q
	}
	if u := k.used[workspace]; u.After(q) {
		q = u
	}
	return q, false
}

// noise records that Sleep found ctr in use: its quiet starts again.
func (k *Kennel) noise(ctr string) {
	k.mu.Lock()
	delete(k.quiet, ctr)
	k.mu.Unlock()
}

// runningIn reports whether a run of this Kennel goes on in the workspace
// (claimed a container or not yet). Called with k.mu held.
func (k *Kennel) runningIn(workspace string) bool {
	for key := range k.runs {
		if key.workspace == workspace {
			return true
		}
	}
	return false
}

// sleepOne removes the workspace's container ctr if it is still idle, under
// createMu, and reports whether it did.
func (k *Kennel) sleepOne(ctx context.Context, workspace, ctr, name string, idle time.Duration) (bool, error) {
	log := k.log.With(logWorkspace, workspace, logContainer, name)
	k.createMu.Lock()
	defer k.createMu.Unlock()
	holders, err := k.holders(ctx, ctr, time.Now().Add(-idle))
	if errors.Is(err, errContainerGone) {
		k.forget(workspace, ctr)
		return false, nil
	}
	if err != nil {
		// Not knowing is not idle: keep it, and look again next time.
		return false, fmt.Errorf("container %s: %w", name, err)
	}
	k.mu.Lock()
	idleNow := len(holders) == 0 && !k.runningIn(workspace) && time.Since(k.used[workspace]) >= idle
	if idleNow {
		if c, ok := k.containers[workspace]; ok && c.id == ctr {
			delete(k.containers, workspace) // from now on no run of this Kennel can claim it
		}
	}
	delete(k.quiet, ctr)
	k.mu.Unlock()
	if !idleNow {
		log.Debug("kennel: not idle after all; kept", logBusy, holders)
		return false, nil
	}
	rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), sleepRemoveTimeout)
	defer cancel()
	err = k.docker.ContainerRemove(rctx, ctr, container.RemoveOptions{Force: true})
	if err != nil && !cerrdefs.IsNotFound(err) {
		return false, fmt.Errorf("remove %s: %w", name, classify(err))
	}
	log.Info("kennel: idle; container stopped (a run starts it again)", logIdle, idle)
	return true, nil
}

// Sleep puts the idle kennels of every engine to sleep (Kennel.Sleep).
func (p *Pool) Sleep(ctx context.Context, idle time.Duration, root string) ([]string, error) {
	var slept []string
	var errs []error
	for _, name := range p.names {
		s, err := p.kennels[name].Sleep(ctx, idle, root)
		slept = append(slept, s...)
		if err != nil {
			errs = append(errs, fmt.Errorf("engine %s: %w", name, err))
		}
	}
	return slept, errors.Join(errs...)
}

// SleepTarget is what a Sleeper puts to sleep: *Kennel and *Pool.
type SleepTarget interface {
	Sleep(ctx context.Context, idle time.Duration, root string) ([]string, error)
}

// Sleeper puts idle kennels to sleep in the background: it runs Sleep every
// SleepInterval(idle) from Open to Close. It is what a long-lived Fetch
// (fetch serve, fetch chat) runs; a failed look is logged (once while it
// keeps failing the same way) and tried again at the next tick.
type Sleeper struct {
	target SleepTarget
	idle   time.Duration
	root   string
	log    *slog.Logger

	cancel context.CancelFunc
	done   chan struct{}
}

// NewSleeper builds a Sleeper over k (a *Kennel or a *Pool) for the
// kennels of the workspaces under root idle for idle; idle <= 0 makes one
// that does nothing. It starts nothing.
func NewSleeper(k SleepTarget, idle time.Duration, root string, logger *slog.Logger) *Sleeper {
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	return &Sleeper{target: k, idle: idle, root: root, log: logger}
}

// Sleep bounds of the interval between two looks: a fraction of the idle
// time, so that a kennel sleeps soon after it has been idle long enough,
// but not so often that the looks cost (each is a list and an inspect per
// running kennel, and an exec of the shim for a kennel about to sleep).
const (
	sleepIntervalMin = 250 * time.Millisecond
	sleepIntervalMax = time.Minute
	// sleepLookTimeout bounds one look.
	sleepLookTimeout = time.Minute
	// sleepRemoveTimeout bounds the removal of a container put to sleep
	// (a run that needs the workspace waits for it).
	sleepRemoveTimeout = 30 * time.Second
)

// SleepInterval is how often a Sleeper looks for kennels idle for idle.
func SleepInterval(idle time.Duration) time.Duration {
	return min(max(idle/4, sleepIntervalMin), sleepIntervalMax)
}

// Open starts the Sleeper's goroutine, which Close stops.
func (s *Sleeper) Open(ctx context.Context) error {
	if s.idle <= 0 || s.done != nil {
		return nil
	}
	ctx, s.cancel = context.WithCancel(context.WithoutCancel(ctx))
	s.done = make(chan struct{})
	go s.loop(ctx) // ends when Close cancels ctx; Close waits for done
	return nil
}

// Close stops the Sleeper and waits for its look in progress to end.
func (s *Sleeper) Close(ctx context.Context) error {
	if s.done == nil {
		return nil
	}
	s.cancel()
	select {
	case <-s.done:
		return nil
	case <-ctx.Done():
		return fmt.Errorf("kennel: sleeper: close: %w", context.Cause(ctx))
	}
}

func (s *Sleeper) loop(ctx context.Context) {
	defer close(s.done)
	t := time.NewTicker(SleepInterval(s.idle))
	defer t.Stop()
	lastErr := ""
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		lctx, cancel := context.WithTimeout(ctx, sleepLookTimeout)
		_, err := s.target.Sleep(lctx, s.idle, s.root)
		cancel()
		switch {
		case err == nil:
			lastErr = ""
		case ctx.Err() != nil:
			return
		case err.Error() != lastErr:
			lastErr = err.Error()
			s.log.Warn("kennel: looking for idle kennels failed; trying again", logErr, err)
		}
	}
}
