// Package gitrun runs git on a workspace inside the workspace's kennel: the
// one way Fetch runs git against a tree or a .git that a coding CLI can
// write.
//
// # Why in the kennel
//
// A coding CLI in the kennel writes its workspace, .git included: hooks,
// .git/config (core.fsmonitor, core.pager, core.sshCommand, diff.external,
// filter.*.clean and smudge, core.hooksPath, credential.helper, gpg.program,
// remote.*.uploadpack, …), .gitattributes naming filter and diff drivers, a
// .git that is a symlink or a file pointing elsewhere. Git honours all of
// them, and has no option to ignore a repository's configuration wholesale,
// so no deny list of -c overrides is ever complete. Git run by Fetch on the
// host would run that code with Fetch's environment (its Discord token, its
// OpenRouter key, the Docker socket). So the host never does: every git
// command on a workspace is an exec in that workspace's kennel (argv only,
// as the kennel's user, under the sandbox), and Fetch reads only its exit
// code, a bounded stdout and a stderr tail. Planted code then runs where
// the CLI could run code anyway.
//
// Every command still carries hardening options (Hardening: hooks off,
// fsmonitor off, pager cat, no credential helper, no ext:: transport, any
// owner trusted, paths unquoted) and a minimal environment (Env: no
// system or global configuration, no prompts, no optional locks, C locale,
// the kennel user's home), and callers add --no-verify, --no-ext-diff and
// --no-textconv where a command takes them, so that results are not
// trivially faked by the repository. diff.external is not overridden with
// an empty value (git then tries to run ""); --no-ext-diff covers it.
//
// The only git Fetch runs on the host is on directories it has just
// created and no kennel has seen: the init and first commit of a new
// workspace and the clone into a staging directory before it is published
// (package workspace, hostgit.go), with the same kind of minimal
// environment. Those stay on the host because a kennel is keyed by, and
// mounts only, a published workspace's path: running them in a kennel
// would need a container for the staging path, recreated after the rename.
//
// Output: stdout comes back from the kennel line by line and is rebuilt
// with a newline after every line, bounded by Cmd.MaxOutput; a line longer
// than the kennel's MaxLine (1 MiB by default) comes back cut into pieces
// with newlines between them.
//
// Imports: kennel (its ExecSpec, LineHandler and Result), nothing else of
// Fetch. A *Git holds no state besides its Exec and is safe for concurrent
// use.
package gitrun
