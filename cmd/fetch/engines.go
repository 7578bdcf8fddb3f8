package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"time"

	"github.com/docker/docker/api/types/container"
	"github.com/docker/docker/api/types/filters"
	"github.com/docker/docker/client"

	"github.com/fetch-dev/fetch/internal/store"
	"github.com/fetch-dev/fetch/internal/task"
	"github.com/fetch-dev/fetch/internal/workspace"
	"github.com/fetch-dev/fetch/kennel"
)

// localEngine names the engine next to Fetch (DOCKER_HOST or the default
// socket): workspaces on it are directories under FETCH_WORKSPACES.
const localEngine = "local"

// dialTimeout bounds connecting to an engine at start.
const dialTimeout = 30 * time.Second

// kennels are the sandboxes on every engine Fetch uses, and the workspace
// registry that places workspaces on them. The local engine's kennel is
// always there (workspaces that are directories here); FETCH_ENGINES
// names the engines new workspaces may go to.
type kennels struct {
	pool       *kennel.Pool
	workspaces *workspace.Registry
	release    func()
	// clients are the engines' Docker clients, by name; kcfg the kennels'
	// configuration (their limits).
	clients map[string]client.APIClient
	kcfg    kennel.Config
	// egress is the task engine's side of the kennels' way out (nil
	// when FETCH_EGRESS=off).
	egress *task.Egress
	// sleeper stops the kennels of this Fetch's workspaces idle for
	// FETCH_KENNEL_IDLE, on every engine, while a long-lived command
	// (chat, serve) has it open.
	sleeper *kennel.Sleeper
}

// statusTimeout bounds the look at the engines for /status.
const statusTimeout = 3 * time.Second

// describe says, for /status, which engines Fetch uses and their load: the
// kennels on each and the memory left for more. "" when only the local
// engine is used.
func (ks *kennels) describe(ctx context.Context) string {
	if len(ks.clients) < 2 {
		return ""
	}
	ctx, cancel := context.WithTimeout(ctx, statusTimeout)
	defer cancel()
	var parts []string
	for _, name := range ks.pool.Names() {
		c := ks.clients[name]
		if c == nil {
			parts = append(parts, name+" (unavailable)")
			continue
		}
		l, err := load(ctx, c, ks.kcfg)
		if err != nil {
			parts = append(parts, fmt.Sprintf("%s (unreachable: %v)", name, err))
			continue
		}
		parts = append(parts, fmt.Sprintf("%s (%d kennel(s), %.1f GiB and %.0f CPUs left)", name, l.kennels, float64(l.freeMem)/(1<<30), l.freeCPU))
	}
	return strings.Join(parts, ", ")
}

// engineLoad is what an engine has left for kennels.
type engineLoad struct {
	kennels int
	freeMem int64
	freeCPU float64
}

// load reads an engine's room: its memory and CPUs minus the limits of this
// Fetch's kennels on it (negative when they may use more than it has).
func load(ctx context.Context, c client.APIClient, kcfg kennel.Config) (engineLoad, error) {
	info, err := c.Info(ctx)
	if err != nil {
		return engineLoad{}, err
	}
	instance := kcfg.Instance
	if instance == "" {
		instance = kennel.DefaultInstance
	}
	list, err := c.ContainerList(ctx, container.ListOptions{Filters: filters.NewArgs(filters.Arg("label", kennel.LabelInstance+"="+instance))})
	if err != nil {
		return engineLoad{}, err
	}
	mem, cpus := kcfg.Memory, kcfg.CPUs
	if mem == 0 {
		mem = kennel.DefaultMemory
	}
	if cpus == 0 {
		cpus = kennel.DefaultCPUs
	}
	return engineLoad{kennels: len(list), freeMem: info.MemTotal - int64(len(list))*mem, freeCPU: float64(info.NCPU) - float64(len(list))*cpus}, nil
}

