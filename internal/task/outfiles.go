package task

import (
	"bytes"
	"context"
	"database/sql"
	"errors"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"unicode/utf8"

	"github.com/fetch-dev/fetch/harness"
	"github.com/fetch-dev/fetch/internal/redact"
	"github.com/fetch-dev/fetch/internal/store"
	"github.com/fetch-dev/fetch/internal/workspace"
)

// Files back: a CLI sends files to the owner by writing them to its
// worktree's out folder (harness.OutDir, which the worktree's exclude
// keeps off the branch). When a run ends (not when it asks a question:
// the folder then waits for the run that ends), one exec in the kennel
// takes the folder's regular files and empties it (workspace.TakeOut:
// no symlink followed, bounded count and size), so the next run's result
// does not send them again. Each file is scanned for secrets as text
// (binary files too, as the work's binary files are); one with a finding
// is neither kept nor sent, and the result says which and why. The others
// are kept under Config.OutDir (0600), listed in task_out_files, and go
// with the end's update to the result (Task.Out).

// outFilesTable lists the files taken.
const outFilesTable = "task_out_files"

// Bounds of the files one result takes.
const (
	// DefaultOutMaxFiles: Discord's attachments per message.
	DefaultOutMaxFiles = 10
	// DefaultOutMaxBytes: Discord's upload limit without a boost.
	DefaultOutMaxBytes = 8 << 20
)

// OutFile is a file a run's CLI left for the owner, or one it left that
// is not sent (Skipped says why).
type OutFile struct {
	Name string `json:"name"`
	// Run is the task's run that left it.
	Run  int   `json:"run"`
	Size int64 `json:"size"`
	// MediaType is what it holds: an image type for a PNG, JPEG, GIF or
	// WebP picture, text/plain for text, application/octet-stream
	// otherwise (never SVG or HTML: their content decides nothing).
	MediaType string `json:"media_type,omitempty"`
	// Skipped: why it is not sent (a symlink, too large, secrets).
	Skipped string `json:"skipped,omitempty"`
	// Path is where Fetch keeps it; empty when it is not kept.
	Path string `json:"-"`
	// Data is its content, in the update that tells the end of the run
	// that left it.
	Data []byte `json:"-"`
}

// IsImage reports whether the file is a picture a chat shows inline.
func (f OutFile) IsImage() bool {
	return harness.Attachment{MediaType: f.MediaType}.IsImage()
}

// outLimits are the bounds of the files one result takes.
func (e *Engine) outLimits() workspace.OutLimits {
	l := workspace.OutLimits{Files: e.cfg.OutMaxFiles, Bytes: e.cfg.OutMaxBytes}
	if l.Files <= 0 {
		l.Files = DefaultOutMaxFiles
	}
	if l.Bytes <= 0 {
		l.Bytes = DefaultOutMaxBytes
	}
	l.Total = l.Bytes * int64(l.Files) // TakeOut holds it to one exec's output
	return l
}

// takeOut takes the files t's run left in its out folder (see above) into
// t.Out. A failure leaves t.Out empty and is logged: the result goes
// without them.
func (e *Engine) takeOut(ctx context.Context, t *Task) {
	if e.cfg.OutDir == "" || t.Mode != Work || t.Worktree == "" || t.Base == "" {
		return
	}
	files, err := e.cfg.Workspaces.TakeOut(ctx, t.worktree(), harness.OutDir, e.outLimits())
	if err != nil {
		e.log.Warn("take the files the run left for the owner", "task", t.ID, "err", err)
		if len(files) == 0 {
			return
		}
	}
	t.Out = e.keepTaken(ctx, *t, files)
}

// keepTaken scans, keeps and records the files t's run left (taken from
// the kennel), and returns them as the result sends them.
func (e *Engine) keepTaken(ctx context.Context, t Task, files []workspace.OutFile) []OutFile {
	out := make([]OutFile, 0, len(files))
	for _, f := range files {
		o := OutFile{Name: f.Name, Run: t.Runs, Size: int64(len(f.Data)), Skipped: f.Skipped}
		if o.Skipped == "" {
			o.MediaType, o.Skipped = mediaType(f.Data), e.scanOut(f.Name, f.Data)
		}
		if o.Skipped == "" {
			o.Data = f.Data
			var err error
			if o.Path, err = e.keepOut(t, f.Name, f.Data); err != nil {
				e.log.Error("keep a file the run left for the owner", "task", t.ID, "file", f.Name, "err", err)
				o.Path = ""
			}
		}
		if o.Skipped != "" {
			o.Size = 0
		}
		out = append(out, o)
	}
	if err := e.recordOut(ctx, t.ID, out); err != nil {
		e.log.Error("record the files the run left for the owner", "task", t.ID, "err", err)
	}
	return out
}

