package workspace_test

import (
	"context"
	"crypto/rand"
	"errors"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/fetch-dev/fetch/internal/store"
	"github.com/fetch-dev/fetch/internal/testkit"
	"github.com/fetch-dev/fetch/internal/workspace"
	"github.com/fetch-dev/fetch/kennel"
)

// TestWorkspaceOnAnotherEngine: with a placement that chooses the remote
// engine, a new workspace lives there in a volume (nothing under the
// root on this machine); listing, a task's worktree and the recording of
// its work run through its kennel there, and Delete removes the volume.
func TestWorkspaceOnAnotherEngine(t *testing.T) {
	local := testkit.RequireDocker(t)
	image := testkit.KennelImage(t)
	engine := testkit.RemoteEngine(t)
	engine.LoadImage(t, image)
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	instance := "remote-ws-" + strings.ToLower(rand.Text()[:8])
	kl, err := kennel.New(local, kennel.Config{Image: image, Instance: instance}, log)
	if err != nil {
		t.Fatal(err)
	}
	kr, err := kennel.New(engine.Client(t), kennel.Config{Image: image, Instance: instance, Volumes: true}, log)
	if err != nil {
		t.Fatal(err)
	}
	db, err := store.Open(context.Background(), filepath.Join(t.TempDir(), "fetch.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	placement := workspace.NewPlacement(db, func(context.Context) (string, error) { return "remote", nil })
	root := filepath.Join(t.TempDir(), "workspaces")
	reg := workspace.New(root, log).Placed(placement)
	pool, err := kennel.NewPool("local", map[string]*kennel.Kennel{"local": kl, "remote": kr}, reg.EngineOf)
	if err != nil {
		t.Fatal(err)
	}
	reg.InKennel(pool)
	ctx := context.Background()
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		p := filepath.Join(root, "app")
		pool.Remove(ctx, p)
		pool.RemoveVolume(ctx, p)
	})

	info, err := reg.Create(ctx, "app", "")
	if err != nil {
		t.Fatal(err)
	}
	if info.Engine != "remote" {
		t.Fatalf("created on engine %q; want remote", info.Engine)
	}
	if _, err := os.Stat(filepath.Join(root, "app")); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("the workspace is on this machine too: %v", err)
	}
	list, err := reg.List(ctx)
	if err != nil || len(list) != 1 || list[0].Name != "app" || list[0].Engine != "remote" || list[0].Branch != "main" || list[0].Dirty || list[0].Problem != "" {
		t.Fatalf("list: %+v, %v", list, err)
	}

	wt, err := reg.AddWorktree(ctx, "app", "t1")
	if err != nil {
		t.Fatal(err)
	}
	res, err := kr.Exec(ctx, kennel.ExecSpec{Workspace: filepath.Join(root, "app"), Dir: wt.Path, Argv: []string{"sh", "-c", "echo hi > hello.txt"}}, nil)
	if err != nil || res.ExitCode != 0 {
		t.Fatalf("write in the worktree: %+v %v", res, err)
	}
	rec, err := reg.Record(ctx, wt, "fetch: task t1", workspace.RecordOptions{})
	if err != nil || !rec.Committed {
		t.Fatalf("record: %v, committed %v", err, rec.Committed)
	}
	d := rec.Diff
	if len(d.Files) != 1 || d.Files[0].Path != "hello.txt" || len(d.Commits) != 1 || !strings.Contains(d.Patch, "+hi") {
		t.Fatalf("recorded: %+v", rec)
	}
	// The same work bundled for Fetch's own repository: nothing left to
	// commit, the branch's head, and what it adds over its base.
	b, err := reg.Bundle(ctx, reg.PlanRecord(wt, wt.Base, "fetch: task t1", nil))
	if err != nil || b.Committed || b.Tip != d.Commits[0].Hash {
		t.Fatalf("bundle: %+v, %v", b, err)
	}
	if !strings.HasPrefix(string(b.Bundle), "# v2 git bundle\n-"+wt.Base) {
		t.Fatalf("bundle: %q", b.Bundle[:min(len(b.Bundle), 100)])
	}
	if err := reg.RemoveWorktree(ctx, wt, true); err != nil {
		t.Fatal(err)
	}

	if err := reg.Delete(ctx, "app"); err != nil {
		t.Fatal(err)
	}
	if list, err := reg.List(ctx); err != nil || len(list) != 0 {
		t.Fatalf("after Delete: %+v, %v", list, err)
	}
	if _, err := reg.Path("app"); !errors.Is(err, workspace.ErrNotFound) {
		t.Fatalf("Path after Delete: %v", err)
	}
}
