package redact_test

import (
	"bytes"
	"errors"
	"log/slog"
	"strings"
	"sync"
	"testing"

	"github.com/fetch-dev/fetch/internal/redact"
)

// newRedactor builds one Redactor per test binary: compiling the rule set
// is the expensive part.
var shared = sync.OnceValues(func() (*redact.Redactor, error) {
	return redact.New("configured-discord-token-value", "or-key-0123456789")
})

func redactor(t testing.TB) *redact.Redactor {
	t.Helper()
	r, err := shared()
	if err != nil {
		t.Fatal(err)
	}
	return r
}

func TestRedactsSecretsAndCredentialPatterns(t *testing.T) {
	r := redactor(t)
	for _, tc := range []struct {
		name, in, gone string
	}{
		{"configured", "token is configured-discord-token-value, ok", "configured-discord-token-value"},
		{"configured twice", "or-key-0123456789/or-key-0123456789", "or-key-0123456789"},
		{"github pat", "git push https://x:ghp_A1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q7r8@github.com/o/r", "ghp_A1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q7r8"},
		{"github fine-grained", "GH=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", "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"},
		{"aws key", "aws_access_key_id = AKIAZ4Q7RXW2PLM3KD5N", "AKIAZ4Q7RXW2PLM3KD5N"},
		{"anthropic", "ANTHROPIC_API_KEY=sk-ant-api03-Zx9_kQ2vLm4Np8Rs6Tu1Wy3Ab5Cd7Ef9Gh0Ij2Kl4Mn6", "sk-ant-api03-Zx9_kQ2vLm4Np8Rs6Tu1Wy3Ab5Cd7Ef9Gh0Ij2Kl4Mn6"},
		{"openai", "key: sk-proj-Qw3rTy7uIo9pAs1dFg5hJk2lZx4cVb6nM8qWeRtYuI0oP", "sk-proj-Qw3rTy7uIo9pAs1dFg5hJk2lZx4cVb6nM8qWeRtYuI0oP"},
		{"url password", "cloning postgres://fetch:s3cr3t-Pa55@db.internal:5432/app", "s3cr3t-Pa55"},
		{"private key", "-----BEGIN RSA PRIVATE KEY-----\nMIIEpAIBAAKCAQEA1c7+9z5Pad7OejecsQ0bu3aozN3tihPmljnnudb9G3HECdnHjkpLgHDPBAIKCAQEA1c7+9z5Pad7OejecsQ0bu3aozN\n-----END RSA PRIVATE KEY-----", "MIIEpAIBAAKCAQEA1c7"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			out := r.String(tc.in)
			if strings.Contains(out, tc.gone) || !strings.Contains(out, redact.Mask) {
				t.Fatalf("String(%q) = %q; %q should be masked", tc.in, out, tc.gone)
			}
		})
	}
}

func TestLeavesOrdinaryTextAlone(t *testing.T) {
	r := redactor(t)
	for _, s := range []string{
		"fix the failing test in parser_test.go",
		"🟢 ALERT since 2026-11-22 13:00 UTC (just now)\nWorkspace: none selected\nTask: none running",
		"diff --git a/main.go b/main.go\n--- a/main.go\n+++ b/main.go\n@@ -1,3 +1,3 @@\n-func old() {}\n+func new() {}",
		"https://github.com/fetch-dev/fetch/pull/12",
		"password: ${DB_PASSWORD}",
	} {
		if out := r.String(s); out != s {
			t.Errorf("String(%q) = %q; want it unchanged", s, out)
		}
	}
}

func TestStripANSI(t *testing.T) {
	for in, want := range map[string]string{
		"\x1b[31mred\x1b[0m text":                  "red text",
		"\x1b]0;title\x07after":                    "after",
		"\x1b]8;;http://x\x1b\\link\x1b]8;;\x1b\\": "link",
		"plain":                    "plain",
		"cursor\x1b[2K\x1b[1Gline": "cursorline",
	} {
		if got := redact.StripANSI(in); got != want {
			t.Errorf("StripANSI(%q) = %q; want %q", in, got, want)
		}
	}
}

func TestHandlerRedactsRecords(t *testing.T) {
	r := redactor(t)
	var buf bytes.Buffer
	log := slog.New(redact.NewHandler(slog.NewTextHandler(&buf, nil), r)).With("token", "configured-discord-token-value")
	log.Info("sending ghp_A1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q7r8",
		"err", errors.New("401 for or-key-0123456789"),
		slog.Group("req", "auth", "Bot configured-discord-token-value"),
		"n", 3)
	out := buf.String()
	for _, s := range []string{"configured-discord-token-value", "ghp_A1b2", "or-key-0123456789"} {
		if strings.Contains(out, s) {
			t.Errorf("log leaks %q:\n%s", s, out)
		}
	}
	if !strings.Contains(out, "n=3") || strings.Count(out, redact.Mask) != 4 {
		t.Errorf("log = %s", out)
	}
}

func TestShortSecretsAreIgnored(t *testing.T) {
	r, err := redact.New("", "  ", "abc")
	if err != nil {
		t.Fatal(err)
	}
	if out := r.String("abc def"); out != "abc def" {
		t.Fatalf("short secret masked: %q", out)
	}
}

func BenchmarkRedactLogLine(b *testing.B) {
	r := redactor(b)
	line := `level=INFO msg="send reply" conversation=discord:1234567890 outbox=42 text="Task t-12 on claude in api, running for 4m12s — add a health check"`
	b.ReportAllocs()
	for b.Loop() {
		r.String(line)
	}
}

func TestConfiguredSecretsInAnyCase(t *testing.T) {
	r := redactor(t)
	if out := r.String("unknown command /CONFIGURED-Discord-TOKEN-value"); strings.Contains(strings.ToLower(out), "configured-discord-token-value") {
		t.Fatalf("String = %q", out)
	}
}
