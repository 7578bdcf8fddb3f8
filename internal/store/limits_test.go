package store_test

import (
	"testing"
	"time"

	"github.com/fetch-dev/fetch/internal/store"
	"github.com/google/go-cmp/cmp"
)

// TestCLILimitsKeepTheLatest: what a CLI reports of a window replaces
// what it reported of that window before; other windows and CLIs stay.
func TestCLILimitsKeepTheLatest(t *testing.T) {
	db := open(t)
	ctx := t.Context()
	now := time.Date(2026, 11, 28, 12, 0, 0, 0, time.UTC)
	db.Now = func() time.Time { return now }
	reset := time.Date(2026, 11, 28, 15, 0, 0, 0, time.UTC)
	if err := db.SetCLILimits(ctx, []store.CLILimit{
		{Harness: "claude", Name: "five_hour", UsedPercent: 40, Status: "allowed", ResetsAt: reset},
		{Harness: "claude", Name: "seven_day", UsedPercent: 10},
		{Harness: "codex", Name: "5h", UsedPercent: 20},
	}); err != nil {
		t.Fatal(err)
	}
	now = now.Add(time.Minute)
	if err := db.SetCLILimits(ctx, []store.CLILimit{{Harness: "claude", Name: "five_hour", UsedPercent: 93, Status: "allowed_warning", ResetsAt: reset}}); err != nil {
		t.Fatal(err)
	}
	got, err := db.CLILimits(ctx, "claude")
	if err != nil {
		t.Fatal(err)
	}
	want := []store.CLILimit{
		{Harness: "claude", Name: "five_hour", UsedPercent: 93, Status: "allowed_warning", ResetsAt: reset, UpdatedAt: now},
		{Harness: "claude", Name: "seven_day", UsedPercent: 10, UpdatedAt: now.Add(-time.Minute)},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("claude's windows (-want +got):\n%s", diff)
	}
	all, err := db.CLILimits(ctx, "")
	if err != nil || len(all) != 3 {
		t.Errorf("every CLI's windows: %+v, %v; want 3", all, err)
	}
}
