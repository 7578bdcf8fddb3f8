package schedule_test

import (
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/fetch-dev/fetch/internal/testkit"
)

// lags records what the scheduler measures.
type lags struct {
	mu  sync.Mutex
	got []string
}

func (l *lags) Fired(kind string, lag time.Duration) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.got = append(l.got, kind+" "+lag.String())
}

// Each job handed over is measured by kind with its lag behind its due
// time: none when Fetch runs at the due time, the time Fetch was away for
// a reminder delivered late after a restart. Missed runs of a schedule
// that are skipped are not handed over, so not measured.
func TestSchedulerLag(t *testing.T) {
	loc := berlin(t)
	t0 := time.Date(2026, 11, 22, 15, 30, 0, 0, loc)
	path := filepath.Join(t.TempDir(), "fetch.db")
	clk := testkit.NewClock(t0)
	m := &lags{}
	r := startMeasured(t, path, clk, loc, m)
	r.apply(t, "/remind in 10m stretch")
	r.apply(t, "/remind in 20m check the deploy")
	advanceTo(t, clk, t0.Add(15*time.Minute))
	r.stop()

	clk.Set(t0.Add(2*time.Hour + 5*time.Minute)) // back 1h45m after the second reminder's due time
	r2 := startMeasured(t, path, clk, loc, m)
	advanceTo(t, clk, t0.Add(2*time.Hour+10*time.Minute))
	if got := r2.out.fired(); len(got) != 1 {
		t.Fatalf("deliveries after the restart = %+v, want the late reminder", got)
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	want := []string{"remind 0s", "remind 1h45m0s"}
	if len(m.got) != len(want) || m.got[0] != want[0] || m.got[1] != want[1] {
		t.Fatalf("lags = %q, want %q", m.got, want)
	}
}
