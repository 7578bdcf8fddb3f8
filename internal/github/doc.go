// Package github ships Fetch's work to GitHub: it reads a repository
// (default branch, clone URL, whether the token may push), opens pull
// requests idempotently, polls them cheaply with ETags, merges or closes
// them, deletes task branches and collects review comments to hand back to
// a coding CLI. It is a thin client over go-github (pinned in go.mod);
// git pushes themselves are not made here but by git, with the same token.
//
// # Token
//
// Fetch takes one token, from FETCH_GITHUB_TOKEN (read in cmd/fetch, never
// here). Use a fine-grained personal access token limited to the
// repositories Fetch works on, with these repository permissions:
//
//   - Contents: read and write — push task branches, merge, delete branches;
//   - Pull requests: read and write — open, read, close pull requests and
//     read their reviews;
//   - Metadata: read — mandatory, lets the token see the repository.
//
// A classic token needs the "repo" scope for the same. Git pushes use the
// token as the password of HTTP Basic auth (user x-access-token), passed
// as a header (git -c http.extraHeader=...), never in a URL or a config.
//
// # Errors
//
// Errors are classified once, here, with go-github's types: ErrNoToken,
// ErrAuth (401), ErrPermission (403, or no push permission), ErrNotFound
// (404), ErrRejected (405, 409, 422: a conflict, a moved head, nothing to
// merge) and ErrUnavailable (network, 5xx, rate limits). Each says in one
// sentence what to do; Explain returns that sentence for the user. The
// token never appears in an error, a log line or a String.
//
// # Concurrency
//
// A Client is safe for concurrent use. It keeps the last ETag and pull
// request per (repository, number) for PR, under a mutex never held across
// an HTTP call. It starts no goroutines.
//
// It imports no package of Fetch's.
package github
