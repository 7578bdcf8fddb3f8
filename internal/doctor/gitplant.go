package doctor

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
)

// A workspace's folder is written by the kennel: a coding CLI can plant
// in its .git what git on the host then runs with the owner's rights — a
// hook, or configuration that names a program — when the owner runs git
// status there, opens it in an IDE or fetches from it. PlantedInGit lists
// them by name (never by value) without running git: git would honour
// the planted include.path and core.fsmonitor while reading them. Every
// file is opened through os.Root, confined to the workspace, so a
// symbolic link cannot lead the check out of it.
//
// The configuration is read with a parser of git's format written here:
// no Go module in go.mod parses it, and the check needs only section,
// subsection and key names. It is conservative: a line it cannot read is
// itself a finding, so that a trick of the format hides nothing.

// maxGitConfig bounds a configuration file read (git's own are a few KiB).
const maxGitConfig = 1 << 20

// PlantedInGit lists what in the .git of the workspace at dir could run a
// program when git runs there: hooks (any file in .git/hooks but the
// samples, and core.hooksPath), configuration keys that name a program,
// include directives, and a .git that is a symbolic link or a file
// pointing elsewhere. Nothing when dir has no .git. The error is for a
// workspace that cannot be read at all.
func PlantedInGit(dir string) ([]string, error) {
	root, err := os.OpenRoot(dir)
	if err != nil {
		return nil, err
	}
	defer root.Close()
	fi, err := root.Lstat(".git")
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return nil, nil
	case err != nil:
		return nil, err
	case fi.Mode()&fs.ModeSymlink != 0:
		return []string{".git is a symbolic link (git would read a repository outside the workspace)"}, nil
	case fi.Mode().IsRegular():
		return []string{".git is a file (gitdir: git would read a repository elsewhere)"}, nil
	case !fi.IsDir():
		return []string{".git is not a directory"}, nil
	}
	git, err := root.OpenRoot(".git")
	if err != nil {
		return nil, err
	}
	defer git.Close()
	var found []string
	found = append(found, plantedHooks(git)...)
	for _, name := range []string{"config", "config.worktree"} {
		found = append(found, plantedConfig(git, name)...)
	}
	if _, err := git.Lstat("commondir"); !errors.Is(err, fs.ErrNotExist) {
		found = append(found, ".git/commondir (git would read another repository's configuration)")
	}
	return found, nil
}

// plantedHooks lists the hooks git would run: every entry of .git/hooks
// but *.sample that is an executable file or a symbolic link.
func plantedHooks(git *os.Root) []string {
	fi, err := git.Lstat("hooks")
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return []string{".git/hooks (unreadable: " + errText(err) + ")"}
	}
	if fi.Mode()&fs.ModeSymlink != 0 {
		return []string{".git/hooks is a symbolic link"}
	}
	if !fi.IsDir() {
		return nil
	}
	d, err := git.Open("hooks")
	if err != nil {
		return []string{".git/hooks (unreadable: " + errText(err) + ")"}
	}
	defer d.Close()
	entries, err := d.ReadDir(-1)
	if err != nil {
		return []string{".git/hooks (unreadable: " + errText(err) + ")"}
	}
	var out []string
	for _, e := range entries {
		if strings.HasSuffix(e.Name(), ".sample") {
			continue
		}
		info, err := e.Info()
		if err != nil {
			continue
		}
		switch m := info.Mode(); {
		case m&fs.ModeSymlink != 0:
			out = append(out, "hook "+e.Name()+" (a symbolic link)")
		case m.IsRegular() && m&0o111 != 0:
			out = append(out, "hook "+e.Name())
		}
	}
	sort.Strings(out)
	return out
}

// plantedConfig lists the keys of .git/NAME that run programs.
func plantedConfig(git *os.Root, name string) []string {
	where := ".git/" + name
	fi, err := git.Lstat(name)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return nil
	case err != nil:
		return []string{where + " (unreadable: " + errText(err) + ")"}
	case !fi.Mode().IsRegular():
		return []string{where + " is not a regular file"}
	}
	f, err := git.Open(name)
	if err != nil {
		return []string{where + " (unreadable: " + errText(err) + ")"}
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, maxGitConfig+1))
	if err != nil {
		return []string{where + " (unreadable: " + errText(err) + ")"}
	}
	if len(data) > maxGitConfig {
		return []string{where + " is larger than 1 MiB (not read)"}
	}
	entries, bad := parseGitConfig(string(data))
	seen := map[string]bool{}
	var out []string
	for _, e := range entries {
		if why := runsProgram(e); why != "" && !seen[e.name()] {
			seen[e.name()] = true
			out = append(out, e.name()+" ("+why+")")
		}
	}
	for _, line := range bad {
		out = append(out, fmt.Sprintf("%s line %d (not read: a trick of the format could hide a key)", where, line))
	}
	return out
}

