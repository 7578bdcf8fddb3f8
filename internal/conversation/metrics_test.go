package conversation_test

import (
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/fetch-dev/fetch/internal/chat"
	"github.com/fetch-dev/fetch/internal/conversation"
)

// counted records what the conversations count.
type counted struct {
	mu       sync.Mutex
	in, out  map[string]int
	instinct []time.Duration
}

func newCounted() *counted { return &counted{in: map[string]int{}, out: map[string]int{}} }

func (c *counted) MessageIn(kind string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.in[kind]++
}

func (c *counted) MessageOut(kind string, n int) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.out[kind] += n
}

func (c *counted) InstinctReply(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.instinct = append(c.instinct, d)
}

// Every handled message is counted once by how it was taken, every reply
// queued by its kind, and each instinct's reply (a command, a stop) is
// timed from Receive.
func TestMetricsCountMessages(t *testing.T) {
	m := newCounted()
	e := newEnv(t, conversation.Config{Agent: &echo{}, Metrics: m})
	e.say(t, "/status")
	e.rec.WaitFor(t, 1)
	e.say(t, "add a health endpoint to the app workspace")
	e.rec.WaitFor(t, 2)
	e.say(t, "/stop")
	e.rec.WaitFor(t, 3)
	e.say(t, strings.Repeat("x", chat.MaxMessageLen+1))
	e.rec.WaitFor(t, 4)
	if err := e.mgr.Notify(t.Context(), conv, chat.Text("⏰ Reminder: tea")); err != nil {
		t.Fatal(err)
	}
	e.rec.WaitFor(t, 5)
	e.idle(t)

	m.mu.Lock()
	defer m.mu.Unlock()
	if diff := cmp.Diff(map[string]int{"instinct": 1, "action": 1, "stop": 1, "refused": 1}, m.in); diff != "" {
		t.Errorf("messages in (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(map[string]int{"reply": 4, "notice": 1}, m.out); diff != "" {
		t.Errorf("messages out (-want +got):\n%s", diff)
	}
	if len(m.instinct) != 2 {
		t.Fatalf("instinct latencies observed: %v, want 2 (/status and /stop)", m.instinct)
	}
	for _, d := range m.instinct {
		if d <= 0 || d > time.Minute {
			t.Errorf("instinct latency %v is not a measured time", d)
		}
	}
}

// Without Metrics nothing is counted and nothing breaks.
func TestMetricsNil(t *testing.T) {
	e := newEnv(t, conversation.Config{})
	e.say(t, "/status")
	e.rec.WaitFor(t, 1)
	e.idle(t)
}
