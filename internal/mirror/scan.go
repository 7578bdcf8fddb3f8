package mirror

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/fetch-dev/fetch/internal/redact"
)

// Finding is a secret in a commit of a range: the commit (short hash),
// where in it (a file's added line, the message, the author, the
// committer, another header), the line, the rule. It never holds the
// secret.
type Finding = redact.PatchFinding

// shortHash is the length of a commit's name in a Finding.
const shortHash = 12

// scanLog prints, for every commit of a range, a line commitMark+HASH
// and then the lines the commit adds over its first parent (a root
// commit: over nothing), binary files as text, with no textconv, no
// external diff, no renames. No line of a patch starts with a NUL (each
// line git prints there starts with a letter, a sign, '@' or '\'; paths
// with a control character are quoted), so commitMark at a line's start
// is the log's own.
var scanLog = []string{
	"log", "--no-show-signature", "--reverse", "--root", "--diff-merges=first-parent",
	"--patch", "--unified=0", "--text", "--no-ext-diff", "--no-textconv", "--no-color", "--no-renames",
	"--src-prefix=a/", "--dst-prefix=b/", "--format=" + commitMarkFormat + "%H",
}

const (
	commitMark       = "\x00fetch-scan "
	commitMarkFormat = "%x00fetch-scan "
)

// Scan looks for secrets in every commit of from..to (full refs or
// commits of the workspace's mirror): the lines each adds over its first
// parent, binary files read as text; its message; its author, committer
// and other headers. The findings name commit, place, line and rule, in
// the order of the commits. Work too large to be scanned whole is not
// scanned in part: an error wrapping ErrScanIncomplete (and ErrTooLarge).
func (m *Mirror) Scan(ctx context.Context, ws, from, to string) ([]Finding, error) {
	op := "mirror: scan"
	if m.cfg.Secrets == nil {
		return nil, fmt.Errorf("%s: no secret finder configured: %w", op, ErrInvalid)
	}
	if err := errors.Join(checkName(ws), checkRev(from), checkRev(to)); err != nil {
		return nil, fmt.Errorf("%s: %w", op, err)
	}
	unlock, err := m.lock(ctx, ws)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", op, err)
	}
	defer unlock()
	dir, err := m.existing(ws)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", op, err)
	}
	fromSHA, err := m.resolve(ctx, dir, from)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", op, err)
	}
	toSHA, err := m.resolve(ctx, dir, to)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", op, err)
	}
	found, err := m.scan(ctx, dir, nil, fromSHA, toSHA)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", op, err)
	}
	return found, nil
}

// Scan looks for secrets in every commit the staged branch has over its
// base, as Mirror.Scan does, reading the quarantine's objects with the
// mirror's: for the caller to decide between Land and Drop.
func (s *Staged) Scan(ctx context.Context) ([]Finding, error) {
	op := "mirror: scan " + s.branch
	if s.m.cfg.Secrets == nil {
		return nil, fmt.Errorf("%s: no secret finder configured: %w", op, ErrInvalid)
	}
	if s.base == "" {
		return nil, fmt.Errorf("%s: staged without a base: %w", op, ErrInvalid)
	}
	found, err := s.m.scan(ctx, s.dir, s.env(), s.base, s.tip)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", op, err)
	}
	return found, nil
}

// scan scans every commit of from..to (full object names) in dir, with
// env (a quarantine's) added to git's: by two git commands, the log of
// the commits' patches, then cat-file of their objects.
func (m *Mirror) scan(ctx context.Context, dir string, env []string, from, to string) ([]Finding, error) {
	if from == to {
		return nil, nil
	}
	limit := m.cfg.MaxScan
	log, err := m.hostGit(ctx, hostCmd{gitDir: dir, env: env, max: limit, args: append(slices.Clone(scanLog), from+".."+to, "--")})
	if errors.Is(err, ErrTooLarge) {
		return nil, fmt.Errorf("the commits' patches are over %d bytes: %w (%w)", limit, ErrScanIncomplete, err)
	}
	if err != nil {
		return nil, err
	}
	commits, err := splitScanLog(log)
	if err != nil {
		return nil, err
	}
	if len(commits) == 0 {
		return nil, nil
	}
	var in strings.Builder
	for _, c := range commits {
		in.WriteString(c.id + "\n")
	}
	objs, err := m.hostGit(ctx, hostCmd{gitDir: dir, env: env, max: limit, stdin: strings.NewReader(in.String()), args: []string{"cat-file", "--batch"}})
	if errors.Is(err, ErrTooLarge) {
		return nil, fmt.Errorf("the commits' objects are over %d bytes: %w (%w)", limit, ErrScanIncomplete, err)
	}
	if err != nil {
		return nil, err
	}
	find := m.cfg.Secrets.Find
	var found []Finding
	for _, c := range commits {
		var obj string
		if obj, objs, err = nextCommitObject(objs, c.id); err != nil {
			return nil, err
		}
		short := c.id[:shortHash]
		found = append(found, redact.FindInCommit(find, short, obj)...)
		for _, f := range redact.FindInPatch(find, c.patch) {
			f.Commit = short
			found = append(found, f)
		}
	}
	return found, nil
}

// loggedCommit is one commit of scanLog's output: its name and patch.
type loggedCommit struct{ id, patch string }

// splitScanLog splits scanLog's output into its commits.
func splitScanLog(log string) ([]loggedCommit, error) {
	if log == "" {
		return nil, nil
	}
	rest, ok := strings.CutPrefix(log, commitMark)
	if !ok {
		return nil, fmt.Errorf("git log: output starts with %.40q, not a commit", log)
	}
	var out []loggedCommit
	for _, rec := range strings.Split(rest, "\n"+commitMark) {
		id, patch, _ := strings.Cut(rec, "\n")
		if checkSHA(id) != nil {
			return nil, fmt.Errorf("git log: odd commit name %.80q", id)
		}
		out = append(out, loggedCommit{id: id, patch: patch})
	}
	return out, nil
}

// nextCommitObject reads the object of commit id at the start of what
// `git cat-file --batch` printed ("ID commit SIZE\n", SIZE bytes, "\n"),
// and returns it and the rest.
func nextCommitObject(out, id string) (obj, rest string, err error) {
	line, rest, ok := strings.Cut(out, "\n")
	fields := strings.Fields(line)
	if !ok || len(fields) != 3 || fields[0] != id || fields[1] != "commit" {
		return "", "", fmt.Errorf("git cat-file: %.100q for commit %s", line, id)
	}
	size, err := strconv.Atoi(fields[2])
	if err != nil || size < 0 || size >= len(rest) || rest[size] != '\n' {
		return "", "", fmt.Errorf("git cat-file: commit %s: size %q does not fit its output", id, fields[2])
	}
	return rest[:size], rest[size+1:], nil
}
