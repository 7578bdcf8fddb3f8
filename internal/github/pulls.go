package github

import (
	"context"
	"fmt"
	"net/http"
	"strings"

	gh "github.com/google/go-github/v76/github"
)

// State is a pull request's state on GitHub.
type State string

// The states of a pull request. A merged pull request is Closed with
// PR.Merged set.
const (
	Open   State = "open"
	Closed State = "closed"
)

// MergeMethod is how Merge merges.
type MergeMethod string

// The merge methods GitHub offers (a repository may disable some).
const (
	MergeCommit MergeMethod = "merge"
	Squash      MergeMethod = "squash"
	Rebase      MergeMethod = "rebase"
)

// NewPR is a pull request to open: Head's branch into Base.
type NewPR struct {
	Title, Body string
	// Head is the branch with the work, in the same repository.
	Head string
	// Base is the branch to merge into, usually the default branch.
	Base string
	// Draft opens it as a draft: GitHub does not merge it until it is
	// marked ready for review.
	Draft bool
}

// PR is what Fetch follows of a pull request.
type PR struct {
	Number int
	// URL is the pull request's web page.
	URL    string
	State  State
	Merged bool
	// Mergeable is nil while GitHub is still computing it.
	Mergeable  *bool
	HeadSHA    string
	Head, Base string
	Title      string
	Draft      bool
	// NodeID is its GraphQL id.
	NodeID string
}

// equal says whether p and q show the same pull request the same way.
func (p PR) equal(q PR) bool {
	mergeableEqual := (p.Mergeable == nil) == (q.Mergeable == nil) &&
		(p.Mergeable == nil || *p.Mergeable == *q.Mergeable)
	p.Mergeable, q.Mergeable = nil, nil
	return p == q && mergeableEqual
}

func fromPull(p *gh.PullRequest) PR {
	pr := PR{
		Number:  p.GetNumber(),
		URL:     p.GetHTMLURL(),
		State:   State(p.GetState()),
		Merged:  p.GetMerged(),
		HeadSHA: p.GetHead().GetSHA(),
		Head:    p.GetHead().GetRef(),
		Base:    p.GetBase().GetRef(),
		Title:   p.GetTitle(),
		Draft:   p.GetDraft(),
		NodeID:  p.GetNodeID(),
	}
	if p.Mergeable != nil {
		m := *p.Mergeable
		pr.Mergeable = &m
	}
	return pr
}

// OpenPR opens pr in owner/name, or returns the open pull request that
// already exists for the same head and base (created false). It is safe to
// retry: a concurrent creation that wins the race is found and returned.
// A found pull request has Mergeable nil (GitHub's list leaves it out);
// PR reads it.
func (c *Client) OpenPR(ctx context.Context, owner, name string, pr NewPR) (PR, bool, error) {
	op := fmt.Sprintf("open pull request %s→%s in %s/%s", pr.Head, pr.Base, owner, name)
	if existing, ok, err := c.findOpen(ctx, owner, name, pr); err != nil {
		return PR{}, false, classify(op, err)
	} else if ok {
		return existing, false, nil
	}
	created, _, err := c.gh.PullRequests.Create(ctx, owner, name, &gh.NewPullRequest{
		Title: gh.Ptr(pr.Title),
		Body:  gh.Ptr(pr.Body),
		Head:  gh.Ptr(pr.Head),
		Base:  gh.Ptr(pr.Base),
		Draft: gh.Ptr(pr.Draft),
	})
	if err == nil {
		return fromPull(created), true, nil
	}
	if statusOf(err) == http.StatusUnprocessableEntity {
		// "A pull request already exists": someone opened it between our
		// list and our create. Any other 422 finds nothing and stays.
		if existing, ok, lerr := c.findOpen(ctx, owner, name, pr); lerr == nil && ok {
			return existing, false, nil
		}
	}
	return PR{}, false, classify(op, err)
}

// findOpen looks for an open pull request from pr.Head into pr.Base.
func (c *Client) findOpen(ctx context.Context, owner, name string, pr NewPR) (PR, bool, error) {
	head := pr.Head
	if !strings.Contains(head, ":") {
		head = owner + ":" + head
	}
	list, _, err := c.gh.PullRequests.List(ctx, owner, name, &gh.PullRequestListOptions{
		State: string(Open), Head: head, Base: pr.Base,
	})
	if err != nil {
		return PR{}, false, err
	}
	for _, p := range list {
		if p.GetHead().GetRef() == strings.TrimPrefix(head, owner+":") && p.GetBase().GetRef() == pr.Base {
			return fromPull(p), true, nil
		}
	}
	return PR{}, false, nil
}

