package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"path/filepath"
	"strings"
	"time"

	"github.com/docker/docker/client"
	openrouter "github.com/revrost/go-openrouter"

	"github.com/fetch-dev/fetch/harness"
	"github.com/fetch-dev/fetch/internal/discord"
	"github.com/fetch-dev/fetch/internal/doctor"
	"github.com/fetch-dev/fetch/internal/trust"
	"github.com/fetch-dev/fetch/kennel"
)

const doctorUsage = `Usage: fetch doctor [--json]

Check everything Fetch needs and print one line per check: ok, warn or
fail, and for what is not ok the one command or setting that fixes it.
The exit code is 1 when a check fails.

Checks: the configuration; each Docker engine (reached as the docker CLI
reaches it, and those of FETCH_ENGINES) with its API version and load; the
kennel image; a probe container with the kennel's hardening (non-root, no
capabilities, read-only root, no Docker socket, limits) and which coding
CLIs the image holds; the data directory; the workspaces folder, for Fetch
and for the kennel's user; the database (integrity, write-ahead log); free
disk; the Discord token (asks Discord who the bot is); the OpenRouter key
(asks for the key's information, never a completion); each harness's key;
the time zone.

  --json   print the report as JSON: {"ok": bool, "checks": [{"name",
           "status", "detail", "fix"}]}
`

// Timeouts of the checks.
const (
	// doctorCheckTimeout bounds each network check (engine, Discord, LLM).
	doctorCheckTimeout = 15 * time.Second
	// doctorProbeTimeout bounds the probe container.
	doctorProbeTimeout = 3 * time.Minute
	// fastCheckTimeout bounds each check run at the start of serve and chat.
	fastCheckTimeout = 3 * time.Second
	// doctorInstance labels the probe's containers, apart from the
	// kennels of a running Fetch.
	doctorInstance = "fetch-doctor"
)

func runDoctor(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) error {
	asJSON := false
	for _, a := range args {
		switch a {
		case "--json", "-json":
			asJSON = true
		default:
			usageError(stderr, "doctor", fmt.Sprintf("unexpected argument %q", a))
			return &exitError{code: exitUsage}
		}
	}
	var r doctor.Report
	cfg, err := loadConfig(getenv)
	var cfgErr *ConfigError
	switch {
	case errors.As(err, &cfgErr):
		for _, p := range cfgErr.Problems {
			r.Add(doctor.Check{Name: "config", Status: doctor.Fail, Detail: p, Fix: "correct the variable (fetch help lists them)"})
		}
	case err != nil:
		return err
	default:
		r.Add(doctor.Check{Name: "config", Status: doctor.OK, Detail: fmt.Sprintf("data %s, workspaces %s, harness %s", cfg.DataDir, cfg.Workspaces, cfg.Harness)})
		log, red, err := newLogger(stderr, cfg, slog.LevelError)
		if err != nil {
			return err
		}
		checkAll(ctx, cfg, log, &r)
		for i := range r.Checks {
			r.Checks[i].Detail, r.Checks[i].Fix = red.String(r.Checks[i].Detail), red.String(r.Checks[i].Fix)
		}
	}
	if asJSON {
		err = r.WriteJSON(stdout)
	} else {
		err = r.WriteText(stdout)
	}
	if err != nil {
		return err
	}
	if r.Failed() {
		return &exitError{code: exitFailed}
	}
	return nil
}

