package main

import (
	"bufio"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net/url"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"
	"text/tabwriter"

	xterm "golang.org/x/term"

	"github.com/fetch-dev/fetch/internal/doctor"
	"github.com/fetch-dev/fetch/internal/store"
	"github.com/fetch-dev/fetch/internal/task"
	"github.com/fetch-dev/fetch/internal/workspace"
)

const workspaceUsage = `Usage:
  fetch workspace add [--template T] NAME [PATH]
  fetch workspace clone URL [NAME]
  fetch workspace list [--json]
  fetch workspace show [--json] NAME
  fetch workspace hosts NAME [add HOST | remove HOST]
  fetch workspace remove [--yes] NAME

A workspace is a git repository in a directory under $FETCH_WORKSPACES that
Fetch's coding tasks work in (fetch task run --workspace NAME, or "use the
NAME workspace" / /use NAME in chat).

add NAME makes a new repository on branch main with a first commit (from
template T: ` + "%s" + `; empty by default).
add NAME PATH copies the existing local git repository at PATH: its committed
history is cloned into the workspaces folder (uncommitted changes are not
copied), and PATH itself is never touched, by Fetch or by the tasks.
clone URL [NAME] clones https://, ssh://, user@host:path or file:// URLs;
NAME defaults to the repository's name.
list shows the workspaces; show one workspace's git state.
hosts lists, adds or removes the hosts the workspace's tasks may reach: the
kennel has no way out but Fetch's proxy, which lets through only what each
coding CLI needs and these (HOST is a name such as registry.npmjs.org,
*.example.com for its subdomains, or a public IP address).
remove deletes a workspace and everything in it (its tasks' branches
included). It asks for confirmation on a terminal; elsewhere pass --yes.
A workspace with a running or queued task is not removed.

Names are 1 to 64 letters, digits, '.', '-' and '_', not starting with a
dot. Exit codes: 0 done, 1 failed, 2 usage (or removal not confirmed).
`

// workspaceHelp is the usage with the templates named.
func workspaceHelp() string {
	return fmt.Sprintf(workspaceUsage, strings.Join(workspace.Templates(), ", "))
}

// workspaceHint tells a user who named a workspace that does not exist how
// to make one.
const workspaceHint = "Add one with: fetch workspace add NAME [PATH] (a new repository, or a copy of a local one) or fetch workspace clone URL [NAME]; fetch workspace list shows them.\n"

func runWorkspace(ctx context.Context, args []string, getenv func(string) string, stdin io.Reader, stdout, stderr io.Writer) error {
	if len(args) == 0 || args[0] == "help" || args[0] == "-h" || args[0] == "--help" {
		fmt.Fprint(stdout, workspaceHelp())
		if len(args) == 0 {
			return fmt.Errorf("%w: a subcommand is required", errUsage)
		}
		return nil
	}
	sub, rest := args[0], args[1:]
	if sub == "ls" {
		sub = "list"
	}
	if sub == "rm" {
		sub = "remove"
	}
	want := map[string][2]int{"add": {1, 2}, "clone": {1, 2}, "list": {0, 0}, "show": {1, 1}, "remove": {1, 1}, "hosts": {1, 3}}
	n, known := want[sub]
	if !known {
		return fmt.Errorf("%w: unknown subcommand %q\n\n%s", errUsage, sub, workspaceHelp())
	}
	err := workspaceCommand(ctx, sub, n, rest, getenv, stdin, stdout, stderr)
	if err != nil {
		return &cmdError{name: "workspace " + sub, err: err}
	}
	return nil
}

