package harness

import "testing"

// BenchmarkParse measures parser throughput per output format (MB/s of
// stdout), over each CLI's task transcript.
func BenchmarkParse(b *testing.B) {
	formats := []struct {
		format     string
		adapter    Adapter
		transcript string
	}{
		{"claude-stream-json", ClaudeAdapter{}, "claude-task.jsonl"},
		{"claude-stream-json-partial", ClaudeAdapter{}, "claude-task-partial.jsonl"},
		{"codex-exec-json", CodexAdapter{}, "codex-task.jsonl"},
		{"gemini-stream-json", GeminiAdapter{}, "gemini-task.jsonl"},
		{"copilot-json", CopilotAdapter{}, "copilot-task.jsonl"},
		{"opencode-json", OpenCodeAdapter{}, "opencode-task.jsonl"},
		{"qwen-stream-json", QwenAdapter{}, "qwen-task.jsonl"},
		{"cursor-stream-json", CursorAdapter{}, "cursor-task.jsonl"},
		{"aider-text", AiderAdapter{}, "aider-task.txt"},
	}
	for _, f := range formats {
		tr := loadTranscript(b, f.transcript)
		var size int64
		for _, l := range tr.stdout {
			size += int64(len(l)) + 1
		}
		b.Run(f.format, func(b *testing.B) {
			b.SetBytes(size)
			b.ReportAllocs()
			events := 0
			emit := func(Event) { events++ }
			for b.Loop() {
				p := f.adapter.NewParser(benchTask)
				for _, l := range tr.stdout {
					p.Parse(l, emit)
				}
				p.Flush(emit)
			}
			if events == 0 {
				b.Fatal("no events")
			}
		})
	}
}

var benchTask = Task{ID: "bench"}
