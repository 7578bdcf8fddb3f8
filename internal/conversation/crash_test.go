package conversation_test

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/fetch-dev/fetch/internal/chat"
	"github.com/fetch-dev/fetch/internal/conversation"
	"github.com/fetch-dev/fetch/internal/store"
)

// helperEnv names the database a re-executed test binary works on as the
// process that crashes.
const helperEnv = "FETCH_TEST_CRASH_DB"

// hang is an agent that announces its turn and never finishes it.
type hang struct{}

func (hang) Respond(ctx context.Context, t conversation.Turn) ([]chat.Reply, error) {
	fmt.Println("TURN-STARTED")
	select {}
}

// crashHelper runs in the child process: it receives one message and
// hangs in its turn until it is killed.
func crashHelper() int {
	ctx := context.Background()
	db, err := store.Open(ctx, os.Getenv(helperEnv))
	if err != nil {
		fmt.Println("open:", err)
		return 1
	}
	mgr := conversation.New(conversation.Config{
		Store:   db,
		Senders: map[string]chat.Sender{},
		Agent:   hang{},
		RoleOf:  roleOf,
		Logger:  quiet(),
	})
	if err := mgr.Open(ctx); err != nil {
		fmt.Println("open manager:", err)
		return 1
	}
	err = mgr.Receive(ctx, chat.Message{Channel: "test", ConversationID: conv, ExternalID: "m-1", UserID: owner, Text: "add retries to the HTTP client in client.go"})
	if err != nil {
		fmt.Println("receive:", err)
		return 1
	}
	select {}
}

func TestReplayAfterCrash(t *testing.T) {
	path := filepath.Join(t.TempDir(), "fetch.db")
	// The child stores the message and hangs in its turn; it is killed
	// with SIGKILL, so nothing gets to clean up.
	cmd := exec.CommandContext(t.Context(), os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), helperEnv+"="+path)
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	sc := bufio.NewScanner(out)
	started := false
	for sc.Scan() {
		if strings.Contains(sc.Text(), "TURN-STARTED") {
			started = true
			break
		}
		t.Log("child:", sc.Text())
	}
	if !started {
		cmd.Process.Kill()
		cmd.Wait()
		t.Fatal("child never started its turn")
	}
	if err := cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	cmd.Wait()

	agent := &echo{}
	e := start(t, path, conversation.Config{Agent: agent})
	got := e.rec.WaitFor(t, 1)
	if got[0].Reply.Text != "done: add retries to the HTTP client in client.go" {
		t.Fatalf("replayed reply = %q", got[0].Reply.Text)
	}
	// The channel redelivers the same message after the restart: it is a
	// duplicate, not a second request.
	e.sayID(t, "m-1", "add retries to the HTTP client in client.go")
	e.idle(t)
	if len(agent.turns) != 1 || len(e.rec.Sent()) != 1 {
		t.Fatalf("handled %d times, %d replies; want exactly once", len(agent.turns), len(e.rec.Sent()))
	}
	e.mgr.Close(t.Context())
	e.db.Close()

	// A second restart replays nothing.
	e2 := start(t, path, conversation.Config{Agent: agent})
	e2.say(t, "/whoami")
	e2.idle(t)
	if len(agent.turns) != 1 || len(e2.rec.Sent()) != 1 {
		t.Fatalf("after second restart: %d turns, replies %q", len(agent.turns), e2.rec.Texts())
	}
}
