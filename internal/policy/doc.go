// Package policy decides what a coding CLI may do without the owner: each
// permission request (run a command, edit, delete or read files, fetch a
// URL, another tool) gets Allow, Deny or Ask, with the reason and the
// rule that decided, for the chat and the audit.
//
// What each autonomy level does:
//
//	                      autonomous   cautious   supervised
//	read (any path)       allow        allow      allow
//	edit/delete worktree  allow        allow      ask
//	test/build command    allow        allow      ask
//	anything else         allow        ask        ask
//	unknown tool          ask          ask        ask
//	deny list             deny         ask (!)    ask (!)
//	CLI bookkeeping       allow        allow      allow
//
// A command line is allowed below the autonomous level only when it is
// plain (simple commands joined by ;, &&, ||, | and &) and every part of
// it is allowed; substitutions, subshells, sh -c, eval and control flow
// ask. Lines are read as bash reads them, by mvdan.cc/sh's parser (the
// one behind shfmt); a line bash would refuse is never allowed. The deny
// list is checked on every part, nested ones included (and the text of
// comments and here-documents too), and on every suffix of wrappers'
// words (nice -n 10 git push). A deny-list hit is never offered for
// remembering, and rules never override it.
//
// "Talking to remotes" in a kennel that has a network: reaching or
// changing a git remote, the forges' CLIs, remote shells and raw sockets,
// and HTTP requests that send data. Reading the web (curl GET, package
// installs) is not on the deny list: it is allowed when autonomous and
// asks otherwise.
//
// The deny list catches what a command says it does. A command can always
// run code that does more (a script of the worktree, python -c, a test):
// the kennel, which holds no credentials of the owner's, is the boundary;
// the policy is the owner's steering wheel, not a sandbox. Paths are
// cleaned lexically: a symlink in the worktree is not followed.
//
// policy imports store (for the rule and audit types) and instincts (for
// the autonomy levels); it does no I/O. Decide is a pure function; a
// LoopGuard is safe for concurrent use.
package policy
