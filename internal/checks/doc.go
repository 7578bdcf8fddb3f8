// Package checks runs a workspace's checks (its tests and builds) on a
// task's branch before Fetch opens or updates a pull request, and before
// any merge: the commands the owner set with /checks, or the ones it
// detects from the workspace's files (go.mod → go test ./..., a
// package.json with a test script → npm test, pytest's configuration →
// pytest, Cargo.toml → cargo test, a Makefile with a test target → make
// test).
//
// Every command runs in the workspace's kennel, in the task's worktree,
// never on the host: the tree is the coding CLI's, so anything in it
// (a Makefile, a test, a package.json script) is hostile, and the kennel
// is the only place it may run. A command line is parsed once, when it is
// set, by mvdan.cc/sh/v3 (the parser the policy uses) into an argv: one
// simple command of literal words (quotes allowed; no expansions, no
// pipes, lists, redirections or assignments), which then runs as that
// argv, not through a shell. Inside the kennel a shell would be no
// escape, but an argv runs exactly what the owner reads in /checks and in
// the pull request; an owner who wants a pipeline writes sh -c '…' and
// says so. All the checks of one shipment share one time limit
// (FETCH_CHECK_TIMEOUT): a command still running at the limit is cut, and
// reported as cut; the ones after it are reported as not run.
//
// What a check printed is untrusted: the tail of a failure is kept
// bounded (tailLines lines of at most lineMax characters), stripped of
// control characters and masked by the store's scrubber (the redactor of
// Fetch's secrets) before it reaches a pull request or the chat.
//
// A detected command whose program is not in the kennel (exit 127) is
// reported as not run, and does not fail the shipment: the kennel image
// may lack a toolchain the repository uses. A command the owner set must
// run: the same exit fails.
//
// checks imports kennel (its exec types), store (the workspace_checks
// table and the scrubber) and instincts (the /checks Response). A Runner
// keeps no state of its own and is safe for concurrent use.
package checks
