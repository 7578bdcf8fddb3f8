package task

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/fetch-dev/fetch/harness"
	"github.com/fetch-dev/fetch/kennel"
	"github.com/fetch-dev/fetch/kennel/shim"
)

// Attachment is a file the owner gave a task (a screenshot in Discord,
// fetch task run --attach): Fetch keeps it in its data directory (File),
// writes it into the kennel when the run that takes it starts, and the CLI
// gets it in its protocol's form (harness.Attachment).
type Attachment struct {
	// Name is the file's clean base name.
	Name      string `json:"name"`
	MediaType string `json:"media_type"`
	Size      int64  `json:"size"`
	// File is where Fetch keeps it.
	File string `json:"file"`
}

// maxAttachments bounds the files of one run.
const maxAttachments = 10

func attachmentsJSON(atts []Attachment) string {
	b, _ := json.Marshal(orEmpty(atts))
	return string(b)
}

// checkAttachments refuses attachments that are not Fetch's own files.
func checkAttachments(atts []Attachment) error {
	if len(atts) > maxAttachments {
		return fmt.Errorf("%d files; at most %d go with one message: %w", len(atts), maxAttachments, ErrInvalid)
	}
	for _, a := range atts {
		if a.Name == "" || a.Name != filepath.Base(a.Name) || strings.HasPrefix(a.Name, ".") || !filepath.IsAbs(a.File) {
			return fmt.Errorf("attachment %q: not a file Fetch keeps: %w", a.Name, ErrInvalid)
		}
	}
	return nil
}

// attachDir is where a run's attachments go in the kennel: the
// workspace's .fetch/in (kept out of git like the rest of .fetch/), one
// folder per run.
func attachDir(wsPath string) string {
	return filepath.Join(wsPath, filepath.FromSlash(harness.AttachDir))
}

// filePutter is a runner that writes files into the kennel (KennelRunner).
type filePutter interface {
	PutFile(ctx context.Context, workspace, root, rel string, data []byte) error
}

// PutFile writes data to root/rel in workspace's kennel (fetch-shim put,
// the content on the exec's stdin).
func (r *KennelRunner) PutFile(ctx context.Context, workspace, root, rel string, data []byte) error {
	var stderr strings.Builder
	res, err := r.Kennel.Exec(ctx, kennel.ExecSpec{Workspace: workspace, Argv: shim.PutArgv(root, rel), Stdin: bytes.NewReader(data), Timeout: time.Minute},
		func(s kennel.Stream, line []byte) {
			if s == kennel.Stderr && stderr.Len() < 2048 {
				stderr.Write(line)
				stderr.WriteByte('\n')
			}
		})
	if err != nil {
		return fmt.Errorf("put %s: %w", rel, err)
	}
	if res.ExitCode != 0 {
		return fmt.Errorf("put %s: exit %d: %s", rel, res.ExitCode, strings.TrimSpace(stderr.String()))
	}
	return nil
}

// giveAttachments writes t's attachments into its kennel for the run
// about to start and returns them as the harness gives them to the CLI
// (images also inline).
func (e *Engine) giveAttachments(ctx context.Context, t Task, wsPath string) ([]harness.Attachment, error) {
	if len(t.Attachments) == 0 {
		return nil, nil
	}
	p, ok := e.cfg.Runner.(filePutter)
	if !ok {
		return nil, fmt.Errorf("this Fetch cannot write files into the kennel")
	}
	root := attachDir(wsPath)
	var out []harness.Attachment
	for _, a := range t.Attachments {
		data, err := os.ReadFile(a.File)
		if err != nil {
			return nil, fmt.Errorf("read %s: %w", a.Name, err)
		}
		rel := filepath.Join(t.RunID, a.Name)
		if err := p.PutFile(ctx, wsPath, root, rel, data); err != nil {
			return nil, err
		}
		h := harness.Attachment{Name: a.Name, MediaType: a.MediaType, Path: filepath.Join(root, rel)}
		if h.IsImage() {
			h.Data = data
		}
		out = append(out, h)
	}
	return out, nil
}
