// Package mirror keeps Fetch's own bare repository per workspace: the one
// place where Fetch runs git on the host for a workspace's work (rebase,
// secret scan, push), because nothing in it was written by a kennel.
//
// # Where the commits come from
//
// A coding CLI commits in its workspace inside the kennel, whose tree and
// .git are hostile (ARCHITECTURE.md, "Where the work lives"). Import asks
// the kennel, through gitrun (hardened git, argv only), for a bundle of the
// task branch on the exec's raw stdout, written to a bounded temporary file
// under Root. The host then reads that bundle with its own git, in two
// steps, because git 2.39 does not fsck objects fetched from a bundle: the
// bundle is fetched into a scratch bare repository (Root/.tmp, borrowing
// the mirror's objects through objects/info/alternates so a thin bundle's
// prerequisites resolve), and the mirror fetches the branch from the
// scratch repository over upload-pack with transfer.fsckObjects on, so
// every object that enters the mirror is checked. The bundle must name
// exactly the branch asked for. Any failure leaves the mirror's refs as
// they were (objects of a failed fetch stay in the scratch repository,
// which is removed).
//
// # Host git
//
// Every git command on a mirror runs with an allowlisted environment
// (hostEnv: no system or global configuration, HOME an empty directory of
// the mirror's, no prompts, GIT_ALLOW_PROTOCOL=https:http:file), the
// hardening options of gitrun plus http.followRedirects=false, argv only, a
// timeout, bounded stdout and a stderr tail. A repository is created with a
// configuration only Fetch writes (fsck on every transfer, hooks at
// /dev/null, no fsmonitor, gc.auto=0) and an empty template, so it holds
// no hook and no sample. A remote's token reaches git only through
// GIT_CONFIG_COUNT/KEY/VALUE as an http.extraHeader (never argv, never a
// file) and is scrubbed from every error. Failures of the remote are
// classified from git's stderr and push's porcelain status (git gives no
// structured code for them): ErrAuth, ErrRepoNotFound, ErrNetwork,
// ErrRejected, ErrNonFastForward.
//
// # Rebase without a working tree
//
// Rebase replays a linear branch on a new base with git merge-tree. Git
// 2.39 has no --merge-base, so each pick merges a throw-away commit (the
// new parent's tree with the picked commit's parent as its parent) with the
// picked commit: their merge base is then exactly the picked commit's
// parent, which is what a cherry-pick uses. The new commits keep the
// author line and message verbatim (and the encoding header); their
// committer is Config.Committer at Config.Now — Fetch made them, and a
// fixed identity makes that plain. Signatures are dropped (they would no
// longer verify). Commits that become empty are dropped, as git rebase
// does; commits empty from the start are kept. The throw-away commits stay
// in the object store as unreachable objects (gc.auto=0; harmless).
//
// Imports: gitrun and kennel (the exec that carries bundles in and out)
// and redact (the secret rules); nothing above them.
//
// Concurrency: a *Mirror is safe for concurrent use. Calls that touch one
// workspace's mirror are serialized by a per-workspace lock, taken with
// the caller's context; every command under it has a timeout. The package
// starts no goroutine of its own (os/exec and the kennel own theirs for
// the duration of a call).
package mirror
