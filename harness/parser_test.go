package harness

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
)

// jsonFormats are the adapters whose CLIs write JSON lines.
var jsonFormats = []Adapter{
	ClaudeAdapter{}, CodexAdapter{}, GeminiAdapter{}, CopilotAdapter{},
	OpenCodeAdapter{}, QwenAdapter{}, CursorAdapter{},
}

func parseAll(p Parser, lines ...string) []Event {
	var evs []Event
	emit := func(ev Event) { evs = append(evs, ev) }
	for _, l := range lines {
		p.Parse([]byte(l), emit)
	}
	p.Flush(emit)
	return evs
}

func TestUnknownEventTypesAreKeptRaw(t *testing.T) {
	line := `{"type":"brand_new.event","data":{"x":1}}`
	for _, a := range jsonFormats {
		t.Run(string(a.Name()), func(t *testing.T) {
			evs := parseAll(a.NewParser(Task{}), line)
			if len(evs) != 1 || evs[0].Kind != KindRaw || string(evs[0].Raw) != line {
				t.Fatalf("events %+v, want one raw event with the line", evs)
			}
		})
	}
}

func TestMalformedLinesAreKeptAsText(t *testing.T) {
	lines := []string{
		`{"type":"assistant","message":`, // truncated JSON
		`Warning: something on stdout`,   // not JSON
		"\x00\xff\xfe binary",            // not UTF-8
		`[1,2,3]`,                        // JSON, not an object
		`{"type":42}`,                    // wrong field type
	}
	for _, a := range jsonFormats {
		t.Run(string(a.Name()), func(t *testing.T) {
			evs := parseAll(a.NewParser(Task{}), lines...)
			if len(evs) != len(lines) {
				t.Fatalf("got %d events for %d lines: %+v", len(evs), len(lines), evs)
			}
			for i, ev := range evs {
				if ev.Kind != KindRaw {
					t.Errorf("line %d: kind %s, want raw", i, ev.Kind)
				}
				if ev.Text == "" && ev.Raw == nil {
					t.Errorf("line %d: raw event keeps nothing", i)
				}
			}
			if _, err := json.Marshal(evs); err != nil {
				t.Fatalf("events do not marshal: %v", err)
			}
		})
	}
}

func TestBlankLinesYieldNothing(t *testing.T) {
	for _, a := range jsonFormats {
		if evs := parseAll(a.NewParser(Task{}), "", "   ", "\t"); len(evs) != 0 {
			t.Errorf("%s: %+v", a.Name(), evs)
		}
	}
}

func TestHugeLinesAreBounded(t *testing.T) {
	big := strings.Repeat("é", maxTextBytes) // 2 bytes a rune, twice the limit
	unknown := `{"type":"mystery","blob":"` + big + `"}`
	text, _ := json.Marshal(map[string]any{
		"type": "item.completed",
		"item": map[string]any{"id": "i", "type": "agent_message", "text": big},
	})
	notJSON := strings.Repeat("x", 3*maxRawBytes)

	for _, a := range jsonFormats {
		evs := parseAll(a.NewParser(Task{}), unknown, notJSON)
		for _, ev := range evs {
			if len(ev.Raw) > maxRawBytes || len(ev.Text) > maxRawBytes+64 {
				t.Errorf("%s: raw event of %d+%d bytes", a.Name(), len(ev.Raw), len(ev.Text))
			}
		}
	}
	evs := parseAll(CodexAdapter{}.NewParser(Task{}), string(text))
	if len(evs[0].Text) > maxTextBytes+64 || !strings.HasSuffix(evs[0].Text, "bytes cut]") {
		t.Fatalf("text of %d bytes not cut", len(evs[0].Text))
	}
	if !json.Valid(mustMarshal(t, evs)) {
		t.Fatal("cut text is not valid JSON")
	}
}

