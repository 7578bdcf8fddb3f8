package progress_test

import (
	"strings"
	"testing"

	"github.com/fetch-dev/fetch/internal/progress"
	"github.com/fetch-dev/fetch/internal/task"
)

func TestResultSendsTheFilesTheCLILeft(t *testing.T) {
	png := []byte("\x89PNG\r\n\x1a\n")
	tk := task.Task{ID: "t1", Workspace: "app", State: task.Succeeded, Mode: task.Work, Branch: "fetch/t1", Worktree: "/w", Goal: "shot",
		Patch: strings.Repeat("+x\n", 1000), Out: []task.OutFile{
			{Name: "shot.png", Size: 2048, MediaType: "image/png", Data: png},
			{Name: "leak.txt", Skipped: "a symlink (only files are sent, never what a link names)"},
		}}
	r := progress.Result(tk)
	if len(r.Files) != 2 || r.Files[0].Name != "t1.patch" || r.Files[1].Name != "shot.png" || string(r.Files[1].Data) != string(png) {
		t.Fatalf("files %+v; want the patch and shot.png", r.Files)
	}
	for _, want := range []string{"The CLI sent you: shot.png (2.0 KiB)", "Not sent:", "leak.txt: a symlink"} {
		if !strings.Contains(r.Text, want) {
			t.Errorf("result %q lacks %q", r.Text, want)
		}
	}
	tk.Out = tk.Out[1:]
	if r := progress.Result(tk); len(r.Files) != 1 || !strings.Contains(r.Text, "The CLI left files for you, not sent:\n  leak.txt") {
		t.Errorf("only a skipped file: %q, %d files", r.Text, len(r.Files))
	}
}
