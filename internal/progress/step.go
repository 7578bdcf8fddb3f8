package progress

import (
	"encoding/json"
	"path/filepath"
	"strings"
	"unicode/utf8"

	"github.com/fetch-dev/fetch/harness"
)

// Step describes a harness event as one short line, or "" for events not
// worth a line (usage, session, raw output). scrub (nil: none) removes
// secrets from the event's text before it is cut to a line: a cut secret
// is no longer recognised, and its first characters would be shown.
func Step(ev harness.Event, scrub func(string) string) string {
	if scrub == nil {
		scrub = func(s string) string { return s }
	}
	return scrub(step(ev, scrub))
}

func step(ev harness.Event, scrub func(string) string) string {
	switch ev.Kind {
	case harness.KindToolUse:
		if p := inputPath(ev.Input); p != "" {
			return "🔧 " + ev.Tool + " " + filepath.Base(scrub(p))
		}
		return "🔧 " + ev.Tool
	case harness.KindCommand:
		if ev.Denied {
			return "🚫 denied: " + clip(oneLine(scrub(ev.Command)), 80)
		}
		if ev.ExitCode != nil {
			return ""
		}
		return "$ " + clip(oneLine(scrub(ev.Command)), 80)
	case harness.KindFileChanged:
		if ev.Git {
			return ""
		}
		return "✏️ " + string(orChange(ev.Change)) + " " + filepath.Base(ev.Path)
	case harness.KindText:
		return "💬 " + clip(oneLine(scrub(ev.Text)), 100)
	case harness.KindError:
		if ev.Denied {
			return "🚫 denied: " + ev.Tool
		}
		return "⚠️ " + clip(oneLine(scrub(ev.Text)), 100)
	case harness.KindRefused:
		return "🚧 refused: " + clip(oneLine(scrub(ev.Host)), 80)
	case harness.KindQuestion, harness.KindResult, harness.KindUsage, harness.KindSession, harness.KindRaw:
		return ""
	}
	return ""
}

func orChange(c harness.ChangeKind) harness.ChangeKind {
	if c == "" {
		return "edit"
	}
	return c
}

// inputPath finds a file path among a tool's arguments.
func inputPath(raw json.RawMessage) string {
	var in map[string]any
	if json.Unmarshal(raw, &in) != nil {
		return ""
	}
	for _, k := range []string{"file_path", "path", "filePath", "file", "notebook_path"} {
		if s, ok := in[k].(string); ok && s != "" {
			return s
		}
	}
	return ""
}

func oneLine(s string) string {
	s = strings.TrimSpace(s)
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		s = s[:i] + " …"
	}
	return s
}

// clip cuts s to n characters, marking the cut.
func clip(s string, n int) string {
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	r := []rune(s)
	return string(r[:n-1]) + "…"
}
