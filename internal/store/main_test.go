package store_test

import (
	"testing"

	"go.uber.org/goleak"
)

// TestMain fails the package if a test leaves a goroutine behind (the
// checkpointer of a DB that was never closed, for instance).
func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }
