// Package redact removes secrets from text before it leaves Fetch: every
// message sent to Discord and every log record pass through one Redactor.
//
// A Redactor knows two kinds of secret. Configured secrets (the Discord
// token, the OpenRouter key, harness keys, the GitHub token) are replaced
// wherever they occur, verbatim or in disguise: split by line breaks,
// terminal escape sequences or zero-width characters, URL-encoded, or
// base64-encoded at any alignment (the Basic credential Fetch sends to
// GitHub among them); disguise.go says how, and what it costs. Credential patterns come from gitleaks' default rule
// set (rules/gitleaks.toml, copied unchanged from the gitleaks module at
// GitleaksVersion and checked against its SHA-256), plus a few of Fetch's
// own in the same format (rules/fetch.toml). The rules are applied the
// way gitleaks' detector applies them: a rule runs only when the text
// contains one of its keywords, its secret is the rule's secret group (or
// the first non-empty group), too little entropy or a global or rule
// allowlist lets a candidate through.
//
// Why not import gitleaks: its config package pulls in viper and ~60
// modules (archive formats, a WebAssembly runtime, a TUI library) for one
// TOML file, and its logging package installs a global zerolog logger in
// init() that writes to stderr, outside the redacting log handler. The
// rule file is the maintained part; it is embedded here, licensed MIT
// (rules/LICENSE.gitleaks), and refreshed by
// scripts/update-gitleaks-rules.sh.
//
// StripANSI removes terminal escape sequences from harness output, and
// NewHandler wraps a slog.Handler so that log records are redacted.
//
// redact imports nothing of Fetch's own. A Redactor is immutable after New
// and safe for concurrent use.
package redact
