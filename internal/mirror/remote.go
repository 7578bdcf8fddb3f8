package mirror

import (
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"net"
	"net/url"
	"strings"

	"github.com/fetch-dev/fetch/internal/gitrun"
)

// Remote is where work is shipped: an https clone URL and the token that
// authenticates to it (as x-access-token, GitHub's convention).
type Remote struct {
	URL   string
	Token string
}

// check accepts https URLs, and http ones on a loopback address (tests),
// without user information.
func (r Remote) check() error {
	u, err := url.Parse(r.URL)
	if err != nil {
		return fmt.Errorf("remote URL: %w", ErrInvalid)
	}
	if u.User != nil {
		return fmt.Errorf("remote URL carries user information; give the token as Remote.Token: %w", ErrInvalid)
	}
	switch {
	case u.Scheme == "https" && u.Host != "":
	case u.Scheme == "http" && isLoopback(u.Hostname()):
	default:
		return fmt.Errorf("remote URL %q: want https://: %w", gitrun.RedactURL(r.URL), ErrInvalid)
	}
	if strings.ContainsAny(r.Token, "\n\r\x00") {
		return fmt.Errorf("remote token holds a line break: %w", ErrInvalid)
	}
	return nil
}

func isLoopback(host string) bool {
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// auth is the environment that gives git the token, and the strings to
// scrub from what git says.
func (r Remote) auth() (env, secrets []string) {
	if r.Token == "" {
		return nil, nil
	}
	basic := base64.StdEncoding.EncodeToString([]byte("x-access-token:" + r.Token))
	return []string{
		"GIT_CONFIG_COUNT=1",
		"GIT_CONFIG_KEY_0=http.extraHeader",
		"GIT_CONFIG_VALUE_0=Authorization: Basic " + basic,
	}, []string{r.Token, basic}
}

// FetchBase fetches the remote's branch base into refs/remotes/origin/BASE
// of the workspace's mirror (created when missing) and returns its commit.
func (m *Mirror) FetchBase(ctx context.Context, r Remote, ws, base string) (string, error) {
	op := "mirror: fetch " + base
	if err := errors.Join(checkName(ws), r.check(), checkBranch(base)); err != nil {
		return "", fmt.Errorf("%s: %w", op, err)
	}
	unlock, err := m.lock(ctx, ws)
	if err != nil {
		return "", fmt.Errorf("%s: %w", op, err)
	}
	defer unlock()
	dir, err := m.ensure(ctx, ws)
	if err != nil {
		return "", fmt.Errorf("%s: %w", op, err)
	}
	env, secrets := r.auth()
	dst := "refs/remotes/origin/" + base
	_, err = m.hostGit(ctx, hostCmd{
		gitDir:  dir,
		args:    []string{"fetch", "-q", "--no-tags", "--no-write-fetch-head", "--no-recurse-submodules", "--", r.URL, "+refs/heads/" + base + ":" + dst},
		env:     env,
		timeout: m.cfg.TransferTimeout,
		secrets: secrets,
	})
	if err != nil {
		return "", fmt.Errorf("%s: %w", op, classifyRemote(err))
	}
	sha, err := m.resolve(ctx, dir, dst)
	if err != nil {
		return "", fmt.Errorf("%s: %w", op, err)
	}
	return sha, nil
}

// Push pushes localRef (a branch of the mirror, or a full ref) to the
// remote's branch remoteBranch. force replaces the remote branch whatever
// it holds, and is refused for branches outside fetch/. Pushing what the
// remote has already is success.
func (m *Mirror) Push(ctx context.Context, r Remote, ws, localRef, remoteBranch string, force bool) error {
	op := "mirror: push " + remoteBranch
	if !strings.HasPrefix(localRef, "refs/") {
		localRef = "refs/heads/" + localRef
	}
	if err := errors.Join(checkName(ws), r.check(), checkRef(localRef), checkBranch(remoteBranch)); err != nil {
		return fmt.Errorf("%s: %w", op, err)
	}
	if force && !strings.HasPrefix(remoteBranch, "fetch/") {
		return fmt.Errorf("%s: %w", op, ErrForceRefused)
	}
	unlock, err := m.lock(ctx, ws)
	if err != nil {
		return fmt.Errorf("%s: %w", op, err)
	}
	defer unlock()
	dir, err := m.existing(ws)
	if err != nil {
		return fmt.Errorf("%s: %w", op, err)
	}
	if _, err := m.resolve(ctx, dir, localRef); err != nil {
		return fmt.Errorf("%s: %w", op, err)
	}
	spec := localRef + ":refs/heads/" + remoteBranch
	if force {
		spec = "+" + spec
	}
	env, secrets := r.auth()
	out, err := m.hostGit(ctx, hostCmd{
		gitDir:  dir,
		args:    []string{"push", "--porcelain", "--no-verify", "--no-recurse-submodules", "--", r.URL, spec},
		env:     env,
		timeout: m.cfg.TransferTimeout,
		secrets: secrets,
	})
	if err != nil {
		if perr := pushStatus(out); perr != nil {
			return fmt.Errorf("%s: %w: %w", op, perr, err)
		}
		return fmt.Errorf("%s: %w", op, classifyRemote(err))
	}
	return nil
}

// pushStatus reads push --porcelain's status lines ("!<TAB>src:dst<TAB>
// [rejected] (reason)") into ErrRejected or ErrNonFastForward.
func pushStatus(out string) error {
	for _, line := range strings.Split(out, "\n") {
		if !strings.HasPrefix(line, "!\t") {
			continue
		}
		fields := strings.SplitN(line, "\t", 3)
		if len(fields) < 3 {
			continue
		}
		summary := fields[2]
		switch {
		case strings.HasPrefix(summary, "[remote rejected]"):
			return fmt.Errorf("%w: %s", ErrRejected, summary)
		case strings.HasPrefix(summary, "[rejected]") && (strings.Contains(summary, "non-fast-forward") || strings.Contains(summary, "fetch first")):
			return fmt.Errorf("%w: %s", ErrNonFastForward, summary)
		case strings.HasPrefix(summary, "[rejected]"):
			return fmt.Errorf("%w: %s", ErrRejected, summary)
		}
	}
	return nil
}

// classifyRemote adds a sentinel to a git error that talked to a remote,
// from its stderr: git has no structured code for these.
func classifyRemote(err error) error {
	var ge *gitrun.GitError
	if !errors.As(err, &ge) {
		return err
	}
	s := strings.ToLower(ge.Stderr)
	has := func(subs ...string) bool {
		for _, sub := range subs {
			if strings.Contains(s, sub) {
				return true
			}
		}
		return false
	}
	switch {
	case has("couldn't find remote ref"):
		return fmt.Errorf("remote branch: %w: %w", ErrNotFound, err)
	case has("authentication failed", "error: 401", "error: 403", "could not read username", "could not read password", "invalid username or password", "permission to", "access denied"):
		return fmt.Errorf("%w: %w", ErrAuth, err)
	case has("repository not found", "not found", "error: 404", "does not appear to be a git repository"):
		return fmt.Errorf("%w: %w", ErrRepoNotFound, err)
	case has("certificate verification failed", "ssl certificate problem", "certificate verify failed", "unable to get local issuer certificate", "self signed certificate", "self-signed certificate"):
		return fmt.Errorf("%w: %w", ErrUntrusted, err)
	case has("could not resolve host", "failed to connect", "connection refused", "connection timed out", "timed out", "network is unreachable", "ssl", "tls", "connection reset", "unable to access", "empty reply", "http/2 stream", "rpc failed"):
		return fmt.Errorf("%w: %w", ErrNetwork, err)
	}
	return err
}