func TestHugeToolInputIsReplaced(t *testing.T) {
	content := strings.Repeat("a", 2*maxInputBytes)
	line, _ := json.Marshal(map[string]any{
		"type": "assistant", "session_id": "s",
		"message": map[string]any{"content": []any{map[string]any{
			"type": "tool_use", "id": "t1", "name": "Write",
			"input": map[string]string{"file_path": "/w/big.txt", "content": content},
		}}},
	})
	evs := parseAll(ClaudeAdapter{}.NewParser(Task{}), string(line))
	if got := string(evs[1].Input); !strings.HasPrefix(got, `{"truncated_bytes":`) {
		t.Fatalf("input %.80s, want it replaced", got)
	}
}

func TestAiderPlainTextNeverRaw(t *testing.T) {
	evs := parseAll(AiderAdapter{}.NewParser(Task{}), `{"type":"x"}`, "\x00\xff", "Tokens: 12 sent, 3 received.")
	if evs[0].Kind != KindText || !strings.Contains(evs[0].Text, `{"type":"x"}`) {
		t.Fatalf("events %+v", evs)
	}
}

func TestAiderUsage(t *testing.T) {
	u, ok := aiderUsage("Tokens: 4.2k sent, 2.0k cache write, 1.1M cache hit, 71 received. Cost: $0.0123 message, $0.05 session.")
	want := Usage{InputTokens: 4200, CacheWriteTokens: 2000, CacheReadTokens: 1100000, OutputTokens: 71, CostUSD: 0.0123}
	if !ok || u != want {
		t.Fatalf("usage %+v, want %+v", u, want)
	}
}

func TestAiderRetriedEditIsNotAFailure(t *testing.T) {
	evs := parseAll(AiderAdapter{}.NewParser(Task{}),
		"Here is the fix.", "Tokens: 1k sent, 10 received.",
		"The LLM did not conform to the edit format.",
		"Second try.", "Tokens: 1k sent, 10 received.", "Applied edit to a.go")
	last := evs[len(evs)-1]
	if last.Kind != KindResult || !last.Success || last.Text != "Second try." {
		t.Fatalf("result %+v", last)
	}
}

func TestCopilotSessionErrorFailsDespiteExitCodeZero(t *testing.T) {
	evs := parseAll(CopilotAdapter{}.NewParser(Task{}),
		`{"type":"session.error","data":{"errorType":"quota","message":"out of premium requests"}}`,
		`{"type":"result","sessionId":"s1","exitCode":0}`)
	last := evs[len(evs)-1]
	if last.Kind != KindResult || last.Success || last.Text != "out of premium requests" {
		t.Fatalf("result %+v", last)
	}
}

func TestOpenCodeWithoutStopHasNoResult(t *testing.T) {
	evs := parseAll(OpenCodeAdapter{}.NewParser(Task{}),
		`{"type":"step_finish","sessionID":"ses_1","part":{"reason":"tool-calls","cost":0.1}}`)
	for _, ev := range evs {
		if ev.Kind == KindResult {
			t.Fatalf("result without a final stop: %+v", ev)
		}
	}
}

// FuzzParsers feeds arbitrary lines to every parser: none may panic, and
// every event must marshal.
func FuzzParsers(f *testing.F) {
	for _, name := range transcriptFiles(f) {
		tr := loadTranscript(f, name)
		for _, l := range tr.stdout {
			f.Add(l)
		}
	}
	f.Add([]byte(`{"type":"tool_call","subtype":"completed","tool_call":{"a":{},"b":{}}}`))
	f.Add([]byte(`{"type":"user","message":{"content":[{"type":"tool_result","tool_use_id":null}]}}`))
	all := append(jsonFormats, AiderAdapter{})
	f.Fuzz(func(t *testing.T, line []byte) {
		for _, a := range all {
			p := a.NewParser(Task{})
			var evs []Event
			emit := func(ev Event) { evs = append(evs, ev) }
			p.Parse(line, emit)
			p.Parse(bytes.ToUpper(line), emit)
			p.Flush(emit)
			if _, err := json.Marshal(evs); err != nil {
				t.Fatalf("%s: %v", a.Name(), err)
			}
		}
	})
}

func mustMarshal(t *testing.T, v any) []byte {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return b
}