// configEntry is one key of a git configuration file: section and key
// lower-cased (git's names are case-insensitive), the subsection as
// written.
type configEntry struct {
	section, subsection, key, value string
	hasSub                          bool
}

// name is the key as git config names it: section[.subsection].key.
func (e configEntry) name() string {
	if e.hasSub {
		return e.section + "." + e.subsection + "." + e.key
	}
	return e.section + "." + e.key
}

// runsProgram says why a key makes git run a program (or read a file that
// could), "" when it does not.
func runsProgram(e configEntry) string {
	const runs = "runs a program"
	switch e.section + "." + e.key {
	case "core.fsmonitor":
		if v := strings.ToLower(strings.TrimSpace(e.value)); v == "false" || v == "no" || v == "off" || v == "0" || v == "" {
			return ""
		}
		return runs
	case "core.hookspath":
		return "hooks from another folder"
	case "core.pager", "core.editor", "core.sshcommand", "core.askpass", "core.gitproxy", "core.alternaterefscommand",
		"diff.external", "sequence.editor", "gpg.program", "uploadpack.packobjectshook", "credential.helper",
		"web.browser", "sendemail.sendmailcmd", "sendemail.smtpserver", "gpg.ssh.defaultkeycommand":
		return runs
	case "include.path", "includeif.path":
		return "reads another configuration file"
	}
	if e.hasSub {
		switch e.section + ".*." + e.key {
		case "diff.*.textconv", "diff.*.command", "filter.*.clean", "filter.*.smudge", "filter.*.process",
			"merge.*.driver", "mergetool.*.cmd", "difftool.*.cmd", "remote.*.uploadpack", "remote.*.receivepack",
			"credential.*.helper", "gpg.*.program", "browser.*.cmd", "browser.*.path", "man.*.cmd", "man.*.path",
			"tar.*.command", "trailer.*.command", "trailer.*.cmd", "remote.*.vcs":
			return runs
		case "includeif.*.path":
			return "reads another configuration file"
		case "protocol.*.allow":
			if strings.EqualFold(e.subsection, "ext") {
				return "allows the ext:: transport, which runs a program"
			}
		case "submodule.*.update":
			if strings.HasPrefix(strings.TrimSpace(e.value), "!") {
				return runs
			}
		}
	}
	switch e.section {
	case "alias":
		if strings.HasPrefix(strings.TrimSpace(e.value), "!") {
			return "an alias that runs a shell command"
		}
	case "pager":
		return runs
	}
	return ""
}

// parseGitConfig reads git's configuration format: [section],
// [section "subsection"] and the legacy [section.subsection] headers (a
// key may follow a header on its line), name = value and bare name
// lines, values with quotes, escapes, comments and continuation lines.
// bad are the lines (1-based) it could not read.
func parseGitConfig(s string) (entries []configEntry, bad []int) {
	var cur configEntry
	inSection := false
	lines := strings.Split(s, "\n")
	for i := 0; i < len(lines); i++ {
		lineNo := i + 1
		line := strings.TrimRight(lines[i], "\r")
		rest := strings.TrimLeft(line, " \t")
		if rest == "" || rest[0] == '#' || rest[0] == ';' {
			continue
		}
		if rest[0] == '[' {
			sec, sub, hasSub, after, ok := parseSectionHeader(rest)
			if !ok {
				bad = append(bad, lineNo)
				inSection = false
				continue
			}
			cur = configEntry{section: sec, subsection: sub, hasSub: hasSub}
			inSection = true
			rest = strings.TrimLeft(after, " \t")
			if rest == "" || rest[0] == '#' || rest[0] == ';' {
				continue
			}
		}
		if !inSection {
			bad = append(bad, lineNo)
			continue
		}
		key, after, ok := parseKey(rest)
		if !ok {
			bad = append(bad, lineNo)
			continue
		}
		e := cur
		e.key = key
		after = strings.TrimLeft(after, " \t")
		switch {
		case after == "" || after[0] == '#' || after[0] == ';':
			e.value = "true"
		case after[0] == '=':
			value, used, ok := parseValue(after[1:], lines[i+1:])
			if !ok {
				bad = append(bad, lineNo)
				i += used
				continue
			}
			e.value = value
			i += used
		default:
			bad = append(bad, lineNo)
			continue
		}
		entries = append(entries, e)
	}
	return entries, bad
}

