package policy

import (
	"path"
	"strings"
)

// Paths are the kennel's (Linux) paths, cleaned lexically: the policy
// never sees the kennel's file system, so a symlink inside the worktree
// that points out of it is not seen either. The kennel is the boundary
// for that; the policy decides on the path as written.

// place is where a path lies.
type place int

const (
	// unknown: the path holds an expansion, a ~user, or is relative to a
	// directory the line changed to in a way the parser cannot follow.
	unknown place = iota
	inWorktree
	// inGit: inside the worktree, under a .git directory or file.
	inGit
	outside
)

// where says where p lies, relative to each possible working directory
// (the worst answer wins).
func (a *analysis) where(w word) place {
	if w.dynamic {
		return unknown
	}
	p := w.text
	if w.tilde {
		rest, ok := strings.CutPrefix(p, "~")
		if !ok || rest != "" && rest[0] != '/' {
			return unknown // ~user
		}
		if a.ws.Home == "" {
			return outside // a home directory is never the worktree
		}
		p = a.ws.Home + rest
	}
	if w.glob {
		for _, comp := range strings.Split(p, "/") {
			if m, _ := path.Match(comp, ".."); m && comp != ".." {
				return unknown // .* may match .. in some shells
			}
		}
	}
	if path.IsAbs(p) {
		return a.placeOf(path.Clean(p))
	}
	worst := inWorktree
	for _, d := range a.dirs {
		if d == "" {
			return unknown
		}
		worst = max(worst, a.placeOf(path.Join(d, p)))
	}
	return worst
}

func (a *analysis) placeOf(clean string) place {
	wt := a.ws.Worktree
	if wt == "" || wt == "/" {
		return outside
	}
	rel, ok := strings.CutPrefix(clean, wt)
	if !ok || rel != "" && rel[0] != '/' {
		return outside
	}
	for _, comp := range strings.Split(rel, "/") {
		if comp == ".git" {
			return inGit
		}
	}
	return inWorktree
}

// relToWorktree is p relative to the worktree when it lies inside it
// (not under .git).
func relToWorktree(ws Task, p string) (string, bool) {
	a := &analysis{ws: ws, dirs: []string{dirOr(ws, "")}}
	w := word{text: p, tilde: strings.HasPrefix(p, "~")}
	if a.where(w) != inWorktree {
		return "", false
	}
	if !path.IsAbs(p) {
		p = path.Join(a.dirs[0], p)
	}
	rel := strings.TrimPrefix(strings.TrimPrefix(path.Clean(p), ws.Worktree), "/")
	if rel == "" {
		rel = "."
	}
	return rel, true
}

func dirOr(ws Task, dir string) string {
	switch {
	case dir == "":
		return ws.Worktree
	case path.IsAbs(dir):
		return path.Clean(dir)
	default:
		return path.Join(ws.Worktree, dir)
	}
}

// Credentials files, matched on the path as written (before and after ~
// is expanded), component by component, so that ../../home/u/.ssh/id_rsa,
// $HOME/.ssh/config and /proc/self/root/home/u/.aws/credentials all
// match.
var (
	// credentialDirs: everything under a directory of this name.
	credentialDirs = map[string]bool{
		".ssh": true, ".aws": true, ".gnupg": true, ".kube": true, ".azure": true,
		".password-store": true,
	}
	// credentialNames: files of this name anywhere.
	credentialNames = map[string]bool{
		".git-credentials": true, ".netrc": true, "_netrc": true, ".npmrc": true,
		".pypirc": true, ".pgpass": true, ".htpasswd": true, ".env": true,
		"id_rsa": true, "id_dsa": true, "id_ecdsa": true, "id_ed25519": true,
		"environ": false, // only under /proc: see below
	}
	// credentialExts: files with this extension anywhere.
	credentialExts = map[string]bool{".pem": true, ".key": true, ".p12": true, ".pfx": true, ".jks": true, ".keystore": true}
	// credentialSuffixes: the coding CLIs' and tools' own credentials.
	credentialSuffixes = []string{
		".config/gh/hosts.yml", ".claude/.credentials.json", ".codex/auth.json",
		".gemini/oauth_creds.json", ".docker/config.json", ".config/gcloud",
		".config/github-copilot", ".copilot/config.json", "etc/shadow", "etc/gshadow",
	}
	// envExamples: .env.example and friends hold no secrets.
	envExamples = map[string]bool{"example": true, "sample": true, "template": true, "dist": true, "defaults": true}
)

// credential says whether the text of w names a credentials file.
func credential(text string) bool {
	t := strings.ReplaceAll(strings.ReplaceAll(text, "${HOME}", "~"), "$HOME", "~")
	t = strings.TrimRight(t, "/")
	comps := strings.Split(t, "/")
	for i, comp := range comps {
		if credentialDirs[comp] {
			return true
		}
		if comp == "environ" && i >= 2 && comps[i-2] == "proc" {
			return true
		}
	}
	name := comps[len(comps)-1]
	if credentialNames[name] {
		return true
	}
	if strings.HasPrefix(name, "id_") && (strings.HasPrefix(name, "id_rsa") || strings.HasPrefix(name, "id_ed25519") || strings.HasPrefix(name, "id_ecdsa") || strings.HasPrefix(name, "id_dsa")) {
		return true
	}
	if rest, ok := strings.CutPrefix(name, ".env."); ok && !envExamples[rest] {
		return true
	}
	if ext := path.Ext(name); ext != "" && credentialExts[ext] {
		return true
	}
	for _, s := range credentialSuffixes {
		if t == s || strings.HasSuffix(t, "/"+s) || strings.Contains(t, "/"+s+"/") || strings.HasPrefix(t, s+"/") {
			return true
		}
	}
	return false
}

// argValue is the part of an argument that may be a path: the value of
// --opt=value, the value of a short option with its value attached
// (-C../x), the file of curl's @file, or the word itself.
func argValue(text string) string {
	switch {
	case strings.HasPrefix(text, "--"):
		if _, v, ok := strings.Cut(text, "="); ok {
			return v
		}
		return ""
	case strings.HasPrefix(text, "-") && strings.Contains(text, "="):
		_, v, _ := strings.Cut(text, "=") // -coverprofile=x
		return v
	case strings.HasPrefix(text, "-") && len(text) > 2:
		return text[2:]
	case strings.HasPrefix(text, "-"):
		return ""
	case strings.HasPrefix(text, "@"):
		return text[1:]
	}
	return text
}

// pathish says whether an argument value looks like a path.
func pathish(v string) bool {
	return strings.Contains(v, "/") || v == "." || v == ".." || strings.HasPrefix(v, "~")
}

// harmless are paths every command may name.
var harmless = map[string]bool{"/dev/null": true, "/dev/stdout": true, "/dev/stderr": true, "/dev/stdin": true, "-": true}
