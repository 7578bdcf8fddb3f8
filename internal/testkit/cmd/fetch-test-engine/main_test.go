package main

import (
	"errors"
	"io"
	"testing"
)

// TestRunRefusesAnIncompleteCommand: every malformed command line is a
// usage error, before any engine is touched.
func TestRunRefusesAnIncompleteCommand(t *testing.T) {
	for _, args := range [][]string{
		nil,
		{"restart", "--dir", "/tmp/x"},
		{"start", "--dir", "/tmp/x"},  // no owner
		{"start", "--owner-pid", "1"}, // no dir
		{"start", "--dir", "/tmp/x", "--owner-pid", "0"}, // no owner
		{"stop"},
		{"stop", "--dir", "/tmp/x", "extra"},
		{"stop", "--dir", "/tmp/x", "--owner-pid", "1"}, // start's flag
	} {
		err := run(args, io.Discard, io.Discard)
		if !errors.Is(err, errUsage) {
			t.Errorf("run(%q) = %v, want a usage error", args, err)
		}
	}
}
