package github

import (
	"context"
	"fmt"
	"log/slog"
	"net/http"
	"sync"

	gh "github.com/google/go-github/v76/github"
)

// Config says which GitHub to talk to and as whom.
type Config struct {
	// URL is the REST API's base: "" for https://api.github.com/; for
	// GitHub Enterprise (and tests) e.g. https://ghe.example.com/api/v3/.
	URL string
	// Token is the token Fetch acts with (see the package documentation
	// for its permissions). It never appears in String or an error.
	Token string
	// HTTPClient makes the requests; nil for a default client.
	HTTPClient *http.Client
}

// String describes c without its token.
func (c Config) String() string {
	token := "none"
	if c.Token != "" {
		token = "[redacted]"
	}
	url := c.URL
	if url == "" {
		url = "https://api.github.com/"
	}
	return fmt.Sprintf("github.Config{URL: %s, Token: %s}", url, token)
}

// GoString is String, so that %#v does not print the token either.
func (c Config) GoString() string { return c.String() }

// LogValue is how slog shows c: without its token.
func (c Config) LogValue() slog.Value { return slog.StringValue(c.String()) }

// Client talks to one GitHub with one token. Build it with New.
type Client struct {
	gh  *gh.Client
	cfg string // Config.String, for Client.String

	mu  sync.Mutex
	prs map[prKey]cachedPR // PR's last answer per pull request
}

type prKey struct {
	owner, name string
	number      int
}

type cachedPR struct {
	etag string
	pr   PR
}

// New builds a Client; it makes no request. An empty token is ErrNoToken.
func New(cfg Config) (*Client, error) {
	if cfg.Token == "" {
		return nil, fmt.Errorf("github: %w", ErrNoToken)
	}
	c := gh.NewClient(cfg.HTTPClient).WithAuthToken(cfg.Token)
	if cfg.URL != "" {
		var err error
		c, err = c.WithEnterpriseURLs(cfg.URL, cfg.URL)
		if err != nil {
			return nil, fmt.Errorf("github: API URL %q: %w", cfg.URL, err)
		}
	}
	c.UserAgent = "fetch"
	return &Client{gh: c, cfg: cfg.String(), prs: map[prKey]cachedPR{}}, nil
}

// String describes c without its token.
func (c *Client) String() string { return "github.Client{" + c.cfg + "}" }

// GoString is String.
func (c *Client) GoString() string { return c.String() }

// Repo is what Fetch needs to know of a repository.
type Repo struct {
	Owner, Name   string
	DefaultBranch string
	// CloneURL is the HTTPS clone URL.
	CloneURL string
	// Push says whether the token may push (permissions.push).
	Push     bool
	Archived bool
}

// CanPush is nil when the token may push to r, else an ErrPermission
// saying why.
func (r Repo) CanPush() error {
	switch {
	case r.Archived:
		return fmt.Errorf("github: %s/%s is archived, unarchive it on GitHub to push: %w", r.Owner, r.Name, ErrPermission)
	case !r.Push:
		return fmt.Errorf("github: the token may not push to %s/%s: %w", r.Owner, r.Name, ErrPermission)
	}
	return nil
}

// Repo reads owner/name.
func (c *Client) Repo(ctx context.Context, owner, name string) (Repo, error) {
	r, _, err := c.gh.Repositories.Get(ctx, owner, name)
	if err != nil {
		return Repo{}, classify("get repository "+owner+"/"+name, err)
	}
	return Repo{
		Owner:         r.GetOwner().GetLogin(),
		Name:          r.GetName(),
		DefaultBranch: r.GetDefaultBranch(),
		CloneURL:      r.GetCloneURL(),
		Push:          r.GetPermissions()["push"],
		Archived:      r.GetArchived(),
	}, nil
}

// DeleteBranch deletes branch from owner/name. A branch that does not
// exist is success.
func (c *Client) DeleteBranch(ctx context.Context, owner, name, branch string) error {
	_, err := c.gh.Git.DeleteRef(ctx, owner, name, "heads/"+branch)
	if err == nil {
		return nil
	}
	switch statusOf(err) {
	case http.StatusNotFound:
		return nil
	case http.StatusUnprocessableEntity:
		// GitHub's only sign that the branch is already gone is this
		// message; other 422s (a protected branch) stay errors.
		if errorMessage(err) == "Reference does not exist" {
			return nil
		}
	}
	return classify(fmt.Sprintf("delete branch %s of %s/%s", branch, owner, name), err)
}
