package policy

import (
	"fmt"
	"strings"

	"github.com/fetch-dev/fetch/internal/store"
)

// Kind is what a permission request would do. Harness adapters map their
// CLI's tools onto these (Claude Code: Bash → Shell; Edit, Write,
// MultiEdit, NotebookEdit → Edit; Read, Glob, Grep, LS → Read; WebFetch,
// WebSearch → Fetch; TodoWrite, Task, ExitPlanMode → Internal; MCP and
// anything else → Other with its name).
type Kind string

const (
	// Shell runs a command line (Request.Command).
	Shell Kind = "shell"
	// Edit creates or changes files (Request.Paths).
	Edit Kind = "edit"
	// Delete removes files (Request.Paths).
	Delete Kind = "delete"
	// Read reads files or lists directories (Request.Paths).
	Read Kind = "read"
	// Fetch reads a URL from the web (Request.URL).
	Fetch Kind = "fetch"
	// Internal is the CLI's own bookkeeping that touches nothing: its
	// todo list, its plan, starting a sub-agent (whose own tool calls come
	// as requests of their own).
	Internal Kind = "internal"
	// Other is a tool the policy does not understand (Request.Tool names
	// it): it cannot be checked against the deny list, so it asks unless a
	// rule allows it.
	Other Kind = "other"
)

// Request is one permission request of a coding CLI, normalized.
type Request struct {
	Kind Kind
	// Tool is the CLI's name for the tool ("Bash", "Edit",
	// "mcp__github__create_issue"); it is what an Other rule matches.
	Tool string
	// Command is a Shell request's command line, as the CLI sent it.
	Command string
	// Dir is the directory the command runs in or the paths are relative
	// to; empty means the worktree.
	Dir string
	// Paths are the files of an Edit, Delete or Read request, absolute or
	// relative to Dir.
	Paths []string
	// URL is a Fetch request's address.
	URL string
}

// Task is where a request comes from.
type Task struct {
	// ID is the task's id; rules "for this task" match it.
	ID string
	// Workspace is the workspace's name; rules are per workspace.
	Workspace string
	// Worktree is the task's worktree, an absolute path as the kennel
	// sees it.
	Worktree string
	// BaseBranch is the workspace's base branch (main); "" when unknown,
	// and then every history rewrite counts as one of the base branch.
	BaseBranch string
	// Branch is the branch checked out in the worktree when the request
	// came (the task's branch unless the CLI switched); "" when unknown,
	// and then a history rewrite may be one of the base branch.
	Branch string
	// Home is the kennel user's home directory, for ~; "" when unknown
	// (a ~ path is then outside the worktree).
	Home string
	// Commands are the workspace's test and build commands, as command
	// words ("go test", "npm run build"): BuildCommands of its project
	// type, plus any the owner configured.
	Commands []string
}

// Verdict is what Fetch answers a permission request.
type Verdict string

const (
	Allow Verdict = "allow"
	Deny  Verdict = "deny"
	Ask   Verdict = "ask"
)

// Basis is what decided.
type Basis string

const (
	// ByLevel: the autonomy level's table.
	ByLevel Basis = "level"
	// ByRule: a rule the owner remembered.
	ByRule Basis = "rule"
	// ByDenyList: the request is on the deny list.
	ByDenyList Basis = "deny list"
	// ByUnknown: the policy cannot read the request well enough to check
	// it (an unparseable command line, a program that is an expansion, an
	// unknown tool, a URL that is not http).
	ByUnknown Basis = "unknown"
)

// DenyItem is an entry of the deny list.
type DenyItem string

const (
	DenyRemotes     DenyItem = "pushing or talking to remotes"
	DenyCredentials DenyItem = "touching credentials files"
	DenyRewrite     DenyItem = "rewriting the history of the base branch"
	DenyDelete      DenyItem = "deleting outside the worktree"
)

// DenyList is the deny list in the order /policy shows it, with what each
// entry covers.
var DenyList = []struct {
	Item   DenyItem
	Covers string
}{
	{DenyRemotes, "git push, fetch, pull, clone, ls-remote, submodule updates, changing remotes or git config that reaches them (remote.*, url.*, credential.*, alias.*, core.sshCommand); gh, glab, hub; ssh, scp, sftp, rsync to a host, nc, socat, telnet, ftp; curl or wget that send data (-d, -F, -T, --json, POST/PUT/PATCH/DELETE)"},
	{DenyCredentials, "~/.ssh, ~/.aws, ~/.gnupg, ~/.kube, ~/.azure, .env and .env.* (not .env.example), *.pem, *.key, *.p12, id_rsa and other keys, .git-credentials, .netrc, .npmrc, .pypirc, .pgpass, the coding CLIs' own credentials, /proc/*/environ, /etc/shadow"},
	{DenyRewrite, "git reset --hard, rebase, commit --amend, filter-branch on the base branch (or when the branch is unknown); filter-repo; git branch -f/-D/-m, update-ref, checkout -B of the base branch"},
	{DenyDelete, "rm, rmdir, unlink, shred, mv from, find -delete, or a delete tool, on a path outside the worktree or one the command does not spell out"},
}

// Hit is one deny-list entry a request matched, with the part that
// matched.
type Hit struct {
	Item DenyItem
	What string
}

// Suggestion is the rule the owner can remember for a request that
// asked: "Allow for this task" or "Always allow in this workspace".
type Suggestion struct {
	Tool    Kind
	Pattern string
}

func (s Suggestion) String() string { return fmt.Sprintf("%s `%s`", s.Tool, s.Pattern) }

// Decision is the policy's answer to a request.
type Decision struct {
	Verdict Verdict
	By      Basis
	// Reason says why, for the owner and for the CLI.
	Reason string
	// Rules are the remembered rules that allowed the request (By ByRule).
	Rules []store.PolicyRule
	// Hits are the deny-list entries it matched (By ByDenyList).
	Hits []Hit
	// Remember is the rule the owner may remember when the verdict is Ask;
	// nil when the request must be answered once (a deny-list hit, a
	// command line that is not a single plain command).
	Remember *Suggestion
}

func (d Decision) String() string { return d.Reason }

// Describe is a request in one short line, for the chat and the audit.
func Describe(r Request) string {
	var s string
	switch r.Kind {
	case Shell:
		s = fmt.Sprintf("%s `%s`", r.Kind, oneLine(r.Command))
	case Edit, Delete, Read:
		s = fmt.Sprintf("%s %s", r.Kind, strings.Join(r.Paths, ", "))
	case Fetch:
		s = fmt.Sprintf("%s %s", r.Kind, r.URL)
	default:
		s = fmt.Sprintf("%s %s", r.Kind, r.Tool)
	}
	return clip(oneLine(s), maxDescribe)
}

// maxDescribe bounds a request's description: a command line can be
// megabytes.
const maxDescribe = 300

func oneLine(s string) string { return strings.Join(strings.Fields(s), " ") }

func clip(s string, n int) string {
	if len(s) <= n {
		return s
	}
	cut := n
	for cut > 0 && s[cut]&0xC0 == 0x80 {
		cut--
	}
	return s[:cut] + "…"
}
