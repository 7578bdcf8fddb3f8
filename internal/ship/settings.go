package ship

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"net/url"
	"regexp"
	"strings"

	"github.com/fetch-dev/fetch/instincts"
	"github.com/fetch-dev/fetch/internal/store"
)

// Mode is how far Fetch ships a workspace's work.
type Mode string

const (
	// PRRequired pushes the task's branch and opens a pull request; the
	// base branch is never touched.
	PRRequired Mode = "pr-required"
	// Autonomous also merges the pull request Fetch opened, when GitHub
	// says it can be merged.
	Autonomous Mode = "autonomous"
	// Local never pushes: the work stays on the branch on this machine.
	Local Mode = "local"
)

// ParseMode reads a mode; "" and unknown words are not modes.
func ParseMode(s string) (Mode, bool) {
	switch m := Mode(strings.ToLower(strings.TrimSpace(s))); m {
	case PRRequired, Autonomous, Local:
		return m, true
	}
	return "", false
}

// Remote is a workspace's GitHub repository.
type Remote struct {
	Owner string `json:"owner"`
	Repo  string `json:"repo"`
	// Base is the branch pull requests go to; the repository's default
	// branch when empty.
	Base string `json:"base,omitempty"`
}

// Known tells whether the repository is recorded.
func (r Remote) Known() bool { return r.Owner != "" && r.Repo != "" }

func (r Remote) String() string {
	if !r.Known() {
		return "no GitHub repository"
	}
	s := r.Owner + "/" + r.Repo
	if r.Base != "" {
		s += " (base " + r.Base + ")"
	}
	return s
}

// Settings are a workspace's shipping settings.
type Settings struct {
	Workspace string `json:"workspace"`
	Mode      Mode   `json:"mode"`
	Remote    Remote `json:"remote"`
}

