package ship

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/url"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/fetch-dev/fetch/internal/checks"
	"github.com/fetch-dev/fetch/internal/github"
	"github.com/fetch-dev/fetch/internal/mirror"
	"github.com/fetch-dev/fetch/internal/store"
)

// Config builds a Shipper. cmd/fetch gives it everything once.
type Config struct {
	Store  *store.DB
	Mirror *mirror.Mirror
	// GitHub is nil when no token is configured: shipping then fails
	// with github.ErrNoToken and says what to set.
	GitHub *github.Client
	// Token is given to host git (through its environment) for fetch and
	// push; GitHub's API client has its own copy.
	Token string
	// WebHost is the configured GitHub's web host (github.com, an
	// Enterprise host): clone URLs on it name a repository.
	WebHost string
	// Origin reads a workspace's origin URL (in its kennel); used once,
	// when a workspace that was not cloned by Fetch ships first.
	Origin func(ctx context.Context, ws string) (string, error)
	// Exists tells whether a workspace exists (/ship refuses others).
	Exists func(ctx context.Context, ws string) error
	// Gate decides whether an autonomous workspace's pull request is
	// merged without the owner; nil merges none on its own.
	Gate Gate
	// Checks runs a workspace's checks before a pull request opens or
	// is updated, and before an autonomous merge; nil: none run.
	Checks Checker
	Logger *slog.Logger
	Now    func() time.Time
}

// Shipper ships tasks' branches.
type Shipper struct {
	store  *store.DB
	exists func(ctx context.Context, ws string) error
	mirror *mirror.Mirror
	gh     *github.Client
	token  string
	host   string
	origin func(ctx context.Context, ws string) (string, error)
	gate   Gate
	checks Checker
	log    *slog.Logger
	now    func() time.Time

	// locks serialises shipments per workspace (its mirror is one bare
	// repository); a lock is never held across a wait without a timeout.
	mu    sync.Mutex
	locks map[string]*sync.Mutex
}

// New builds a Shipper.
func New(cfg Config) *Shipper {
	now := cfg.Now
	if now == nil {
		now = time.Now
	}
	host := cfg.WebHost
	if host == "" {
		host = "github.com"
	}
	return &Shipper{store: cfg.Store, exists: cfg.Exists, mirror: cfg.Mirror, gh: cfg.GitHub, token: cfg.Token, host: host,
		origin: cfg.Origin, gate: cfg.Gate, checks: cfg.Checks, log: cfg.Logger, now: now, locks: map[string]*sync.Mutex{}}
}

// WebHost derives the web host of a GitHub from its API URL: api.github.com
// (or "") is github.com; an Enterprise or test URL (https://HOST/api/v3/)
// is HOST.
func WebHost(apiURL string) string {
	if apiURL == "" {
		return "github.com"
	}
	u, err := url.Parse(apiURL)
	if err != nil || u.Host == "" {
		return "github.com"
	}
	if u.Host == "api.github.com" {
		return "github.com"
	}
	return u.Host
}

func (s *Shipper) lock(ws string) func() {
	s.mu.Lock()
	l := s.locks[ws]
	if l == nil {
		l = &sync.Mutex{}
		s.locks[ws] = l
	}
	s.mu.Unlock()
	l.Lock()
	return l.Unlock
}

// Work is a finished task's branch to ship.
type Work struct {
	TaskID    string
	Workspace string
	// ConversationID is the task's conversation ("" from the command
	// line): the review's cost is its too.
	ConversationID string
	// Path is the workspace's host path (it selects the kennel); Dir is
	// the task's worktree.
	Path, Dir string
	Branch    string
	// Base is the commit the task started from.
	Base    string
	Goal    string
	Summary string
	// Files are the changed files with their line counts ("a.go +3 -1").
	Files []string
	// Tests are the test commands the CLI ran and how they ended.
	Tests []string
	// AutoMerge: the owner's autonomy level lets Fetch merge on its own
	// (the task's conversation is "autonomous"); an autonomous
	// workspace's pull request is then merged at once.
	AutoMerge bool
	// As is how this task ships, asked with it (push only, a draft).
	As As
	// Anyway: the owner ships it although a check failed ("Ship
	// anyway"); it is still never merged on its own.
	Anyway bool
}