// checkAll runs every check, in the order a reader fixes things.
func checkAll(ctx context.Context, cfg Config, log *slog.Logger, r *doctor.Report) {
	hs := doctorHarnesses(cfg)
	local, ok := checkEngines(ctx, cfg, log, r)
	var prober doctor.Prober
	if ok {
		ictx, cancel := context.WithTimeout(ctx, doctorCheckTimeout)
		img := doctor.ImageCheck(ictx, local, cfg.KennelImage, doctor.Defaults(hs)...)
		cancel()
		r.Add(img)
		if img.Status == doctor.OK {
			// The kennels' own user: the probe shows what a task will meet.
			k, err := kennel.New(local, kennel.Config{Image: cfg.KennelImage, Instance: doctorInstance, User: kennelUserSpec()}, log)
			if err != nil {
				r.Add(doctor.Check{Name: "kennel", Status: doctor.Fail, Detail: err.Error()})
			} else {
				prober = k
			}
		}
		defer local.Close()
	}
	r.Add(doctor.DataDirCheck(cfg.DataDir))
	if c, ok := caCheck(cfg.CA); ok {
		r.Add(c)
	}
	var programs []string
	for _, h := range hs {
		programs = append(programs, h.Program)
	}
	pctx, cancel := context.WithTimeout(ctx, doctorProbeTimeout)
	uid, gid := kennelUser()
	ws, probe := doctor.WorkspacesCheck(pctx, cfg.Workspaces, uid, gid, prober, programs)
	cancel()
	var installed map[string]bool
	if probe != nil {
		r.Add(doctor.HardeningCheck(*probe, doctor.Hardening{UID: uid, GID: gid, Memory: kennel.DefaultMemory, Pids: kennel.DefaultPids}))
		r.Add(doctor.CLIChecks(*probe, cfg.KennelImage, hs)...)
		installed = map[string]bool{}
		for _, p := range probe.Programs {
			installed[p.Name] = p.Path != ""
		}
	}
	r.Add(ws)
	r.Add(doctor.WorkspaceGitChecks(cfg.Workspaces, filepath.Join(cfg.DataDir, "repos"))...)
	r.Add(doctor.KeyChecks(hs, installed)...)
	r.Add(doctor.BypassChecks(hs, installed)...)
	var engine kennel.Docker
	if ok {
		engine = local
	}
	ectx, ecancel := context.WithTimeout(ctx, doctorCheckTimeout)
	r.Add(egressChecks(ectx, cfg, engine, log)...)
	ecancel()
	r.Add(doctor.DatabaseCheck(ctx, filepath.Join(cfg.DataDir, "fetch.db")))
	r.Add(doctor.DiskCheck(cfg.DataDir))
	dctx, cancel := context.WithTimeout(ctx, doctorCheckTimeout)
	r.Add(doctor.DiscordCheck(dctx, cfg.DiscordToken, discordWhoami{cfg}, cfg.DiscordURL))
	cancel()
	lctx, cancel := context.WithTimeout(ctx, doctorCheckTimeout)
	r.Add(doctor.LLMCheck(lctx, cfg.OpenRouter, openRouterKey{cfg}, cfg.LLMURL))
	cancel()
	// loadConfig leaves time.Local itself only when FETCH_TIMEZONE is unset.
	r.Add(doctor.TimezoneCheck(cfg.Location, cfg.Location != time.Local, time.Now()))
}

// checkEngines checks the local engine (DOCKER_HOST or the default
// socket, as the docker CLI finds it) and each other engine of
// FETCH_ENGINES, with its load when there are several. It returns the
// local engine when it answers (the caller closes it).
func checkEngines(ctx context.Context, cfg Config, log *slog.Logger, r *doctor.Report) (*kennel.Engine, bool) {
	kcfg := kennel.Config{Image: cfg.KennelImage}
	loadOf := func(c client.APIClient) func(context.Context) (string, error) {
		if len(cfg.Engines) < 2 {
			return nil
		}
		return func(ctx context.Context) (string, error) {
			l, err := load(ctx, c, kcfg)
			if err != nil {
				return "", err
			}
			return describeLoad(l), nil
		}
	}
	var local *kennel.Engine
	specs := []kennel.EngineSpec{{Name: localEngine, Kind: kennel.EngineLocal}}
	for _, spec := range cfg.Engines {
		if spec.Kind != kennel.EngineLocal {
			specs = append(specs, spec)
		}
	}
	for _, spec := range specs {
		dctx, cancel := context.WithTimeout(ctx, doctorCheckTimeout)
		dial := cfg.Dial
		dial.Logger = log.With("engine", spec.Name)
		e, err := kennel.Dial(dctx, spec, dial)
		if err != nil {
			cancel()
			r.Add(doctor.EngineUnreachable(spec.Name, err))
			continue
		}
		c := doctor.EngineCheck(dctx, spec.Name, e, loadOf(e))
		cancel()
		r.Add(c)
		if spec.Name == localEngine && c.Status != doctor.Fail {
			local = e
			continue
		}
		e.Close()
	}
	return local, local != nil
}

// describeLoad is an engine's load as /status says it.
func describeLoad(l engineLoad) string {
	return fmt.Sprintf("%d kennel(s), %.1f GiB and %.0f CPUs left", l.kennels, float64(l.freeMem)/(1<<30), l.freeCPU)
}

// doctorHarnesses describes every harness: its program, whether it is the
// default, its secret keys and which of them are set.
func doctorHarnesses(cfg Config) []doctor.Harness {
	reg := harness.NewRegistry()
	var out []doctor.Harness
	for _, n := range reg.Names() {
		a, _ := reg.Get(n)
		h := doctor.Harness{Name: string(n), Program: program(a), Default: string(n) == cfg.Harness, OneShot: !a.Traits().TwoWay}
		for _, k := range a.Keys() {
			if !k.Secret {
				continue
			}
			h.Keys = append(h.Keys, k.Name)
			if cfg.Credentials[k.Name] != "" {
				h.Set = append(h.Set, k.Name)
			}
		}
		out = append(out, h)
	}
	if a, err := harness.ParseACP(harness.Name(cfg.Harness)); err == nil {
		// A generic ACP agent: its command must be in the image.
		out = append(out, doctor.Harness{Name: cfg.Harness, Program: a.Program(), Default: true})
	}
	return out
}

