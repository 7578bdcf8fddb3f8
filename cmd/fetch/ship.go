package main

import (
	"context"
	"fmt"
	"log/slog"
	"net/http"

	"github.com/fetch-dev/fetch/internal/checks"
	"github.com/fetch-dev/fetch/internal/github"
	"github.com/fetch-dev/fetch/internal/llm"
	"github.com/fetch-dev/fetch/internal/mirror"
	"github.com/fetch-dev/fetch/internal/review"
	"github.com/fetch-dev/fetch/internal/ship"
	"github.com/fetch-dev/fetch/internal/store"
	"github.com/fetch-dev/fetch/internal/workspace"
)

// newShipper builds what ships tasks' work: over Fetch's own repositories
// (repos, fed from the kennels), the GitHub client (only with
// FETCH_GITHUB_TOKEN) and the shipping settings of the workspaces.
func newShipper(cfg Config, db *store.DB, log *slog.Logger, repos *mirror.Mirror, ws *workspace.Registry, chk *checks.Runner) (*ship.Shipper, error) {
	var err error
	var gh *github.Client
	if cfg.GitHubToken != "" {
		// The GitHub client trusts what Fetch's git trusts.
		var hc *http.Client
		if hc, err = cfg.CA.HTTPClient(); err != nil {
			return nil, fmt.Errorf("%s: %w", envSSLCertFile, err)
		}
		if gh, err = github.New(github.Config{URL: cfg.GitHubURL, Token: cfg.GitHubToken, HTTPClient: hc}); err != nil {
			return nil, fmt.Errorf("%s: %w", envGitHubURL, err)
		}
	}
	gate, err := newGate(cfg, db, log)
	if err != nil {
		return nil, err
	}
	return ship.New(ship.Config{
		Store:   db,
		Gate:    gate,
		Mirror:  repos,
		GitHub:  gh,
		Token:   cfg.GitHubToken,
		WebHost: ship.WebHost(cfg.GitHubURL),
		Origin:  ws.Origin,
		Checks:  chk,
		Exists: func(_ context.Context, name string) error {
			_, err := ws.Path(name)
			return err
		},
		Logger: log,
	}), nil
}

// automergeSettings are the workspaces' limits for merging on their own
// (/automerge), over the configured defaults.
func automergeSettings(cfg Config, db *store.DB) *review.Settings {
	return review.NewSettings(db, cfg.AutoMerge, nil)
}

// newGate builds what decides whether an autonomous workspace's pull
// request merges without the owner: the workspace's limits and a review
// by Fetch's own LLM (none without OPENROUTER_API_KEY: then every such
// pull request waits for the owner), its cost counted within Fetch's LLM
// budgets.
func newGate(cfg Config, db *store.DB, log *slog.Logger) (*review.Gate, error) {
	rc := review.Config{
		Store:    db,
		Settings: automergeSettings(cfg, db),
		Budget:   review.Budget{DayTokens: cfg.BudgetDayTokens, DayCost: cfg.BudgetDayUSD, TaskDayCost: cfg.DailyBudgetUSD},
		Logger:   log.With("component", "review"),
	}
	if cfg.OpenRouter != "" {
		client, err := llm.New(llm.Config{BaseURL: cfg.LLMURL, APIKey: cfg.OpenRouter, Model: cfg.Model, Logger: log.With("component", "llm", "for", "review")})
		if err != nil {
			return nil, err
		}
		rc.LLM, rc.Model = client, cfg.Model
	}
	return review.New(rc), nil
}

// newChecks builds what runs the workspaces' checks in their kennels
// (k) before a pull request, and carries out /checks.
func newChecks(cfg Config, db *store.DB, log *slog.Logger, k checks.Exec) *checks.Runner {
	return checks.New(checks.Config{Store: db, Kennel: k, Limit: cfg.CheckTimeout, Logger: log})
}

// shippedWorkspaces is the workspace registry as the agent uses it: a
// workspace cloned from the configured GitHub records its repository for
// shipping, and a deleted one's shipping settings and mirror go with it.
type shippedWorkspaces struct {
	*workspace.Registry
	shipper   *ship.Shipper
	automerge *review.Settings
	checks    *checks.Runner
	log       *slog.Logger
}

func (w shippedWorkspaces) Clone(ctx context.Context, name, url string) (workspace.Info, error) {
	info, err := w.Registry.Clone(ctx, name, url)
	if err != nil {
		return info, err
	}
	if r, ok, err := w.shipper.LinkURL(ctx, name, url); err != nil {
		w.log.Warn("record a workspace's GitHub repository", "workspace", name, "err", err)
	} else if ok {
		w.log.Info("workspace linked to GitHub", "workspace", name, "repo", r.Owner+"/"+r.Repo)
	}
	return info, nil
}

func (w shippedWorkspaces) Delete(ctx context.Context, name string) error {
	if err := w.Registry.Delete(ctx, name); err != nil {
		return err
	}
	if err := w.shipper.Forget(ctx, name); err != nil {
		w.log.Warn("forget a deleted workspace's shipping", "workspace", name, "err", err)
	}
	if w.automerge != nil {
		if err := w.automerge.Forget(ctx, name); err != nil {
			w.log.Warn("forget a deleted workspace's limits for merging", "workspace", name, "err", err)
		}
	}
	if w.checks != nil {
		if err := w.checks.Forget(ctx, name); err != nil {
			w.log.Warn("forget a deleted workspace's checks", "workspace", name, "err", err)
		}
	}
	return nil
}
