package ship

import (
	"context"
	"fmt"
	"strings"

	"github.com/fetch-dev/fetch/internal/github"
)

// remote returns a workspace's recorded repository.
func (s *Shipper) remote(ctx context.Context, ws string) (Settings, error) {
	st, err := s.settings(ctx, ws)
	if err != nil {
		return st, err
	}
	if s.gh == nil {
		return st, fmt.Errorf("ship: %w", github.ErrNoToken)
	}
	if !st.Remote.Known() {
		return st, fmt.Errorf("ship: %s: %w", ws, ErrNoRemote)
	}
	return st, nil
}

// Poll reads a pull request's state; changed is false when GitHub says it
// did not change since the last poll (a conditional request, which does
// not count against the rate limit).
func (s *Shipper) Poll(ctx context.Context, ws string, number int) (PR, bool, error) {
	st, err := s.remote(ctx, ws)
	if err != nil {
		return PR{}, false, err
	}
	pr, changed, err := s.gh.PR(ctx, st.Remote.Owner, st.Remote.Repo, number)
	if err != nil {
		return PR{}, false, fmt.Errorf("ship: pull request #%d: %w", number, err)
	}
	return fromGitHub(pr), changed, nil
}

func fromGitHub(pr github.PR) PR {
	state := "open"
	switch {
	case pr.Merged:
		state = "merged"
	case pr.State == github.Closed:
		state = "closed"
	}
	return PR{Number: pr.Number, URL: pr.URL, State: state}
}

// Merge merges a pull request Fetch opened, at the commit Fetch pushed
// (GitHub refuses when the branch moved since). Only an autonomous
// workspace's pull requests are merged on the owner's say-so from chat;
// a pr-required workspace's are merged on GitHub by a human.
func (s *Shipper) Merge(ctx context.Context, ws string, number int, sha string) error {
	st, err := s.remote(ctx, ws)
	if err != nil {
		return err
	}
	if st.Mode != Autonomous {
		return fmt.Errorf("ship: merge #%d: %s is %s (set /ship %s autonomous to let Fetch merge): %w", number, ws, st.Mode, ws, ErrNotAllowed)
	}
	if _, err := s.gh.Merge(ctx, st.Remote.Owner, st.Remote.Repo, number, sha, github.MergeCommit); err != nil {
		return fmt.Errorf("ship: merge #%d: %w", number, err)
	}
	return nil
}

// Close closes a pull request without merging it.
func (s *Shipper) Close(ctx context.Context, ws string, number int) error {
	st, err := s.remote(ctx, ws)
	if err != nil {
		return err
	}
	if err := s.gh.Close(ctx, st.Remote.Owner, st.Remote.Repo, number); err != nil {
		return fmt.Errorf("ship: close #%d: %w", number, err)
	}
	return nil
}

// Cleanup drops what Fetch keeps of a shipped branch once its pull request
// was merged or closed: the branch in the mirror and, after a merge, on
// GitHub.
func (s *Shipper) Cleanup(ctx context.Context, ws, branch string, merged bool) error {
	unlock := s.lock(ws)
	defer unlock()
	if merged {
		if st, err := s.remote(ctx, ws); err == nil {
			if err := s.gh.DeleteBranch(ctx, st.Remote.Owner, st.Remote.Repo, branch); err != nil {
				s.log.Warn("delete a merged branch on GitHub", "workspace", ws, "branch", branch, "err", err)
			}
		}
	}
	if err := s.mirror.Remove(ctx, ws, branch); err != nil {
		return fmt.Errorf("ship: cleanup %s: %w", branch, err)
	}
	return nil
}

// Review returns a pull request's reviews and review comments as one text
// for the coding CLI ("address the review"), and how many there are.
func (s *Shipper) Review(ctx context.Context, ws string, number int) (string, int, error) {
	st, err := s.remote(ctx, ws)
	if err != nil {
		return "", 0, err
	}
	cs, err := s.gh.ReviewComments(ctx, st.Remote.Owner, st.Remote.Repo, number)
	if err != nil {
		return "", 0, fmt.Errorf("ship: review of #%d: %w", number, err)
	}
	var b strings.Builder
	for _, c := range cs {
		fmt.Fprintf(&b, "- %s\n", c)
	}
	return b.String(), len(cs), nil
}