// program is the command an adapter runs: argv[0] of an invocation.
func program(a harness.Adapter) string {
	inv, err := a.Invocation(harness.Task{ID: "doctor", Goal: "doctor", Workspace: "/doctor"}, harness.Credentials{})
	if err != nil || len(inv.Argv) == 0 {
		return string(a.Name())
	}
	return inv.Argv[0]
}

// discordWhoami asks the configured Discord who the bot is.
type discordWhoami struct{ cfg Config }

func (d discordWhoami) Whoami(ctx context.Context) (doctor.Identity, error) {
	me, err := discord.Whoami(ctx, d.cfg.DiscordToken, d.cfg.DiscordURL)
	if errors.Is(err, discord.ErrUnauthorized) {
		return doctor.Identity{}, fmt.Errorf("%w: %w", doctor.ErrUnauthorized, err)
	}
	return doctor.Identity{ID: me.ID, Name: me.Username}, err
}

// openRouterKey asks the LLM API for the key's information
// (GET /key through go-openrouter), never for a completion.
type openRouterKey struct{ cfg Config }

func (o openRouterKey) KeyInfo(ctx context.Context) (doctor.KeyInfo, error) {
	oc := openrouter.DefaultConfig(o.cfg.OpenRouter)
	oc.BaseURL = strings.TrimRight(o.cfg.LLMURL, "/")
	res, err := openrouter.NewClientWithConfig(*oc).GetCurrentAPIKey(ctx)
	if err != nil {
		switch code, _ := openrouter.HTTPStatusCode(err); code {
		case http.StatusUnauthorized, http.StatusForbidden:
			return doctor.KeyInfo{}, fmt.Errorf("%w: %w", doctor.ErrUnauthorized, err)
		case http.StatusNotFound, http.StatusMethodNotAllowed:
			return doctor.KeyInfo{}, fmt.Errorf("%w: %w", doctor.ErrNoKeyInfo, err)
		}
		return doctor.KeyInfo{}, err
	}
	return doctor.KeyInfo{Label: res.Data.Label, Usage: res.Data.Usage, Limit: res.Data.Limit}, nil
}

// warnNotReady runs the fast checks (the data directory, the local Docker
// engine, the kennel image, the default harness's key) and, when one is
// not ok, writes what is missing to w in one message. It never stops
// Fetch: commands and chat work without Docker or keys.
func warnNotReady(ctx context.Context, cfg Config, w io.Writer) {
	var r doctor.Report
	hs := doctorHarnesses(cfg)
	r.Add(doctor.DataDirCheck(cfg.DataDir))
	ectx, cancel := context.WithTimeout(ctx, fastCheckTimeout)
	if local, err := kennel.Dial(ectx, kennel.EngineSpec{Name: localEngine, Kind: kennel.EngineLocal}, cfg.Dial); err != nil {
		r.Add(doctor.EngineUnreachable(localEngine, err))
	} else {
		r.Add(doctor.ImageCheck(ectx, local, cfg.KennelImage, doctor.Defaults(hs)...))
		local.Close()
	}
	cancel()
	r.Add(doctor.KeyChecks(hs, nil)...)
	s := r.Summary()
	if s == "" {
		return
	}
	if _, red, err := newLogger(io.Discard, cfg, slog.LevelError); err == nil {
		s = red.String(s)
	}
	fmt.Fprintln(w, s)
}

// caCheck says which certificate authorities Fetch's git and GitHub calls
// trust besides the system's (loadConfig has checked them: a bad one is a
// config failure naming its file); none when none are set.
func caCheck(ca trust.CA) (doctor.Check, bool) {
	if ca.Empty() {
		return doctor.Check{}, false
	}
	var parts []string
	if f := ca.GitFileInUse(); f != "" {
		parts = append(parts, "git trusts "+f)
	}
	if ca.Dir != "" {
		parts = append(parts, "git trusts the directory "+ca.Dir)
	}
	var goFiles []string
	for _, f := range []string{ca.File, ca.GitFile, ca.Dir} {
		if f != "" {
			goFiles = append(goFiles, f)
		}
	}
	parts = append(parts, "GitHub calls trust "+strings.Join(goFiles, ", ")+" and the system's")
	return doctor.Check{Name: "certificates", Status: doctor.OK, Detail: strings.Join(parts, "; ")}, true
}