// PR is a pull request as Fetch keeps it.
type PR struct {
	Number int    `json:"number"`
	URL    string `json:"url"`
	// State is "open", "merged" or "closed".
	State string `json:"state"`
	// MayMerge: the workspace's mode lets the owner merge it from chat
	// (autonomous); known right after shipping, not stored.
	MayMerge bool `json:"-"`
	// Held says why an autonomous workspace's pull request that Fetch
	// would have merged on its own waits for the owner's Merge (a limit,
	// a path, the review's blocking findings, a review that could not be
	// made); known right after shipping, not stored.
	Held string `json:"-"`
	// Draft: opened as a draft (a check failed, or the task asked it).
	Draft bool `json:"draft,omitempty"`
}

// Result is what a shipment did.
type Result struct {
	// Pushed is the commit pushed (the rebased branch).
	Pushed string
	PR     PR
	// Mode is the workspace's mode; Remote its repository.
	Mode   Mode
	Remote Remote
	// Reviews counts the reviews Fetch posted on the pull request.
	Reviews int
	// Checks is what the workspace's checks said (none for a push
	// only).
	Checks checks.Report
}

// Ship pushes a task's branch and opens its pull request, or finds the one
// already open (shipping again is safe). It fails with ErrLocal for a local
// workspace, ErrNoRemote when the workspace has no GitHub repository,
// *ConflictError when the branch does not rebase onto the latest base,
// *SecretsError when a commit it adds holds secrets or the commits are too
// large to be scanned whole (before they land in the mirror, and again
// after the rebase), and the github package's
// errors (no token, no permission, …). Nothing is pushed unless all checks
// pass, and a pushed branch whose pull request could not be opened is
// deleted again.
func (s *Shipper) Ship(ctx context.Context, w Work) (Result, error) {
	unlock := s.lock(w.Workspace)
	defer unlock()
	st, err := s.settings(ctx, w.Workspace)
	if err != nil {
		return Result{}, err
	}
	res := Result{Mode: st.Mode, Remote: st.Remote}
	if st.Mode == Local {
		return res, ErrLocal
	}
	if s.gh == nil || s.token == "" {
		return res, fmt.Errorf("ship: %w", github.ErrNoToken)
	}
	if !st.Remote.Known() {
		if st.Remote, err = s.linkOrigin(ctx, w.Workspace); err != nil {
			return res, err
		}
		res.Remote = st.Remote
	}
	repo, base, err := s.repo(ctx, st)
	if err != nil {
		return res, err
	}
	remote := mirror.Remote{URL: repo.CloneURL, Token: s.token}
	// The base first: the branch then crosses as a bundle of only what
	// the mirror lacks.
	onto, err := s.mirror.FetchBase(ctx, remote, w.Workspace, base)
	if err != nil {
		return res, fmt.Errorf("ship: fetch %s from %s/%s: %w", base, st.Remote.Owner, st.Remote.Repo, err)
	}
	if err := s.take(ctx, w); err != nil {
		return res, err
	}
	head, err := s.mirror.Rebase(ctx, w.Workspace, w.Branch, onto)
	var conflict *mirror.ConflictError
	if errors.As(err, &conflict) {
		return res, &ConflictError{Base: base, Files: conflict.Files}
	}
	if err != nil {
		return res, fmt.Errorf("ship: rebase onto %s: %w", base, err)
	}
	// The commits pushed are the rebased ones: scanned again.
	found, err := s.mirror.Scan(ctx, w.Workspace, onto, head)
	if err := s.secrets(w, found, err); err != nil {
		return res, err
	}
	if head == onto {
		return res, fmt.Errorf("ship: %s: %w", base, ErrNothingToShip)
	}
	// The checks gate a pull request, not a push alone.
	failed := false
	if w.As != PushOnly {
		if res.Checks, err = s.check(ctx, w); err != nil {
			return res, err
		}
		failed = res.Checks.Failed()
		if failed && !w.Anyway && res.Checks.OnFail == checks.Hold {
			return res, &ChecksError{Workspace: w.Workspace, Report: res.Checks}
		}
	}
	if err := s.mirror.Push(ctx, remote, w.Workspace, w.Branch, w.Branch, true); err != nil {
		return res, fmt.Errorf("ship: push %s: %w", w.Branch, err)
	}
	res.Pushed = head
	if w.As == PushOnly {
		s.log.Info("task pushed", "task", w.TaskID, "repo", st.Remote.Owner+"/"+st.Remote.Repo, "commit", head)
		return res, nil
	}
	draft := w.As == AsDraft || (failed && !w.Anyway)
	pr, created, err := s.gh.OpenPR(ctx, st.Remote.Owner, st.Remote.Repo, github.NewPR{
		Title: title(w), Body: body(w, res.Checks), Head: w.Branch, Base: base, Draft: draft,
	})
	if err != nil {
		// No orphan branch: the push is undone when no pull request
		// could be opened for it.
		if derr := s.gh.DeleteBranch(context.WithoutCancel(ctx), st.Remote.Owner, st.Remote.Repo, w.Branch); derr != nil {
			s.log.Warn("delete a pushed branch whose pull request failed", "branch", w.Branch, "err", derr)
		}
		res.Pushed = ""
		return res, fmt.Errorf("ship: open the pull request: %w", err)
	}
	if !created {
		if pr, err = s.update(ctx, st.Remote, pr, w, res.Checks); err != nil {
			return res, err
		}
	}
	res.PR = PR{Number: pr.Number, URL: pr.URL, State: "open", Draft: pr.Draft, MayMerge: st.Mode == Autonomous && !pr.Draft}
	s.log.Info("task shipped", "task", w.TaskID, "repo", st.Remote.Owner+"/"+st.Remote.Repo, "pr", pr.Number, "commit", head, "draft", pr.Draft)
	// A failing check never merges on its own, shipped anyway or not; a
	// passing one merges only through the gate (limits and the review).
	if st.Mode == Autonomous && w.AutoMerge && !pr.Draft && !failed {
		s.autoMerge(ctx, w, st, pr.Number, onto, head, &res)
	}
	return res, nil
}