// nameRE is what GitHub accepts as an owner or a repository name.
var nameRE = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._-]{0,99}$`)

// ParseRemote reads a GitHub repository from a clone URL
// (https://HOST/OWNER/REPO(.git), git@HOST:OWNER/REPO(.git),
// ssh://git@HOST/OWNER/REPO) whose host is host (the web host of the
// configured GitHub: github.com, an Enterprise host, a test server).
func ParseRemote(raw, host string) (Remote, error) {
	raw = strings.TrimSpace(raw)
	var h, p string
	if u, err := url.Parse(raw); err == nil && u.Scheme != "" && u.Host != "" {
		h, p = u.Host, u.Path
	} else if at, rest, ok := strings.Cut(raw, "@"); ok && !strings.Contains(at, "/") {
		h, p, _ = strings.Cut(rest, ":")
	} else {
		return Remote{}, fmt.Errorf("%q is not a repository URL: %w", raw, ErrNotGitHub)
	}
	if !strings.EqualFold(h, host) && !strings.EqualFold(strings.TrimPrefix(h, "www."), host) {
		return Remote{}, fmt.Errorf("%s is not on %s: %w", raw, host, ErrNotGitHub)
	}
	parts := strings.Split(strings.Trim(strings.TrimSuffix(strings.TrimSuffix(p, "/"), ".git"), "/"), "/")
	if len(parts) != 2 || !nameRE.MatchString(parts[0]) || !nameRE.MatchString(parts[1]) {
		return Remote{}, fmt.Errorf("%s does not name OWNER/REPO: %w", raw, ErrNotGitHub)
	}
	return Remote{Owner: parts[0], Repo: parts[1]}, nil
}

// settings reads a workspace's settings; the defaults when it has none.
func (s *Shipper) settings(ctx context.Context, ws string) (Settings, error) {
	return readSettings(ctx, s.store.SQL(), ws)
}

// readSettings reads a workspace's settings through q (the database or a
// transaction).
func readSettings(ctx context.Context, q interface {
	QueryRowContext(context.Context, string, ...any) *sql.Row
}, ws string) (Settings, error) {
	st := Settings{Workspace: ws, Mode: PRRequired}
	err := q.QueryRowContext(ctx, `SELECT mode, owner, repo, base_branch FROM workspace_ship WHERE workspace = ?`, ws).
		Scan(&st.Mode, &st.Remote.Owner, &st.Remote.Repo, &st.Remote.Base)
	if errors.Is(err, sql.ErrNoRows) {
		return st, nil
	}
	if err != nil {
		return Settings{}, fmt.Errorf("ship: settings of %s: %w", ws, err)
	}
	return st, nil
}

// Settings returns a workspace's shipping settings.
func (s *Shipper) Settings(ctx context.Context, ws string) (Settings, error) {
	return s.settings(ctx, ws)
}

// SetModeTx sets a workspace's mode inside tx (the transaction that marks
// the owner's command handled).
func SetModeTx(ctx context.Context, tx *sql.Tx, ws string, m Mode, now string) error {
	_, err := tx.ExecContext(ctx, `INSERT INTO workspace_ship (workspace, mode, updated_at) VALUES (?, ?, ?)
		ON CONFLICT(workspace) DO UPDATE SET mode = excluded.mode, updated_at = excluded.updated_at`, ws, string(m), now)
	if err != nil {
		return fmt.Errorf("ship: set the mode of %s: %w", ws, err)
	}
	return nil
}

// Link records a workspace's GitHub repository (a clone from GitHub, or
// the origin read at the first shipment).
func (s *Shipper) Link(ctx context.Context, ws string, r Remote) error {
	_, err := s.store.SQL().ExecContext(ctx, `INSERT INTO workspace_ship (workspace, owner, repo, base_branch, updated_at) VALUES (?, ?, ?, ?, ?)
		ON CONFLICT(workspace) DO UPDATE SET owner = excluded.owner, repo = excluded.repo, base_branch = excluded.base_branch, updated_at = excluded.updated_at`,
		ws, r.Owner, r.Repo, r.Base, store.FormatTime(s.now()))
	if err != nil {
		return fmt.Errorf("ship: link %s to %s/%s: %w", ws, r.Owner, r.Repo, err)
	}
	return nil
}

// LinkURL records the repository a workspace was cloned from, when it is
// on the configured GitHub; other URLs are not an error (the workspace
// then ships nowhere until linked).
func (s *Shipper) LinkURL(ctx context.Context, ws, cloneURL string) (Remote, bool, error) {
	r, err := ParseRemote(cloneURL, s.host)
	if err != nil {
		return Remote{}, false, nil
	}
	return r, true, s.Link(ctx, ws, r)
}

// Forget drops a deleted workspace's settings and its mirror.
func (s *Shipper) Forget(ctx context.Context, ws string) error {
	if _, err := s.store.SQL().ExecContext(ctx, `DELETE FROM workspace_ship WHERE workspace = ?`, ws); err != nil {
		return fmt.Errorf("ship: forget %s: %w", ws, err)
	}
	return s.mirror.Delete(ctx, ws)
}

// Describe says how a workspace's work ships, for /status.
func (s *Shipper) Describe(ctx context.Context, ws string) string {
	st, err := s.settings(ctx, ws)
	if err != nil {
		s.log.Warn("shipping settings", "workspace", ws, "err", err)
		return ""
	}
	return describe(st, s.gh != nil)
}

func describe(st Settings, token bool) string {
	d := fmt.Sprintf("%s → %s", st.Mode, st.Remote)
	if st.Mode == Local {
		return d
	}
	if !st.Remote.Known() {
		d = fmt.Sprintf("%s → its origin, read at the first shipment", st.Mode)
	}
	if !token {
		d += " (no FETCH_GITHUB_TOKEN: nothing is pushed)"
	}
	return d
}

// ApplyTx carries out /ship inside the transaction that marks the
// command's message handled: it shows or sets a workspace's mode.
func (s *Shipper) ApplyTx(ctx context.Context, tx *sql.Tx, conversationID, userID string, r instincts.Response) (string, func(), error) {
	if s.exists != nil {
		if err := s.exists(ctx, r.Workspace); err != nil {
			return fmt.Sprintf("There is no workspace %q.", r.Workspace), func() {}, nil
		}
	}
	if r.ShipMode != "" {
		m, ok := ParseMode(r.ShipMode)
		if !ok {
			return fmt.Sprintf("%q is not a shipping mode.", r.ShipMode), func() {}, nil
		}
		if err := SetModeTx(ctx, tx, r.Workspace, m, store.FormatTime(s.now())); err != nil {
			return "", nil, err
		}
		if err := s.store.AuditTx(ctx, tx, store.AuditEntry{ConversationID: conversationID, Actor: userID, Action: "ship_mode", Detail: r.Workspace + " " + string(m)}); err != nil {
			return "", nil, err
		}
	}
	st, err := readSettings(ctx, tx, r.Workspace)
	if err != nil {
		return "", nil, err
	}
	verb := "ships"
	if r.ShipMode != "" {
		verb = "now ships"
	}
	return fmt.Sprintf("%s %s: %s.", r.Workspace, verb, describe(st, s.gh != nil)), func() {}, nil
}