// parseSectionHeader reads "[name]", `[name "sub"]` or "[name.sub]" and
// returns what follows the closing bracket.
func parseSectionHeader(s string) (section, sub string, hasSub bool, after string, ok bool) {
	i := 1
	for i < len(s) && (isAlnum(s[i]) || s[i] == '-' || s[i] == '.') {
		i++
	}
	name := s[1:i]
	if name == "" {
		return "", "", false, "", false
	}
	if i < len(s) && s[i] == ']' {
		if dot := strings.IndexByte(name, '.'); dot >= 0 {
			// Legacy [section.subsection]: the subsection is lower-cased.
			return strings.ToLower(name[:dot]), strings.ToLower(name[dot+1:]), true, s[i+1:], dot > 0
		}
		return strings.ToLower(name), "", false, s[i+1:], true
	}
	if strings.Contains(name, ".") || i >= len(s) || (s[i] != ' ' && s[i] != '\t') {
		return "", "", false, "", false
	}
	for i < len(s) && (s[i] == ' ' || s[i] == '\t') {
		i++
	}
	if i >= len(s) || s[i] != '"' {
		return "", "", false, "", false
	}
	i++
	var b strings.Builder
	for ; i < len(s); i++ {
		switch c := s[i]; c {
		case '\\':
			if i+1 >= len(s) {
				return "", "", false, "", false
			}
			i++
			b.WriteByte(s[i])
		case '"':
			if i+1 >= len(s) || s[i+1] != ']' {
				return "", "", false, "", false
			}
			return strings.ToLower(name), b.String(), true, s[i+2:], true
		default:
			b.WriteByte(c)
		}
	}
	return "", "", false, "", false
}

// parseKey reads a key name: a letter, then letters, digits and '-'.
func parseKey(s string) (key, after string, ok bool) {
	if s == "" || !isAlpha(s[0]) {
		return "", "", false
	}
	i := 1
	for i < len(s) && (isAlnum(s[i]) || s[i] == '-') {
		i++
	}
	return strings.ToLower(s[:i]), s[i:], true
}

// parseValue reads a value that starts in s and may continue on the
// lines after (a backslash at the end of a line); used is how many of
// them it took.
func parseValue(s string, next []string) (value string, used int, ok bool) {
	var b strings.Builder
	quoted := false
	for {
		s = strings.TrimRight(s, "\r")
		for i := 0; i < len(s); i++ {
			switch c := s[i]; {
			case c == '"':
				quoted = !quoted
			case c == '\\':
				if i+1 == len(s) {
					goto continued
				}
				i++
				switch s[i] {
				case 'n':
					b.WriteByte('\n')
				case 't':
					b.WriteByte('\t')
				case 'b':
					b.WriteByte('\b')
				case '\\', '"':
					b.WriteByte(s[i])
				default:
					return "", used, false
				}
			case (c == '#' || c == ';') && !quoted:
				return strings.TrimSpace(b.String()), used, true
			default:
				b.WriteByte(c)
			}
		}
		if quoted {
			return "", used, false
		}
		return strings.TrimSpace(b.String()), used, true
	continued:
		if used >= len(next) {
			return "", used, false
		}
		s = next[used]
		used++
	}
}

func isAlpha(c byte) bool { return 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' }
func isAlnum(c byte) bool { return isAlpha(c) || '0' <= c && c <= '9' }

// WorkspaceGitChecks checks the .git of every workspace under root
// (PlantedInGit): a warning per workspace that holds something, naming
// it, with how to take the work without running git there (from Fetch's
// own repository of the workspace under repos); one ok line otherwise.
func WorkspaceGitChecks(root, repos string) []Check {
	entries, err := os.ReadDir(root)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return []Check{{Name: "workspace git", Status: Warn, Detail: "cannot list " + root + ": " + errText(err), Fix: "make " + root + " readable by Fetch"}}
	}
	var out []Check
	n := 0
	for _, e := range entries {
		if !e.IsDir() || strings.HasPrefix(e.Name(), ".") {
			continue
		}
		n++
		found, err := PlantedInGit(filepath.Join(root, e.Name()))
		switch {
		case err != nil:
			out = append(out, Check{Name: "workspace " + e.Name(), Status: Warn, Detail: "its .git cannot be checked: " + errText(err)})
		case len(found) > 0:
			out = append(out, Check{Name: "workspace " + e.Name(), Status: Warn,
				Detail: "its .git holds what Fetch did not put there and git on this machine would run (git status, an IDE, git fetch from it): " + strings.Join(found, ", "),
				Fix:    PlantedFix(e.Name(), repos)})
		}
	}
	if len(out) == 0 && n > 0 {
		out = append(out, Check{Name: "workspace git", Status: OK, Detail: fmt.Sprintf("%d workspace(s): no hooks or code-running configuration in their .git", n)})
	}
	return out
}

// PlantedFix is what to do about a workspace whose .git holds planted
// code: run no git there, and take the work from Fetch's own repository.
func PlantedFix(name, repos string) string {
	return fmt.Sprintf("do not run git (or an IDE) in that folder, which the kennel writes; take the work from Fetch's own repository: git fetch %s fetch/ID", filepath.Join(repos, name+".git"))
}