// newKennels connects to the engines. The local engine is not contacted
// until a task needs it (the conversations work without Docker); with
// remote, every other engine is dialed now and gets the kennel image from
// the local one when it lacks it (commands that only read the database
// skip that). An engine that does not answer is kept, with a warning in
// the log (its tasks are followed again once it answers; it gets the image
// at the next start); one whose keys or address are wrong is left out,
// with an error: its workspaces say so when used.
func newKennels(ctx context.Context, cfg Config, db *store.DB, log *slog.Logger, remote bool) (*kennels, error) {
	local, err := localDocker(ctx, cfg)
	if err != nil {
		return nil, err
	}
	closers := []func(){func() { local.Close() }}
	release := func() {
		for _, c := range closers {
			c()
		}
	}
	eg, key, err := kennelEgress(cfg)
	if err != nil {
		release()
		return nil, err
	}
	kcfg := kennel.Config{Image: cfg.KennelImage, User: kennelUserSpec(), Egress: eg}
	lk, err := kennel.New(local, kcfg, log)
	if err != nil {
		release()
		return nil, err
	}
	byName := map[string]*kennel.Kennel{localEngine: lk}
	clients := map[string]client.APIClient{localEngine: local}
	var choices []string
	for _, spec := range cfg.Engines {
		if !remote && spec.Kind != kennel.EngineLocal {
			continue
		}
		if spec.Kind == kennel.EngineLocal {
			choices = append(choices, localEngine)
			continue
		}
		dctx, cancel := context.WithTimeout(ctx, dialTimeout)
		dial := cfg.Dial
		dial.Logger = log.With("engine", spec.Name)
		e, err := kennel.DialDeferred(dctx, spec, dial)
		cancel()
		if e == nil {
			log.Error("engine unavailable; its workspaces cannot be used until Fetch restarts with it reachable", "engine", spec.Name, "err", err)
			continue
		}
		closers = append(closers, func() { e.Close() })
		away := err != nil
		if away {
			// Kept: its tasks are followed again when it answers.
			log.Warn("engine does not answer; its workspaces wait for it", "engine", spec.Name, "err", err)
		}
		copied := false
		if !away {
			ictx, cancel := context.WithTimeout(ctx, 10*time.Minute)
			copied, err = kennel.EnsureImage(ictx, local, e, cfg.KennelImage)
			cancel()
		}
		switch {
		case away:
		case err != nil:
			log.Warn("the kennel image could not be copied to the engine; it must have it", "engine", spec.Name, "image", cfg.KennelImage, "err", err)
		case copied:
			log.Info("kennel image copied to the engine", "engine", spec.Name, "image", cfg.KennelImage)
		}
		rcfg := kcfg
		rcfg.Volumes = true // nothing of this machine's disk is there
		k, err := kennel.New(e, rcfg, log.With("engine", spec.Name))
		if err != nil {
			release()
			return nil, err
		}
		byName[spec.Name] = k
		clients[spec.Name] = e
		choices = append(choices, spec.Name)
	}
	if len(cfg.Engines) == 0 {
		choices = []string{localEngine}
	}
	placement := workspace.NewPlacement(db, func(ctx context.Context) (string, error) {
		name, err := roomiest(ctx, choices, clients, kcfg)
		if err != nil {
			return "", err
		}
		if name == localEngine {
			return "", nil
		}
		return name, nil
	})
	reg := newWorkspaces(cfg, log, nil).Placed(placement)
	pool, err := kennel.NewPool(localEngine, byName, reg.EngineOf)
	if err != nil {
		release()
		return nil, err
	}
	reg.InKennel(pool)
	return &kennels{pool: pool, workspaces: reg, release: release, clients: clients, kcfg: kcfg, egress: taskEgress(key, db, reg),
		sleeper: kennel.NewSleeper(pool, cfg.KennelIdle, reg.Root(), log)}, nil
}

// roomiest picks the engine with the most memory left for kennels: its
// memory minus the limits of the kennels already there (CPUs break ties).
// One engine needs no look.
func roomiest(ctx context.Context, names []string, clients map[string]client.APIClient, kcfg kennel.Config) (string, error) {
	if len(names) == 1 {
		return names[0], nil
	}
	best, bestFree, bestCPU := "", int64(-1<<62), -1.0
	var errs []error
	for _, n := range names {
		c := clients[n]
		if c == nil {
			continue
		}
		l, err := load(ctx, c, kcfg)
		if err != nil {
			errs = append(errs, fmt.Errorf("engine %s: %w", n, err))
			continue
		}
		if l.freeMem > bestFree || l.freeMem == bestFree && l.freeCPU > bestCPU {
			best, bestFree, bestCPU = n, l.freeMem, l.freeCPU
		}
	}
	if best == "" {
		return "", fmt.Errorf("no engine can take a new workspace: %w", errors.Join(errs...))
	}
	return best, nil
}

// localDocker is the client of the local engine, found the way the docker
// CLI finds it: DOCKER_HOST (with DOCKER_TLS_VERIFY and DOCKER_CERT_PATH),
// the current docker context, or the default socket. A Unix socket is not
// contacted until a task needs it; an engine over TCP or SSH is dialed now
// (its TLS material and host key are checked once, here).
func localDocker(ctx context.Context, cfg Config) (client.APIClient, error) {
	spec, err := kennel.EngineSpec{Name: localEngine, Kind: kennel.EngineLocal}.Resolve(cfg.Dial)
	if err != nil {
		return nil, err
	}
	if spec.Kind == kennel.EngineUnix {
		return kennel.NewDockerClient(spec.Host)
	}
	return kennel.Dial(ctx, spec, cfg.Dial)
}
