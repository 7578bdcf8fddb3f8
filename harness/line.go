package harness

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"unicode/utf8"
)

// rawEvent keeps a line nobody recognised: JSON as Raw, anything else as
// Text, both bounded.
func rawEvent(line []byte) Event {
	if len(line) <= maxRawBytes && json.Valid(line) {
		return Event{Kind: KindRaw, Raw: json.RawMessage(bytes.Clone(line))}
	}
	return Event{Kind: KindRaw, Text: capString(string(line), maxRawBytes)}
}

// isBlank reports whether a line holds only white space.
func isBlank(line []byte) bool { return len(bytes.TrimSpace(line)) == 0 }

// capString cuts s to at most n bytes on a rune boundary and marks the cut.
func capString(s string, n int) string {
	if len(s) <= n {
		return s
	}
	cut := n
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return s[:cut] + fmt.Sprintf("… [%d bytes cut]", len(s)-cut)
}

// capText bounds prose and command output.
func capText(s string) string { return capString(s, maxTextBytes) }

// capInput copies a tool input, replacing inputs too large to keep by an
// object that says how large they were.
func capInput(raw json.RawMessage) json.RawMessage {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || bytes.Equal(raw, []byte("null")) {
		return nil
	}
	if len(raw) > maxInputBytes {
		return json.RawMessage(`{"truncated_bytes":` + strconv.Itoa(len(raw)) + `}`)
	}
	return json.RawMessage(bytes.Clone(raw))
}

// exitCode returns a pointer for Event.ExitCode.
func exitCode(n int) *int { return &n }

// jsonString decodes raw as a string; other JSON values yield their text.
func jsonString(raw json.RawMessage) string {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || bytes.Equal(raw, []byte("null")) {
		return ""
	}
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s
	}
	return string(raw)
}

// contentText returns the text of a message "content" that is either a
// string or an array of blocks with "text" (or nested "content") fields.
func contentText(raw json.RawMessage) string {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 {
		return ""
	}
	if raw[0] != '[' {
		return jsonString(raw)
	}
	var blocks []struct {
		Text    string          `json:"text"`
		Content json.RawMessage `json:"content"`
	}
	if json.Unmarshal(raw, &blocks) != nil {
		return string(raw)
	}
	var parts []string
	for _, b := range blocks {
		switch {
		case b.Text != "":
			parts = append(parts, b.Text)
		case len(b.Content) > 0:
			parts = append(parts, contentText(b.Content))
		}
	}
	return strings.Join(parts, "\n")
}

// sessionID is a parser's session id, told once as a KindSession event.
type sessionID struct{ session string }

// sessionFrom records id and tells it, when it is new.
func (s *sessionID) sessionFrom(id string, emit func(Event)) {
	if id != "" && id != s.session {
		s.session = id
		emit(Event{Kind: KindSession, SessionID: id})
	}
}

// streamedText gathers a CLI's streamed text chunks until something else
// happens, so that a message becomes one text event; segment is the text
// since the last tool call (the final answer when the run ends).
type streamedText struct {
	pending strings.Builder
	segment textSegment
}

// flushText tells the gathered text as one event.
func (t *streamedText) flushText(emit func(Event)) {
	if t.pending.Len() == 0 {
		return
	}
	text := t.pending.String()
	t.pending.Reset()
	if strings.TrimSpace(text) == "" {
		return
	}
	t.segment.add(text)
	emit(Event{Kind: KindText, Text: capText(text)})
}

// textSegment accumulates assistant text between tool calls, for CLIs whose
// final answer is "the text after the last tool".
type textSegment struct {
	b strings.Builder
}

func (s *textSegment) add(text string) {
	if s.b.Len() > 0 && !strings.HasSuffix(s.b.String(), "\n") && !strings.HasPrefix(text, "\n") {
		s.b.WriteString("\n")
	}
	s.b.WriteString(text)
	if s.b.Len() > 2*maxTextBytes { // keep the tail: the summary is at the end
		tail := s.b.String()[s.b.Len()-maxTextBytes:]
		for len(tail) > 0 && !utf8.RuneStart(tail[0]) {
			tail = tail[1:]
		}
		s.b.Reset()
		s.b.WriteString(tail)
	}
}

func (s *textSegment) reset()         { s.b.Reset() }
func (s *textSegment) String() string { return strings.TrimSpace(s.b.String()) }
