// Package mirror keeps Fetch's own bare repository per workspace: the one
// place where Fetch runs git on the host for a workspace's work (rebase,
// secret scan, push), because nothing in it was written by a kennel.
//
// # Where the commits come from
//
// A coding CLI commits in its workspace inside the kennel, whose tree and
// .git are hostile (ARCHITECTURE.md, "Where the work lives"). Its branch
// reaches the mirror as a git bundle that crossed out of the kennel: one
// the task's run printed after its CLI (Stage), or one Fetch asks of the
// kennel through gitrun (hardened git, argv only) and reads from the
// exec's raw stdout as it comes (StageImport, Import). Either way the
// bundle is a stream, bounded by Config.MaxBundle, and never a file.
//
// The host reads the bundle's header itself: it must name exactly
// refs/heads/BRANCH (for Import, at the tip the kennel named). The pack
// after the header goes to the host's `git index-pack --strict
// --fix-thin --stdin`, run with GIT_OBJECT_DIRECTORY a quarantine of its
// own (Root/.tmp/stage-*) and the mirror's objects as an alternate:
// index-pack fscks every object, completes a thin pack with the bases the
// mirror has, and checks that every object a new one names is in the pack
// or in the mirror. As everything in the mirror came in this way, the
// branch's whole history is then there. (Git 2.39 does not fsck what
// `git fetch` takes from a bundle, which is why the bundle is not fetched.)
// The bundle's prerequisites are not checked before: when index-pack
// refuses the pack, one cat-file tells a mirror that lacks them
// (ErrMissingBase: the caller asks for the whole history) from a bad
// bundle (ErrBadBundle). The diff and log Stage returns are then read by
// the host's git from the mirror's objects and the quarantine's, at the
// same time; the log ending with the tip is what shows the tip a commit
// that is there (otherwise one cat-file tells). So the usual path costs
// three host git processes: index-pack, diff and log.
//
// Nothing enters the mirror before Land: the caller scans the staged work
// (Staged.Scan) between Stage and Land, and drops what it refuses. Land, under the
// workspace's lock, renames the pack's files into the mirror's
// objects/pack (the .pack before the .idx: git finds a pack by its index)
// and forces refs/heads/BRANCH to the tip with update-ref. Past 16 packs,
// Land rolls the smaller ones up (git repack --geometric=2), so that a
// mirror of many tasks does not look objects up in as many packs. A tip at the
// base (Stage) or one the mirror has already (StageImport, Import) needs
// no pack: Land then only sets the ref. A quarantine left by a process that
// ended between Stage and Land is removed when a new one is made an hour
// or more later (by the file system's clock).
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
// # Secret scan
//
// A push sends every commit of a branch, not its diff: a file added in
// one commit and removed in the next, a commit message, an author's email
// all reach the remote. So Scan and Staged.Scan read every commit of
// BASE..TIP, by two host git commands for the whole range. The first is
// one git log that prints, after a line of its own per commit (a NUL
// first, which no line of a patch has), the lines the commit adds over
// its first parent: --text (a binary file, or one that .gitattributes
// calls binary, is read as text; a bare mirror reads no .gitattributes of
// the work anyway), --no-textconv, --no-ext-diff, --no-renames,
// --unified=0. A root commit in the range adds its whole tree (--root). A
// merge adds what it has over its first parent (--diff-merges=
// first-parent): the commits of its other parents in the range are
// scanned on their own, and every line of the merge's tree is then either
// in its first parent's or added by it, so nothing is in a tree of the
// range that no scanned commit added or that was not in the base's
// history already. The second is one cat-file --batch of the commits'
// objects, read as bytes as git stores them: the author and committer
// (name and email), the other headers (but tree and parent), and the
// message, not re-encoded and whole past a NUL, where git log would stop.
// A finding names the commit (12 hex digits), the place (file and line,
// message and line, author, committer, header), and the rule.
//
// What either command prints is bounded (Config.MaxScan, 64 MiB each):
// work over it is not scanned in part but refused, an error wrapping
// ErrScanIncomplete, and the callers take nothing nor push anything then.
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
// Concurrency: a *Mirror is safe for concurrent use; a *Staged is for
// one goroutine at a time. Calls on one workspace's mirror are serialized
// by a per-workspace lock, taken with the caller's context; every command
// under it has a timeout. Staging is the exception: it takes the lock only
// to create a missing mirror, for it writes only its own quarantine and reads
// the mirror, which git readers may do while another call writes; Land
// takes the lock. No lock is held when Stage returns. Within a call, Stage
// runs the diff and the log on two goroutines, and StageImport and Import
// the kennel's exec on one while index-pack reads its output; each call
// waits for its goroutines before it returns (os/exec and the kennel own
// theirs for the duration of a call).
package mirror