// PR reads pull request number, conditionally: the Client remembers the
// last answer's ETag and, when GitHub says 304 Not Modified (which costs no
// rate limit), returns the remembered pull request. changed is false when
// the pull request is the same as at the previous call (the first call is
// always a change).
func (c *Client) PR(ctx context.Context, owner, name string, number int) (PR, bool, error) {
	op := fmt.Sprintf("get pull request %s/%s#%d", owner, name, number)
	key := prKey{owner, name, number}
	c.mu.Lock()
	cached, known := c.prs[key]
	c.mu.Unlock()

	req, err := c.gh.NewRequest(http.MethodGet, fmt.Sprintf("repos/%v/%v/pulls/%d", owner, name, number), nil)
	if err != nil {
		return PR{}, false, fmt.Errorf("github: %s: %w", op, err)
	}
	if known && cached.etag != "" {
		req.Header.Set("If-None-Match", cached.etag)
	}
	var pull gh.PullRequest
	resp, err := c.gh.Do(ctx, req, &pull)
	if err != nil {
		if known && statusOf(err) == http.StatusNotModified {
			return cached.pr, false, nil
		}
		return PR{}, false, classify(op, err)
	}
	pr := fromPull(&pull)
	changed := !known || !pr.equal(cached.pr)
	c.mu.Lock()
	c.prs[key] = cachedPR{etag: resp.Header.Get("ETag"), pr: pr}
	c.mu.Unlock()
	return pr, changed, nil
}

// Merge merges pull request number with method, only if its head is still
// sha (a moved head is ErrRejected), and returns the merge commit.
func (c *Client) Merge(ctx context.Context, owner, name string, number int, sha string, method MergeMethod) (string, error) {
	res, _, err := c.gh.PullRequests.Merge(ctx, owner, name, number, "", &gh.PullRequestOptions{
		SHA: sha, MergeMethod: string(method),
	})
	if err != nil {
		return "", classify(fmt.Sprintf("merge pull request %s/%s#%d", owner, name, number), err)
	}
	return res.GetSHA(), nil
}

// Close closes pull request number without merging it; closing a closed
// pull request is success.
func (c *Client) Close(ctx context.Context, owner, name string, number int) error {
	_, _, err := c.gh.PullRequests.Edit(ctx, owner, name, number, &gh.PullRequest{State: gh.Ptr(string(Closed))})
	if err != nil {
		return classify(fmt.Sprintf("close pull request %s/%s#%d", owner, name, number), err)
	}
	return nil
}

// EditBody replaces pull request number's body.
func (c *Client) EditBody(ctx context.Context, owner, name string, number int, body string) error {
	_, _, err := c.gh.PullRequests.Edit(ctx, owner, name, number, &gh.PullRequest{Body: gh.Ptr(body)})
	if err != nil {
		return classify(fmt.Sprintf("edit pull request %s/%s#%d", owner, name, number), err)
	}
	return nil
}

// MarkReady marks draft pull request number ready for review. The REST
// API cannot (a draft's state is GraphQL's): it reads the pull request's
// node id, then calls the markPullRequestReadyForReview mutation at the
// GraphQL endpoint next to the REST API (api.github.com/graphql,
// HOST/api/graphql on Enterprise). A pull request that is not a draft is
// left as it is.
func (c *Client) MarkReady(ctx context.Context, owner, name string, number int) error {
	op := fmt.Sprintf("mark pull request %s/%s#%d ready", owner, name, number)
	p, _, err := c.gh.PullRequests.Get(ctx, owner, name, number)
	if err != nil {
		return classify(op, err)
	}
	if !p.GetDraft() {
		return nil
	}
	req, err := c.gh.NewRequest(http.MethodPost, "../graphql", map[string]any{
		"query":     `mutation($id: ID!) { markPullRequestReadyForReview(input: {pullRequestId: $id}) { pullRequest { isDraft } } }`,
		"variables": map[string]any{"id": p.GetNodeID()},
	})
	if err != nil {
		return fmt.Errorf("github: %s: %w", op, err)
	}
	var out struct {
		Errors []struct {
			Message string `json:"message"`
		} `json:"errors"`
	}
	if _, err := c.gh.Do(ctx, req, &out); err != nil {
		return classify(op, err)
	}
	if len(out.Errors) > 0 {
		return fmt.Errorf("github: %s: %s: %w", op, out.Errors[0].Message, ErrRejected)
	}
	return nil
}