func workspaceCommand(ctx context.Context, sub string, n [2]int, args []string, getenv func(string) string, stdin io.Reader, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("fetch workspace "+sub, flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	var (
		template = fs.String("template", "", "template of a new workspace")
		asJSON   = fs.Bool("json", false, "JSON output")
		yes      = fs.Bool("yes", false, "remove without asking")
		help     = fs.Bool("help", false, "help")
	)
	pos, err := parseInterleaved(fs, args)
	if *help {
		fmt.Fprint(stdout, workspaceHelp())
		return nil
	}
	if err != nil {
		return fmt.Errorf("%w: %v\n\n%s", errUsage, err, workspaceHelp())
	}
	if len(pos) < n[0] || len(pos) > n[1] {
		takes := fmt.Sprint(n[0])
		if n[1] != n[0] {
			takes = fmt.Sprintf("%d or %d", n[0], n[1])
		}
		return fmt.Errorf("%w: takes %s argument(s), got %d\n\n%s", errUsage, takes, len(pos), workspaceHelp())
	}
	flagUsed := func(name string) bool {
		used := false
		fs.Visit(func(f *flag.Flag) { used = used || f.Name == name })
		return used
	}
	for name, subs := range map[string][]string{"template": {"add"}, "json": {"list", "show"}, "yes": {"remove"}} {
		if flagUsed(name) && !slices.Contains(subs, sub) {
			return fmt.Errorf("%w: --%s does not apply to %s\n\n%s", errUsage, name, sub, workspaceHelp())
		}
	}
	// What can be checked without the data directory is checked first:
	// bad input changes nothing.
	var name, source string
	switch sub {
	case "add":
		name = pos[0]
		if len(pos) == 2 {
			if *template != "" {
				return fmt.Errorf("%w: --template makes a new repository; it does not apply to a copy of %s", errUsage, pos[1])
			}
			if source, err = localRepository(pos[1]); err != nil {
				return err
			}
		}
	case "clone":
		source = pos[0]
		if err := workspace.ValidateURL(source); err != nil {
			return err
		}
		name = repoName(source)
		if len(pos) == 2 {
			name = pos[1]
		}
		if name == "" {
			return fmt.Errorf("%w: cannot tell a workspace name from %q; give one: fetch workspace clone URL NAME", errUsage, source)
		}
	case "hosts":
		name = pos[0]
	default:
		name = strings.Join(pos, "")
	}
	if sub != "list" {
		if err := workspace.ValidateName(name); err != nil {
			return err
		}
	}
	if sub == "remove" && !*yes && !isTerminal(stdin) {
		return fmt.Errorf("%w: removing workspace %s deletes its files and history; confirm with --yes (stdin is not a terminal, so I cannot ask)", errUsage, name)
	}

	cfg, err := loadConfig(getenv)
	if err != nil {
		return err
	}
	log, red, db, err := openBase(ctx, cfg, stderr, slog.LevelWarn)
	if err != nil {
		return err
	}
	defer db.Close()
	clean := inert(red)
	// Only what makes or removes a workspace may go to, or be on, another
	// engine.
	ks, err := newKennels(ctx, cfg, db, log, sub == "add" || sub == "clone" || sub == "remove")
	if err != nil {
		return err
	}
	defer ks.release()
	engine, shipper, err := newEngine(cfg, db, log, ks, nil, false, nil)
	if err != nil {
		return err
	}
	// The agent's tools go through the same registry: a clone from the
	// configured GitHub records its repository for shipping, a deletion
	// forgets the workspace's shipping.
	ws := shippedWorkspaces{Registry: ks.workspaces, shipper: shipper, automerge: automergeSettings(cfg, db), log: log}
	audit := func(action, detail string) {
		if err := db.Audit(ctx, store.AuditEntry{Actor: "fetch workspace", Action: action, Detail: detail}); err != nil {
			log.Error("audit", "action", action, "err", err)
		}
	}

	switch sub {
	case "hosts":
		if _, err := ws.Get(ctx, name); err != nil {
			return err
		}
		return workspaceHosts(ctx, db, cfg, name, pos[1:], cfg.Harness, stdout)
	case "add", "clone":
		var info workspace.Info
		switch {
		case sub == "clone":
			info, err = ws.Clone(ctx, name, source)
		case source != "":
			info, err = ws.Copy(ctx, name, source)
		default:
			info, err = ws.Create(ctx, name, *template)
		}
		if err != nil {
			return err
		}
		what := "new repository"
		switch {
		case sub == "clone":
			what = "cloned from " + clean(source)
		case source != "":
			what = "copied from " + source + " (committed history; the original is left as it is)"
		}
		audit("workspace_"+sub, name+": "+what)
		fmt.Fprintf(stdout, "Workspace %s: %s, in %s.\n", name, what, info.Path)
		if info.Engine != "" {
			fmt.Fprintf(stdout, "It lives on engine %s.\n", info.Engine)
		}
		fmt.Fprintf(stdout, "Start a task in it with: fetch task run --workspace %s \"…\"\n", name)
	case "list":
		list, err := ws.List(ctx)
		if err != nil {
			return err
		}
		if *asJSON {
			if list == nil {
				list = []workspace.Info{}
			}
			return writeJSON(stdout, cleanInfos(list, clean))
		}
		if len(list) == 0 {
			fmt.Fprintf(stdout, "No workspaces in %s.\n%s", ks.workspaces.Root(), workspaceHint)
			return nil
		}
		tw := tabwriter.NewWriter(stdout, 0, 4, 2, ' ', 0)
		fmt.Fprintln(tw, "NAME\tTYPE\tBRANCH\tSTATE\tPATH")
		asleep := false
		for _, i := range cleanInfos(list, clean) {
			fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\n", i.Name, or(i.ProjectType, "-"), or(i.Branch, "-"), infoState(i), where(i))
			asleep = asleep || i.Asleep
		}
		tw.Flush()
		if asleep {
			fmt.Fprintln(stdout, "\"asleep\": the workspace's kennel is stopped and listing does not start it; fetch workspace show NAME reads its changes.")
		}
	case "show":
		info, err := ws.Get(ctx, name)
		if err != nil {
			return err
		}
		st, stErr := ws.Status(ctx, name)
		if *asJSON {
			out := struct {
				workspace.Info
				Status *workspace.Status `json:"status,omitempty"`
				Error  string            `json:"status_error,omitempty"`
				// Planted is what its .git holds that git would run
				// (doctor.PlantedInGit).
				Planted []string `json:"planted_in_git,omitempty"`
			}{Info: cleanInfos([]workspace.Info{info}, clean)[0]}
			if info.Path != "" && info.Engine == "" {
				found, _ := doctor.PlantedInGit(info.Path)
				for _, f := range found {
					out.Planted = append(out.Planted, clean(f))
				}
			}
			if stErr == nil {
				out.Status = &st
			} else {
				out.Error = clean(stErr.Error())
			}
			return writeJSON(stdout, out)
		}
		printWorkspace(stdout, info, st, stErr, clean)
		printProvenance(stdout, info, filepath.Join(cfg.DataDir, "repos"), clean)
		hosts, err := db.WorkspaceHosts(ctx)
		if err != nil {
			return err
		}
		printHosts(stdout, cfg, hosts[name], cfg.Harness)
	case "remove":
		info, err := ws.Get(ctx, name)
		if err != nil {
			return err
		}
		busy, err := engine.List(ctx, task.Filter{Workspace: name, States: []task.State{task.Queued, task.Running, task.WaitingInput}})
		if err != nil {
			return err
		}
		if len(busy) > 0 {
			return fmt.Errorf("workspace %s has task %s %s in it; cancel it first (fetch task cancel %s)", name, busy[0].ID, busy[0].State, busy[0].ID)
		}
		if !*yes {
			ok, err := confirm(stdin, stdout, fmt.Sprintf("Delete workspace %s (%s) and everything in it, its tasks' branches included? [y/N] ", name, where(info)))
			if err != nil {
				return err
			}
			if !ok {
				fmt.Fprintln(stdout, "Nothing was removed.")
				return &exitError{code: exitUsage}
			}
		}
		if err := ws.Delete(ctx, name); err != nil {
			return err
		}
		audit("workspace_delete", name)
		fmt.Fprintf(stdout, "Removed workspace %s.\n", name)
		if n, err := db.Unselect(ctx, name); err != nil {
			log.Error("unselect the removed workspace", "workspace", name, "err", err)
		} else if n > 0 {
			fmt.Fprintf(stdout, "It was selected in %d conversation(s); they now have no workspace selected.\n", n)
		}
	}
	return nil
}

// localRepository checks that p is a git repository on this machine (a
// work tree with .git, or a bare repository) and returns its absolute
// path, which Copy copies from.
func localRepository(p string) (string, error) {
	abs, err := filepath.Abs(p)
	if err != nil {
		return "", fmt.Errorf("%s: %w", p, err)
	}
	fi, err := os.Stat(abs)
	switch {
	case errors.Is(err, os.ErrNotExist):
		return "", fmt.Errorf("%s does not exist; give the path of a local git repository, or leave PATH out to make a new one", p)
	case err != nil:
		return "", err
	case !fi.IsDir():
		return "", fmt.Errorf("%s is not a directory; give the path of a local git repository", p)
	}
	_, errGit := os.Stat(filepath.Join(abs, ".git"))
	_, errHead := os.Stat(filepath.Join(abs, "HEAD"))
	_, errObjects := os.Stat(filepath.Join(abs, "objects"))
	if errGit != nil && (errHead != nil || errObjects != nil) {
		return "", fmt.Errorf("%s is not a git repository (no .git in it): %w; run git init there and commit first, or leave PATH out to make a new one", p, workspace.ErrNotGit)
	}
	return abs, nil
}

// repoName is the workspace name a clone URL suggests: its last path
// element without ".git"; "" when that is not a valid name.
func repoName(raw string) string {
	p := raw
	if u, err := url.Parse(raw); err == nil && strings.Contains(raw, "://") {
		p = u.Path
	} else if _, rest, ok := strings.Cut(raw, ":"); ok {
		p = rest
	}
	name := strings.TrimSuffix(path.Base(strings.TrimRight(p, "/")), ".git")
	if workspace.ValidateName(name) != nil {
		return ""
	}
	return name
}

// confirm asks a yes/no question on the terminal; only y or yes is yes.
func confirm(stdin io.Reader, stdout io.Writer, question string) (bool, error) {
	fmt.Fprint(stdout, question)
	line, err := bufio.NewReader(stdin).ReadString('\n')
	if err != nil && !errors.Is(err, io.EOF) {
		return false, err
	}
	switch strings.ToLower(strings.TrimSpace(line)) {
	case "y", "yes":
		return true, nil
	}
	return false, nil
}

// isTerminal tells whether r is a terminal, where a person can answer
// (/dev/null is a character device, not a terminal).
func isTerminal(r io.Reader) bool {
	f, ok := r.(*os.File)
	return ok && xterm.IsTerminal(int(f.Fd()))
}

// cleanInfos makes what a workspace's files and git say inert for the
// terminal (a branch name is written in the kennel).
func cleanInfos(list []workspace.Info, clean func(string) string) []workspace.Info {
	out := make([]workspace.Info, len(list))
	for i, w := range list {
		w.Branch, w.Problem = clean(w.Branch), clean(w.Problem)
		out[i] = w
	}
	return out
}

func infoState(i workspace.Info) string {
	switch {
	case i.Problem != "":
		return "unreadable: " + oneLineClip(i.Problem, 60)
	case i.Asleep:
		return "asleep"
	case i.Branch == "" && !i.Dirty:
		return "-"
	case i.Dirty:
		return "uncommitted changes"
	}
	return "clean"
}

func where(i workspace.Info) string {
	if i.Engine != "" {
		return i.Path + " (on engine " + i.Engine + ")"
	}
	return i.Path
}

// printProvenance says where a workspace's work is to be taken from, and
// what its .git holds that git on this machine would run
// (doctor.PlantedInGit).
func printProvenance(w io.Writer, info workspace.Info, repos string, clean func(string) string) {
	fmt.Fprintf(w, "\nThis folder is written by the kennel (the coding CLI): do not run git or an IDE in it.\n"+
		"Take a task's work into your own clone with fetch task apply ID [DIR], from Fetch's own repository %s\n", filepath.Join(repos, info.Name+".git"))
	if info.Path == "" || info.Engine != "" {
		return // on another engine's machine: not readable here
	}
	found, err := doctor.PlantedInGit(info.Path)
	switch {
	case err != nil:
		fmt.Fprintf(w, "Warning: its .git could not be checked: %s\n", clean(err.Error()))
	case len(found) > 0:
		fmt.Fprintf(w, "Warning: its .git holds what Fetch did not put there and git here would run: %s\n", clean(strings.Join(found, ", ")))
	}
}

func printWorkspace(w io.Writer, info workspace.Info, st workspace.Status, stErr error, clean func(string) string) {
	tw := tabwriter.NewWriter(w, 0, 4, 1, ' ', 0)
	row := func(k, v string) {
		if v != "" {
			fmt.Fprintf(tw, "%s:\t%s\n", k, v)
		}
	}
	row("Workspace", info.Name)
	row("Path", where(info))
	row("Type", info.ProjectType)
	if stErr != nil {
		row("Git", "unreadable: "+clean(stErr.Error()))
		tw.Flush()
		return
	}
	branch := clean(st.Branch)
	if st.Detached || branch == "" {
		branch = "detached HEAD"
	}
	row("Branch", branch)
	if st.Upstream != "" {
		row("Upstream", fmt.Sprintf("%s (%d ahead, %d behind)", clean(st.Upstream), st.Ahead, st.Behind))
	}
	if st.Clean() {
		row("Changes", "none")
	} else {
		row("Changes", fmt.Sprintf("%d staged, %d modified, %d untracked, %d conflicted", len(st.Staged), len(st.Modified), len(st.Untracked), len(st.Conflicted)))
	}
	if c := st.LastCommit; c != nil {
		row("Last commit", fmt.Sprintf("%.12s %s (%s)", c.Hash, oneLineClip(clean(c.Subject), 80), oneLineClip(clean(c.Author), 40)))
	} else {
		row("Last commit", "none yet")
	}
	tw.Flush()
}