// take brings the task's branch out of the kennel into the mirror: staged,
// every commit it has over the task's base scanned, and landed only when
// none holds a secret. The objects cross as a bundle of what the mirror
// lacks (none when the task's record landed the branch already).
func (s *Shipper) take(ctx context.Context, w Work) error {
	staged, _, err := s.mirror.StageImport(ctx, mirror.Ref{Workspace: w.Workspace, Path: w.Path, Dir: w.Dir, Branch: w.Branch, Base: w.Base})
	if err != nil {
		return fmt.Errorf("ship: bring the branch out of the kennel: %w", err)
	}
	defer staged.Drop()
	found, err := staged.Scan(ctx)
	if err := s.secrets(w, found, err); err != nil {
		return err
	}
	if err := staged.Land(ctx); err != nil {
		return fmt.Errorf("ship: bring the branch out of the kennel: %w", err)
	}
	return nil
}

// secrets turns a scan's outcome into Ship's error: a *SecretsError for
// findings or for work too large to be scanned whole, nil for none.
func (s *Shipper) secrets(w Work, found []mirror.Finding, err error) error {
	switch {
	case errors.Is(err, mirror.ErrScanIncomplete):
		s.log.Warn("the branch could not be scanned whole for secrets; not pushed", "task", w.TaskID, "err", err)
		return &SecretsError{Incomplete: true}
	case err != nil:
		return fmt.Errorf("ship: scan the work for secrets: %w", err)
	case len(found) > 0:
		return &SecretsError{Findings: found}
	}
	return nil
}

// repo reads the workspace's repository on GitHub and the branch its
// pull requests go to; the token must be allowed to push to it.
func (s *Shipper) repo(ctx context.Context, st Settings) (github.Repo, string, error) {
	repo, err := s.gh.Repo(ctx, st.Remote.Owner, st.Remote.Repo)
	if err != nil {
		return repo, "", fmt.Errorf("ship: %s/%s: %w", st.Remote.Owner, st.Remote.Repo, err)
	}
	if err := repo.CanPush(); err != nil {
		return repo, "", fmt.Errorf("ship: %w", err)
	}
	base := st.Remote.Base
	if base == "" {
		base = repo.DefaultBranch
	}
	return repo, base, nil
}

