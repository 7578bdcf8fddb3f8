package journey

import (
	"bytes"
	"context"
	"os/exec"
	"strings"
	"testing"
	"time"
)

// J11: fetch chat, driven as a script through its stdin: a line over
// 1 MiB gets the usual refusal and the session goes on (on the base
// commit it ended fetch chat with exit 1), then /status is answered and
// fetch chat exits 0 at the end of its input.
func TestJourneyChatLongLine(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	delete(w.env, "OPENROUTER_API_KEY")
	var in bytes.Buffer
	in.WriteString(strings.Repeat("x", 1<<20+10) + "\n")
	in.WriteString("/status\n")
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, fetchBinary(t), "chat")
	cmd.Env = w.environ()
	cmd.Stdin = &in
	var out, errOut bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errOut
	if err := cmd.Run(); err != nil {
		t.Fatalf("fetch chat: %v\nstdout:\n%.2000s\nstderr:\n%.2000s", err, out.String(), errOut.String())
	}
	text := out.String()
	refusal := strings.Index(text, "1048586 characters long")
	status := statusRe.FindStringIndex(text)
	if refusal < 0 || status == nil || status[0] < refusal {
		t.Fatalf("fetch chat printed:\n%.2000s\nwant the refusal (with the line's true length), then the /status reply", text)
	}
}
