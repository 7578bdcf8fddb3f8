package github

import (
	"context"
	"fmt"
	"slices"
	"time"

	gh "github.com/google/go-github/v76/github"
)

// CommentKind says where a review comment was made.
type CommentKind string

// The kinds of Comment.
const (
	// ReviewBody is a review's summary (its state says approve, request
	// changes or comment).
	ReviewBody CommentKind = "review"
	// LineComment is a comment on a line of a file of the diff.
	LineComment CommentKind = "line"
)

// Comment is one thing a reviewer said on a pull request.
type Comment struct {
	Kind CommentKind
	// State is the review's state for a ReviewBody: APPROVED,
	// CHANGES_REQUESTED or COMMENTED.
	State string
	User  string
	Body  string
	// Path and Line place a LineComment (Line is 0 for a file comment).
	Path string
	Line int
	At   time.Time
}

// String renders c as one entry of an "address the review" request.
func (c Comment) String() string {
	switch c.Kind {
	case LineComment:
		if c.Line > 0 {
			return fmt.Sprintf("%s:%d (%s): %s", c.Path, c.Line, c.User, c.Body)
		}
		return fmt.Sprintf("%s (%s): %s", c.Path, c.User, c.Body)
	default:
		return fmt.Sprintf("review %s (%s): %s", c.State, c.User, c.Body)
	}
}

// perPage is the page size asked of GitHub's lists (its maximum).
const perPage = 100

// ReviewComments returns what reviewers said on pull request number, oldest
// first: the reviews with a body and every review comment on a line.
func (c *Client) ReviewComments(ctx context.Context, owner, name string, number int) ([]Comment, error) {
	op := fmt.Sprintf("read the review of %s/%s#%d", owner, name, number)
	var out []Comment
	opt := &gh.ListOptions{PerPage: perPage}
	for {
		reviews, resp, err := c.gh.PullRequests.ListReviews(ctx, owner, name, number, opt)
		if err != nil {
			return nil, classify(op, err)
		}
		for _, r := range reviews {
			if r.GetBody() == "" {
				continue
			}
			out = append(out, Comment{Kind: ReviewBody, State: r.GetState(), User: r.GetUser().GetLogin(), Body: r.GetBody(), At: r.GetSubmittedAt().Time})
		}
		if resp.NextPage == 0 {
			break
		}
		opt.Page = resp.NextPage
	}
	copt := &gh.PullRequestListCommentsOptions{ListOptions: gh.ListOptions{PerPage: perPage}}
	for {
		comments, resp, err := c.gh.PullRequests.ListComments(ctx, owner, name, number, copt)
		if err != nil {
			return nil, classify(op, err)
		}
		for _, cm := range comments {
			line := cm.GetLine()
			if line == 0 {
				line = cm.GetOriginalLine()
			}
			out = append(out, Comment{Kind: LineComment, User: cm.GetUser().GetLogin(), Body: cm.GetBody(), Path: cm.GetPath(), Line: line, At: cm.GetCreatedAt().Time})
		}
		if resp.NextPage == 0 {
			break
		}
		copt.Page = resp.NextPage
	}
	slices.SortStableFunc(out, func(a, b Comment) int { return a.At.Compare(b.At) })
	return out, nil
}

// ReviewEvent is what a review does to a pull request.
type ReviewEvent string

const (
	// CommentReview comments without approving or requesting changes:
	// what the author of a pull request may post on it (GitHub refuses
	// the others from the author, 422 "Can not approve your own pull
	// request").
	CommentReview ReviewEvent = "COMMENT"
	Approve       ReviewEvent = "APPROVE"
	// RequestChanges blocks the pull request where reviews are required.
	RequestChanges ReviewEvent = "REQUEST_CHANGES"
)

// Review is a review as GitHub recorded it.
type Review struct {
	ID    int64
	State string
	URL   string
}

// CreateReview posts a review of pull request number at commit sha (the
// head Fetch pushed; "" for the pull request's head) with body (Markdown)
// and event.
func (c *Client) CreateReview(ctx context.Context, owner, name string, number int, sha, body string, event ReviewEvent) (Review, error) {
	req := &gh.PullRequestReviewRequest{Body: gh.Ptr(body), Event: gh.Ptr(string(event))}
	if sha != "" {
		req.CommitID = gh.Ptr(sha)
	}
	r, _, err := c.gh.PullRequests.CreateReview(ctx, owner, name, number, req)
	if err != nil {
		return Review{}, classify(fmt.Sprintf("review %s/%s#%d", owner, name, number), err)
	}
	return Review{ID: r.GetID(), State: r.GetState(), URL: r.GetHTMLURL()}, nil
}
