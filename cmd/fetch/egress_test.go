package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/fetch-dev/fetch/harness"
	"github.com/fetch-dev/fetch/internal/doctor"
)

func TestEgressKeyIsMadeOnceAndKept(t *testing.T) {
	dir := t.TempDir()
	k1, err := egressKey(dir)
	if err != nil || len(k1) != 32 {
		t.Fatalf("egressKey: %x, %v", k1, err)
	}
	k2, err := egressKey(dir)
	if err != nil || !bytes.Equal(k1, k2) {
		t.Fatalf("second egressKey: %x, %v; want the first", k2, err)
	}
	if fi, err := os.Stat(filepath.Join(dir, egressKeyFile)); err != nil || fi.Mode().Perm() != 0o600 {
		t.Errorf("key file: %v, %v; want mode 0600", fi, err)
	}
	os.WriteFile(filepath.Join(dir, egressKeyFile), []byte("not hex\n"), 0o600)
	if _, err := egressKey(dir); err == nil || !strings.Contains(err.Error(), "remove it") {
		t.Errorf("a broken key: %v", err)
	}
}

func TestEgressDoctorChecks(t *testing.T) {
	off := egressChecks(t.Context(), Config{DataDir: t.TempDir()}, nil, quietLog())
	if len(off) != 1 || off[0].Status != doctor.Warn || !strings.Contains(off[0].Fix, envEgress) {
		t.Errorf("egress off: %+v", off)
	}
	cfg := Config{DataDir: t.TempDir(), Egress: true, Credentials: harness.Credentials{"GEMINI_API_KEY": "g-key", "ANTHROPIC_API_KEY": "a-key"}}
	var names []string
	for _, c := range egressChecks(t.Context(), cfg, nil, quietLog()) {
		names = append(names, c.Name)
		if c.Name == "egress gemini" && (c.Status != doctor.Warn || !strings.Contains(c.Detail, "GEMINI_API_KEY stays in the kennel")) {
			t.Errorf("gemini: %+v", c)
		}
		if strings.Contains(c.Detail, "g-key") || strings.Contains(c.Detail, "a-key") {
			t.Errorf("a check shows a key: %+v", c)
		}
	}
	// GEMINI_API_KEY is also a provider key of aider and opencode; the
	// proxy adds Anthropic's, so no harness keeps that one.
	if strings.Join(names, ",") != "egress aider,egress gemini,egress opencode" {
		t.Errorf("checks %v, want the harnesses that keep GEMINI_API_KEY", names)
	}
}
