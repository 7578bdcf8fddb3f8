package workspace

import (
	"archive/tar"
	"context"
	"database/sql"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/fetch-dev/fetch/internal/store"
	"github.com/fetch-dev/fetch/kennel"
)

// Placement is where workspaces live. A workspace on the local engine is a
// directory under the root, bind-mounted into its kennel; one placed on
// another engine is a volume there (kennel.Config.Volumes), mounted at the
// same path, and nothing of it is on this machine: the registry reaches it
// only through its kennel. Placements are in the database
// (workspace_engines) and cached here.
type Placement struct {
	db *sql.DB
	// Choose picks the engine of a new workspace ("" for the local one).
	choose func(ctx context.Context) (string, error)

	mu    sync.Mutex
	cache map[string]string // name → engine ("" local)
}

// NewPlacement reads and records placements in db; choose picks the engine
// of each new workspace ("" for the local one; nil always picks it).
func NewPlacement(db *store.DB, choose func(ctx context.Context) (string, error)) *Placement {
	return &Placement{db: db.SQL(), choose: choose, cache: map[string]string{}}
}

// Engine returns the engine of a workspace, "" when it is local.
func (p *Placement) Engine(ctx context.Context, name string) (string, error) {
	p.mu.Lock()
	e, ok := p.cache[name]
	p.mu.Unlock()
	if ok {
		return e, nil
	}
	err := p.db.QueryRowContext(ctx, `SELECT engine FROM workspace_engines WHERE workspace = ?`, name).Scan(&e)
	if errors.Is(err, sql.ErrNoRows) {
		return "", nil // not cached: another process may place it
	}
	if err != nil {
		return "", fmt.Errorf("workspace: placement of %s: %w", name, err)
	}
	p.mu.Lock()
	p.cache[name] = e
	p.mu.Unlock()
	return e, nil
}

func (p *Placement) place(ctx context.Context, name, engine string) error {
	_, err := p.db.ExecContext(ctx, `INSERT INTO workspace_engines (workspace, engine, created_at) VALUES (?, ?, ?)`, name, engine, store.FormatTime(time.Now()))
	if err != nil {
		return fmt.Errorf("workspace: place %s on %s: %w", name, engine, err)
	}
	p.mu.Lock()
	p.cache[name] = engine
	p.mu.Unlock()
	return nil
}

func (p *Placement) unplace(ctx context.Context, name string) error {
	if _, err := p.db.ExecContext(ctx, `DELETE FROM workspace_engines WHERE workspace = ?`, name); err != nil {
		return fmt.Errorf("workspace: unplace %s: %w", name, err)
	}
	p.mu.Lock()
	delete(p.cache, name)
	p.mu.Unlock()
	return nil
}

// remote lists the workspaces placed on other engines, by name.
func (p *Placement) remote(ctx context.Context) (map[string]string, error) {
	rows, err := p.db.QueryContext(ctx, `SELECT workspace, engine FROM workspace_engines`)
	if err != nil {
		return nil, fmt.Errorf("workspace: placements: %w", err)
	}
	defer rows.Close()
	out := map[string]string{}
	for rows.Next() {
		var n, e string
		if err := rows.Scan(&n, &e); err != nil {
			return nil, err
		}
		out[n] = e
	}
	return out, rows.Err()
}

// Placed makes the registry keep new workspaces where p chooses and find
// placed ones. Call it before using the registry.
func (r *Registry) Placed(p *Placement) *Registry {
	r.placement = p
	return r
}

// engineOf is a workspace's engine, "" when it is local (or no placement
// is configured).
func (r *Registry) engineOf(ctx context.Context, name string) (string, error) {
	if r.placement == nil {
		return "", nil
	}
	return r.placement.Engine(ctx, name)
}

// EngineOf is the engine of the workspace at path (a workspace's path under
// the root), "" for the local engine: what a kennel.Pool routes by.
func (r *Registry) EngineOf(path string) string {
	if r.placement == nil || filepath.Dir(path) != r.root {
		return ""
	}
	if _, err := os.Lstat(path); err == nil {
		return "" // a directory here: local (a placed name never has one)
	}
	e, err := r.engineOf(context.Background(), filepath.Base(path))
	if err != nil {
		r.log.Warn("workspace: placement", "path", path, "err", err)
	}
	return e
}

// Local tells whether a workspace is a directory on this machine (not a
// volume on another engine): only then may the host read its files.
func (r *Registry) Local(ctx context.Context, name string) bool {
	e, err := r.engineOf(ctx, name)
	return err == nil && e == ""
}

