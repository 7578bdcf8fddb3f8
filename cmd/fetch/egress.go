package main

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/fetch-dev/fetch/harness"
	"github.com/fetch-dev/fetch/internal/doctor"
	"github.com/fetch-dev/fetch/internal/hosts"
	"github.com/fetch-dev/fetch/internal/store"
	"github.com/fetch-dev/fetch/internal/task"
	"github.com/fetch-dev/fetch/internal/workspace"
	"github.com/fetch-dev/fetch/kennel"
	"github.com/fetch-dev/fetch/kennel/egress"
)

// egressKeyFile is the key that signs the runs' tokens for the kennel's way
// out, in the data directory: every Fetch process of one data directory
// shares it (and so the proxy and its network on each engine).
const egressKeyFile = "egress.key"

// readEgressKey reads the data directory's key; nil, nil when there is
// none yet.
func readEgressKey(dataDir string) ([]byte, error) {
	path := filepath.Join(dataDir, egressKeyFile)
	b, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("egress key: %w", err)
	}
	key, err := hex.DecodeString(strings.TrimSpace(string(b)))
	if err != nil || len(key) < 16 {
		return nil, fmt.Errorf("egress key %s: not a key (remove it to make a new one)", path)
	}
	return key, nil
}

// egressKey reads the data directory's key, making it on first use.
func egressKey(dataDir string) ([]byte, error) {
	if key, err := readEgressKey(dataDir); key != nil || err != nil {
		return key, err
	}
	path := filepath.Join(dataDir, egressKeyFile)
	if err := os.MkdirAll(dataDir, 0o700); err != nil {
		return nil, fmt.Errorf("egress key: %w", err)
	}
	key := make([]byte, 32)
	_, _ = rand.Read(key)
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if errors.Is(err, fs.ErrExist) {
		return egressKey(dataDir) // another process made it first
	}
	if err != nil {
		return nil, fmt.Errorf("egress key: %w", err)
	}
	_, werr := f.WriteString(hex.EncodeToString(key) + "\n")
	if err := errors.Join(werr, f.Sync(), f.Close()); err != nil {
		return nil, fmt.Errorf("egress key: %w", err)
	}
	return key, nil
}

// EgressID names the proxy and network of a key (kennel.Egress.ID).
func egressID(key []byte) string {
	sum := sha256.Sum256(key)
	return hex.EncodeToString(sum[:6])
}

// kennelEgress is the kennels' egress setting for cfg, nil when off.
func kennelEgress(cfg Config) (*kennel.Egress, []byte, error) {
	if !cfg.Egress {
		return nil, nil, nil
	}
	key, err := egressKey(cfg.DataDir)
	if err != nil {
		return nil, nil, err
	}
	return &kennel.Egress{ID: egressID(key), Networks: cfg.EgressNetworks, DataDir: cfg.DataDir}, key, nil
}

// taskEgress is the task engine's side of the way out: the key, and the
// hosts the owner allowed, read from the store per run and mapped to the
// workspaces' paths.
func taskEgress(key []byte, db *store.DB, reg *workspace.Registry) *task.Egress {
	if key == nil {
		return nil
	}
	return &task.Egress{Key: key, Hosts: func(ctx context.Context) (map[string][]string, error) {
		byName, err := db.WorkspaceHosts(ctx)
		if err != nil {
			return nil, err
		}
		out := make(map[string][]string, len(byName))
		for name, hosts := range byName {
			if p, err := reg.Path(name); err == nil {
				out[p] = hosts
			}
		}
		return out, nil
	}}
}

// workspaceHosts serves fetch workspace hosts NAME [add|remove HOST]: the
// hosts the workspace's runs may reach through the kennel's way out.
func workspaceHosts(ctx context.Context, db *store.DB, cfg Config, name string, args []string, harnessName string, stdout io.Writer) error {
	switch {
	case len(args) == 0:
	case len(args) == 2 && args[0] == "add":
		host, err := egress.CheckHost(args[1])
		if err != nil {
			return fmt.Errorf("%w: %w", errUsage, err)
		}
		added, err := db.AllowHost(ctx, name, host, "fetch workspace")
		if err != nil {
			return err
		}
		if added {
			_ = db.Audit(ctx, store.AuditEntry{Actor: "fetch workspace", Action: "egress_allow", Detail: name + ": " + host})
			fmt.Fprintf(stdout, "Workspace %s's runs may now reach %s.\n", name, host)
		} else {
			fmt.Fprintf(stdout, "%s was already allowed.\n", host)
		}
	case len(args) == 2 && args[0] == "remove":
		host, err := egress.CheckHost(args[1])
		if err != nil {
			return fmt.Errorf("%w: %w", errUsage, err)
		}
		removed, err := db.DisallowHost(ctx, name, host)
		if err != nil {
			return err
		}
		if !removed {
			return fmt.Errorf("%s is not among workspace %s's hosts", host, name)
		}
		_ = db.Audit(ctx, store.AuditEntry{Actor: "fetch workspace", Action: "egress_disallow", Detail: name + ": " + host})
		fmt.Fprintf(stdout, "Workspace %s's runs may no longer reach %s.\n", name, host)
	default:
		return fmt.Errorf("%w: fetch workspace hosts NAME [add HOST | remove HOST]", errUsage)
	}
	all, err := db.WorkspaceHosts(ctx)
	if err != nil {
		return err
	}
	printHosts(stdout, cfg, all[name], harnessName)
	return nil
}