// scanOut says why a file is not sent for what it holds: a name or
// content with what look like secrets ("" when none). The content is
// scanned as text, binary or not.
func (e *Engine) scanOut(name string, data []byte) string {
	if e.store.Scrub(name) != name {
		return "its name holds what looks like a secret"
	}
	if e.cfg.Secrets == nil {
		return ""
	}
	found := e.cfg.Secrets.Find(string(data))
	if len(found) == 0 {
		return ""
	}
	fs := make([]redact.PatchFinding, len(found))
	for i, f := range found {
		fs[i] = redact.PatchFinding{Path: name, Line: f.Line, Rule: f.Rule}
	}
	return "it holds what look like secrets: " + redact.DescribeFindings(fs, maxNamedFindings)
}

// keepOut writes a file under Config.OutDir/ID/RUN and returns its path.
func (e *Engine) keepOut(t Task, name string, data []byte) (string, error) {
	if name != filepath.Base(name) || name == "." || name == ".." {
		return "", fmt.Errorf("invalid name %q", name)
	}
	dir := filepath.Join(e.cfg.OutDir, t.ID, strconv.Itoa(t.Runs))
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return "", err
	}
	p := filepath.Join(dir, name)
	if err := os.WriteFile(p, data, 0o600); err != nil {
		return "", err
	}
	return p, nil
}

// recordOut lists a run's files in the store.
func (e *Engine) recordOut(ctx context.Context, id string, out []OutFile) error {
	if len(out) == 0 {
		return nil
	}
	now := store.FormatTime(e.now())
	return e.tx(ctx, func(tx *sql.Tx) error {
		for _, f := range out {
			if _, err := tx.ExecContext(ctx, "INSERT INTO "+outFilesTable+" (task_id, run, name, size, media_type, path, skipped, created_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
				id, f.Run, f.Name, f.Size, f.MediaType, f.Path, f.Skipped, now); err != nil {
				return err
			}
		}
		return nil
	})
}

// OutFiles lists the files task id's runs left for the owner, oldest
// first, without their data (OutFileData reads one).
func (e *Engine) OutFiles(ctx context.Context, id string) ([]OutFile, error) {
	rows, err := e.db.QueryContext(ctx, "SELECT run, name, size, media_type, path, skipped FROM "+outFilesTable+" WHERE task_id = ? ORDER BY id", id)
	if err != nil {
		return nil, fmt.Errorf("task %s: out files: %w", id, err)
	}
	defer rows.Close()
	var out []OutFile
	for rows.Next() {
		var f OutFile
		if err := rows.Scan(&f.Run, &f.Name, &f.Size, &f.MediaType, &f.Path, &f.Skipped); err != nil {
			return nil, fmt.Errorf("task %s: out files: %w", id, err)
		}
		out = append(out, f)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("task %s: out files: %w", id, err)
	}
	return out, nil
}

// OutFileData reads the file name that run of task id left, as kept:
// ErrNotFound when there is none, or it was not kept.
func (e *Engine) OutFileData(ctx context.Context, id string, run int, name string) (OutFile, error) {
	files, err := e.OutFiles(ctx, id)
	if err != nil {
		return OutFile{}, err
	}
	for _, f := range files {
		if f.Run != run || f.Name != name || f.Path == "" {
			continue
		}
		data, err := os.ReadFile(f.Path)
		if errors.Is(err, os.ErrNotExist) {
			break
		}
		if err != nil {
			return OutFile{}, fmt.Errorf("task %s: out file %s: %w", id, name, err)
		}
		f.Data = data
		return f, nil
	}
	return OutFile{}, fmt.Errorf("task %s: out file %s of run %d: %w", id, name, run, ErrNotFound)
}

// withOut sets t.Out to the files t's last run left, with their data,
// for a retold end.
func (e *Engine) withOut(ctx context.Context, t *Task) {
	files, err := e.OutFiles(ctx, t.ID)
	if err != nil {
		e.log.Warn("read the files the run left for the owner", "task", t.ID, "err", err)
		return
	}
	t.Out = nil
	for _, f := range files {
		if f.Run != t.Runs {
			continue
		}
		if f.Path != "" {
			data, err := os.ReadFile(f.Path)
			if err != nil {
				e.log.Warn("read a file the run left for the owner", "task", t.ID, "file", f.Name, "err", err)
				continue
			}
			f.Data = data
		}
		t.Out = append(t.Out, f)
	}
}

// mediaType is what data holds, by its content: the picture types a chat
// shows inline, text, or application/octet-stream. SVG, HTML and the like
// are text (never an image: a picture that runs script).
func mediaType(data []byte) string {
	switch sniff := http.DetectContentType(data); sniff {
	case "image/png", "image/jpeg", "image/gif", "image/webp":
		return sniff
	}
	if utf8.Valid(data) && bytes.IndexByte(data, 0) < 0 {
		return "text/plain; charset=utf-8"
	}
	return "application/octet-stream"
}