// maxUpload bounds the tree a new workspace uploads to its engine.
const maxUpload = 2 << 30

// upload puts the workspace built in dir into its volume on its engine,
// through its kennel (a tar stream into an exec), and records the
// placement. The volume must be new: a name taken is ErrExists.
func (r *Registry) upload(ctx context.Context, dir, name, engine string) error {
	if r.kennel == nil {
		return ErrNoKennel
	}
	final := filepath.Join(r.root, name)
	if e, err := r.engineOf(ctx, name); err != nil {
		return err
	} else if e != "" {
		return fmt.Errorf("%q: %w", name, ErrExists)
	}
	// Placed first, so that the kennel routes the upload to its engine; a
	// failed upload removes the placement again.
	if err := r.placement.place(ctx, name, engine); err != nil {
		return err
	}
	pr, pw := io.Pipe()
	go func() { pw.CloseWithError(tarTree(dir, pw)) }()
	var stderr strings.Builder
	res, err := r.kennel.Exec(ctx, kennel.ExecSpec{
		Workspace: final,
		Argv:      []string{"sh", "-c", `[ -z "$(ls -A)" ] || { echo "the volume is not empty" >&2; exit 3; }; tar -x -f - --no-same-owner --no-same-permissions`},
		Stdin:     pr,
		Timeout:   10 * time.Minute,
	}, func(s kennel.Stream, line []byte) {
		if s == kennel.Stderr && stderr.Len() < 2048 {
			stderr.Write(line)
			stderr.WriteByte('\n')
		}
	})
	pr.Close()
	if err == nil && res.ExitCode != 0 {
		err = fmt.Errorf("tar exited %d: %s", res.ExitCode, strings.TrimSpace(stderr.String()))
	}
	if err != nil {
		r.placement.unplace(context.WithoutCancel(ctx), name)
		return fmt.Errorf("upload to engine %s: %w", engine, err)
	}
	return nil
}

// tarTree writes dir's tree (regular files, directories and symlinks, as
// built by Create or Clone in a staging directory no kennel has seen) to w.
func tarTree(dir string, w io.Writer) error {
	tw := tar.NewWriter(w)
	var total int64
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(dir, p)
		if err != nil || rel == "." {
			return err
		}
		info, err := d.Info()
		if err != nil {
			return err
		}
		link := ""
		if info.Mode()&fs.ModeSymlink != 0 {
			if link, err = os.Readlink(p); err != nil {
				return err
			}
		} else if !info.Mode().IsRegular() && !info.IsDir() {
			return nil // sockets, devices: not in a fresh repository
		}
		h, err := tar.FileInfoHeader(info, link)
		if err != nil {
			return err
		}
		h.Name = filepath.ToSlash(rel)
		h.Uid, h.Gid, h.Uname, h.Gname = 0, 0, "", ""
		if err := tw.WriteHeader(h); err != nil {
			return err
		}
		if info.Mode().IsRegular() {
			if total += info.Size(); total > maxUpload {
				return fmt.Errorf("the tree is over %d bytes", maxUpload)
			}
			f, err := os.Open(p)
			if err != nil {
				return err
			}
			_, err = io.Copy(tw, f)
			f.Close()
			return err
		}
		return nil
	})
	if err != nil {
		return err
	}
	return tw.Close()
}

// volumeRemover is what Delete needs of a kennel for a workspace on
// another engine.
type volumeRemover interface {
	RemoveVolume(ctx context.Context, workspace string) error
}

// remoteNames lists the workspaces placed on other engines, sorted.
func (r *Registry) remoteNames(ctx context.Context) ([]string, error) {
	if r.placement == nil {
		return nil, nil
	}
	m, err := r.placement.remote(ctx)
	if err != nil {
		return nil, err
	}
	names := make([]string, 0, len(m))
	for n := range m {
		names = append(names, n)
	}
	slices.Sort(names)
	return names, nil
}

// isRepo tells whether workspace name (at p) is a git repository: a local
// one has a .git; one on another engine was made a repository (git in its
// kennel says so if it is not any more).
func (r *Registry) isRepo(ctx context.Context, name, p string) bool {
	if !r.Local(ctx, name) {
		return true
	}
	return isRepo(p)
}

// Engine is the name of the engine workspace name lives on, "" for the
// local one.
func (r *Registry) Engine(ctx context.Context, name string) string {
	e, _ := r.engineOf(ctx, name)
	return e
}