// SendBase fetches the latest base branch of the workspace's repository
// into the mirror and from there into the workspace's repository in the
// kennel, as ref (for a run that rebases the task's branch onto it). It
// returns the base's commit and branch name.
func (s *Shipper) SendBase(ctx context.Context, w Work, ref string) (string, string, error) {
	unlock := s.lock(w.Workspace)
	defer unlock()
	st, err := s.remote(ctx, w.Workspace)
	if err != nil {
		return "", "", err
	}
	repo, base, err := s.repo(ctx, st)
	if err != nil {
		return "", "", err
	}
	sha, err := s.mirror.FetchBase(ctx, mirror.Remote{URL: repo.CloneURL, Token: s.token}, w.Workspace, base)
	if err != nil {
		return "", "", fmt.Errorf("ship: fetch %s from %s/%s: %w", base, st.Remote.Owner, st.Remote.Repo, err)
	}
	if err := s.mirror.SendBase(ctx, mirror.Ref{Workspace: w.Workspace, Path: w.Path, Dir: w.Dir, Branch: w.Branch}, "refs/remotes/origin/"+base, ref); err != nil {
		return "", "", fmt.Errorf("ship: bring %s into the kennel: %w", base, err)
	}
	return sha, base, nil
}

// linkOrigin reads the workspace's origin once and records it.
func (s *Shipper) linkOrigin(ctx context.Context, ws string) (Remote, error) {
	if s.origin == nil {
		return Remote{}, fmt.Errorf("ship: %s: %w", ws, ErrNoRemote)
	}
	raw, err := s.origin(ctx, ws)
	if err != nil || strings.TrimSpace(raw) == "" {
		return Remote{}, fmt.Errorf("ship: %s has no origin: %w", ws, ErrNoRemote)
	}
	r, err := ParseRemote(raw, s.host)
	if err != nil {
		return Remote{}, fmt.Errorf("ship: %s: its origin %w: %w", ws, err, ErrNoRemote)
	}
	if err := s.Link(ctx, ws, r); err != nil {
		return Remote{}, err
	}
	return r, nil
}

// maxTitle bounds a pull request's title, in characters.
const maxTitle = 72

// title is the goal's first line, cut.
func title(w Work) string {
	t, _, _ := strings.Cut(strings.TrimSpace(w.Goal), "\n")
	if utf8.RuneCountInString(t) > maxTitle {
		r := []rune(t)
		t = strings.TrimSpace(string(r[:maxTitle-1])) + "…"
	}
	if t == "" {
		t = "Fetch task " + w.TaskID
	}
	return t
}

// body says what the task was asked and what it did, and what the checks
// said.
func body(w Work, rep checks.Report) string {
	var b strings.Builder
	fmt.Fprintf(&b, "**Goal**\n\n%s\n\n", strings.TrimSpace(w.Goal))
	if s := strings.TrimSpace(w.Summary); s != "" {
		fmt.Fprintf(&b, "**What was done**\n\n%s\n\n", s)
	}
	if len(w.Files) > 0 {
		b.WriteString("**Files**\n\n")
		for _, f := range w.Files {
			fmt.Fprintf(&b, "- `%s`\n", f)
		}
		b.WriteString("\n")
	}
	if len(w.Tests) > 0 {
		b.WriteString("**Tests the coding CLI ran**\n\n")
		for _, t := range w.Tests {
			fmt.Fprintf(&b, "- %s\n", t)
		}
		b.WriteString("\n")
	}
	b.WriteString(rep.Markdown())
	if w.Anyway && rep.Failed() {
		b.WriteString("_The owner shipped it although a check failed._\n\n")
	}
	fmt.Fprintf(&b, "_Opened by Fetch for task %s (branch `%s`)._\n", w.TaskID, w.Branch)
	return b.String()
}
