package ship

import (
	"context"

	"github.com/fetch-dev/fetch/internal/github"
	"github.com/fetch-dev/fetch/internal/review"
)

// Gate decides whether an autonomous workspace's pull request may be
// merged without the owner: within the workspace's limits, and approved
// by Fetch's own review (*review.Gate).
type Gate interface {
	Decide(ctx context.Context, ws string, in review.Input) review.Decision
}

// autoMerge merges the pull request number that an autonomous
// workspace's task opened, at head, when the gate lets it: the change
// onto..head within the workspace's limits and approved by Fetch's own
// review, which is posted on the pull request (approving or not). Anything
// else leaves the pull request open with res.PR.Held saying why it waits
// for the owner's Merge.
func (s *Shipper) autoMerge(ctx context.Context, w Work, st Settings, number int, onto, head string, res *Result) {
	if s.gate == nil {
		res.PR.Held = "this Fetch has no review configured to merge on its own"
		return
	}
	d, err := s.mirror.Diff(ctx, w.Workspace, onto, head, review.DefaultMaxDiff)
	if err != nil {
		s.log.Warn("read the diff of a pull request for its review", "task", w.TaskID, "err", err)
		res.PR.Held = "its diff could not be read for Fetch's review"
		return
	}
	in := review.Input{TaskID: w.TaskID, ConversationID: w.ConversationID, Goal: w.Goal, Patch: d.Patch, Truncated: d.Truncated}
	for _, f := range d.Files {
		in.Files = append(in.Files, review.File{Path: f.Path, Added: f.Added, Removed: f.Removed, Binary: f.Binary})
	}
	dec := s.gate.Decide(ctx, w.Workspace, in)
	if dec.Verdict != nil {
		// Posted as a comment: GitHub refuses an approval, or a request
		// for changes, by the pull request's own author.
		if _, err := s.gh.CreateReview(ctx, st.Remote.Owner, st.Remote.Repo, number, head, dec.Verdict.Body(), github.CommentReview); err != nil {
			s.log.Warn("post Fetch's review on the pull request", "task", w.TaskID, "pr", number, "err", err)
			if dec.Merge {
				dec = review.Decision{Why: "Fetch's review approves it, but it could not be posted on the pull request: " + Advice(err)}
			}
		} else {
			res.Reviews++
		}
	}
	if !dec.Merge {
		res.PR.Held = dec.Why
		return
	}
	if _, err := s.gh.Merge(ctx, st.Remote.Owner, st.Remote.Repo, number, head, github.MergeCommit); err != nil {
		s.log.Warn("merge the pull request of an autonomous workspace", "task", w.TaskID, "pr", number, "err", err)
		res.PR.Held = "GitHub did not merge it: " + Advice(err)
		return
	}
	res.PR.State = "merged"
}
