package kennel_test

import (
	"context"
	"crypto/rand"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/docker/docker/client"

	"github.com/fetch-dev/fetch/internal/testkit"
	"github.com/fetch-dev/fetch/kennel"
)

// TestWorkspaceInAVolume: with Config.Volumes, a workspace lives in a named
// volume on the engine (no host path is shared): the kennel's user can
// write it, it outlives the container, and RemoveVolume deletes it. On the
// local engine and on a second, remote engine reached over TLS.
func TestWorkspaceInAVolume(t *testing.T) {
	image := testkit.KennelImage(t)
	engines := map[string]func(t *testing.T) *client.Client{
		"local": func(t *testing.T) *client.Client { return testkit.RequireDocker(t) },
		"remote": func(t *testing.T) *client.Client {
			e := testkit.RemoteEngine(t)
			e.LoadImage(t, image)
			return e.Client(t)
		},
	}
	for name, engine := range engines {
		t.Run(name, func(t *testing.T) {
			docker := engine(t)
			k, err := kennel.New(docker, kennel.Config{Image: image, Instance: "vol-" + strings.ToLower(rand.Text()[:8]), Grace: time.Second, Volumes: true},
				slog.New(slog.NewTextHandler(t.Output(), nil)))
			if err != nil {
				t.Fatal(err)
			}
			ws := "/workspaces/app-" + strings.ToLower(rand.Text()[:8])
			ctx := context.Background()
			t.Cleanup(func() {
				ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
				defer cancel()
				k.Remove(ctx, ws)
				if err := k.RemoveVolume(ctx, ws); err != nil {
					t.Errorf("remove volume: %v", err)
				}
			})
			sh := func(script string) (string, int) {
				t.Helper()
				var out strings.Builder
				res, err := k.Exec(ctx, kennel.ExecSpec{Workspace: ws, Argv: []string{"sh", "-ec", script}, Timeout: time.Minute}, func(s kennel.Stream, line []byte) {
					if s == kennel.Stdout {
						out.Write(line)
						out.WriteByte('\n')
					}
				})
				if err != nil {
					t.Fatalf("exec %q: %v", script, err)
				}
				if res.ExitCode != 0 {
					t.Logf("exec %q: exit %d: %s", script, res.ExitCode, res.StderrTail)
				}
				return strings.TrimSpace(out.String()), res.ExitCode
			}
			if out, code := sh("git init -q . && echo hello > a.txt && git add a.txt && git -c user.name=t -c user.email=t@localhost commit -qm first && id -u && git rev-list --count HEAD"); code != 0 || out != "10001\n1" {
				t.Fatalf("the kennel's user works in the volume: %q, exit %d", out, code)
			}
			if err := k.Remove(ctx, ws); err != nil {
				t.Fatal(err)
			}
			if out, code := sh("cat a.txt"); code != 0 || out != "hello" {
				t.Fatalf("after the container was replaced, a.txt = %q (exit %d); the volume should keep it", out, code)
			}
			if err := k.Remove(ctx, ws); err != nil {
				t.Fatal(err)
			}
			if err := k.RemoveVolume(ctx, ws); err != nil {
				t.Fatal(err)
			}
			if out, code := sh("ls -A"); code != 0 || out != "" {
				t.Fatalf("after RemoveVolume the workspace holds %q (exit %d)", out, code)
			}
		})
	}
}