// chatHosts carries out /hosts in chat (fetch serve and fetch chat) on the
// same table as fetch workspace hosts, and describes the way out for
// /status.
func chatHosts(cfg Config, db *store.DB) *hosts.List {
	return hosts.New(hosts.Config{
		Store:    db,
		On:       cfg.Egress,
		Switch:   envEgress,
		Harness:  cfg.Harness,
		Defaults: harness.HostsOf(harness.Name(cfg.Harness)),
	})
}

// printHosts says where a workspace's runs may go.
func printHosts(w io.Writer, cfg Config, hosts []string, harnessName string) {
	if !cfg.Egress {
		fmt.Fprintf(w, "Way out: off (%s=off): the kennels reach any host, with the CLIs' keys inside them.\n", envEgress)
		return
	}
	fmt.Fprintln(w, "Way out: only through Fetch's proxy; the model APIs' keys stay outside the kennel.")
	if len(hosts) == 0 {
		fmt.Fprintln(w, "Hosts allowed to this workspace: none (add one with: fetch workspace hosts NAME add HOST)")
	} else {
		fmt.Fprintf(w, "Hosts allowed to this workspace: %s\n", strings.Join(hosts, ", "))
	}
	if d := harness.HostsOf(harness.Name(harnessName)); len(d) > 0 {
		fmt.Fprintf(w, "Hosts %s reaches by default: %s\n", harnessName, strings.Join(d, ", "))
	}
}

// egressChecks are fetch doctor's checks of the kennels' way out: that it
// is on, that the networks it reaches out on exist, that its proxy answers
// when it runs, that the hosts allowed to workspaces are hosts, and which
// configured keys stay in the kennel.
func egressChecks(ctx context.Context, cfg Config, local kennel.Docker, log *slog.Logger) []doctor.Check {
	if !cfg.Egress {
		return []doctor.Check{{Name: "egress", Status: doctor.Warn,
			Detail: "off: the kennels are on Docker's default network and reach any host, with the coding CLIs' keys inside them",
			Fix:    "unset " + envEgress + " (on is the default)"}}
	}
	var out []doctor.Check
	if local != nil {
		// The doctor reads; it makes no key (the first task does).
		key, err := readEgressKey(cfg.DataDir)
		if err != nil {
			return append(out, doctor.Check{Name: "egress", Status: doctor.Fail, Detail: err.Error(), Fix: "remove " + filepath.Join(cfg.DataDir, egressKeyFile) + " to make a new key"})
		}
		id := "none"
		if key != nil {
			id = egressID(key)
		}
		eg := &kennel.Egress{ID: id, Networks: cfg.EgressNetworks, DataDir: cfg.DataDir}
		k, err := kennel.New(local, kennel.Config{Image: cfg.KennelImage, User: kennelUserSpec(), Egress: eg}, log)
		if err != nil {
			return append(out, doctor.Check{Name: "egress", Status: doctor.Fail, Detail: err.Error()})
		}
		if err := k.CheckNetworks(ctx); err != nil {
			out = append(out, doctor.Check{Name: "egress", Status: doctor.Fail, Detail: "the proxy cannot reach out: " + err.Error(),
				Fix: "create the network or correct " + envEgressNets})
		} else {
			running, h, err := k.EgressHealth(ctx)
			c := doctor.Check{Name: "egress", Status: doctor.OK}
			switch {
			case err != nil:
				c.Status, c.Detail, c.Fix = doctor.Fail, "the proxy does not answer: "+err.Error(), "docker rm -f "+k.EgressName()+" (the next task makes it again)"
			case key == nil:
				c.Detail = "the kennels' only way out is the proxy; it starts with the first task"
			case !running:
				c.Detail = "the kennels' only way out is the proxy; it starts with the next task (" + k.EgressName() + ")"
			case h.Configured:
				c.Detail = "the kennels' only way out is the proxy " + k.EgressName() + ", running and configured"
			default:
				c.Detail = "the proxy " + k.EgressName() + " runs and gets its configuration with the next task"
			}
			out = append(out, c)
		}
	}
	dbPath := filepath.Join(cfg.DataDir, "fetch.db")
	if _, err := os.Stat(dbPath); err != nil {
		// No database yet: no hosts allowed yet either.
	} else if db, err := store.Open(ctx, dbPath); err == nil {
		hosts, err := db.WorkspaceHosts(ctx)
		db.Close()
		if err == nil {
			var bad, all []string
			for ws, hs := range hosts {
				for _, h := range hs {
					all = append(all, ws+": "+h)
					if _, err := egress.CheckHost(h); err != nil {
						bad = append(bad, ws+": "+h)
					}
				}
			}
			slices.Sort(all)
			switch {
			case len(bad) > 0:
				out = append(out, doctor.Check{Name: "egress hosts", Status: doctor.Fail, Detail: "not hosts: " + strings.Join(bad, ", "), Fix: "fetch workspace hosts NAME remove HOST"})
			case len(all) > 0:
				out = append(out, doctor.Check{Name: "egress hosts", Status: doctor.OK, Detail: "allowed: " + strings.Join(all, ", ")})
			}
		}
	}
	reg := harness.NewRegistry()
	for _, n := range reg.Names() {
		a, _ := reg.Get(n)
		var kept []string
		for _, k := range harness.KeptKeys(a) {
			if cfg.Credentials[k] != "" {
				kept = append(kept, k)
			}
		}
		if len(kept) > 0 {
			out = append(out, doctor.Check{Name: "egress " + string(n), Status: doctor.Warn,
				Detail: strings.Join(kept, ", ") + " stays in the kennel: " + string(n) + " cannot be pointed at the proxy, so a prompt-injected run could send it to that CLI's own hosts",
				Fix:    "prefer a harness whose key the proxy adds (claude, codex), or accept it"})
		}
	}
	return out
}
