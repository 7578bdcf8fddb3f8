package harness

import "fmt"

// QwenVersion is the Qwen Code release the adapter targets.
const QwenVersion = "0.15.10"

// Environment variables Qwen Code reads for its OpenAI-compatible and
// DashScope routes.
const (
	envOpenAIBaseURL = "OPENAI_BASE_URL"
	envOpenAIModel   = "OPENAI_MODEL"
	envDashScopeKey  = "DASHSCOPE_API_KEY"
)

// QwenAdapter drives Qwen Code (`qwen -p … -o stream-json --yolo`), a
// Gemini CLI fork that writes Claude Code's stream-json.
//
// Qwen reports an API failure as assistant text "[API Error: …]" with a
// successful result and exit 0; the parser turns that into a failure.
// With OPENAI_API_KEY configured the adapter selects --auth-type openai,
// without which headless Qwen refuses to start.
//
// Two-way (TwoWay, acp.go), it runs `qwen --acp` without --yolo.
type QwenAdapter struct{ acpTwoWay }

// Name implements Adapter.
func (QwenAdapter) Name() Name { return Qwen }

// Version implements Adapter.
func (QwenAdapter) Version() string { return QwenVersion }

// Invocation implements Adapter.
func (QwenAdapter) Invocation(task Task, creds Credentials) (Invocation, error) {
	if err := validate(task); err != nil {
		return Invocation{}, fmt.Errorf("harness: qwen invocation: %w", err)
	}
	if task.ReadOnly {
		return Invocation{}, readOnlyUnsupported(Qwen)
	}
	// --prompt=… keeps a prompt that starts with '-' from being read as a flag.
	argv := []string{"qwen", "--output-format", "stream-json", "--yolo"}
	if creds[envOpenAIAPIKey] != "" {
		argv = append(argv, "--auth-type", "openai")
	}
	if task.Model != "" {
		argv = append(argv, "--model", task.Model)
	}
	if task.ResumeID != "" {
		argv = append(argv, "--resume", task.ResumeID)
	}
	argv = append(argv, "--prompt="+Prompt(task))
	env := buildEnv(nil, creds, keyNames(QwenAdapter{}.Keys())...)
	return Invocation{Argv: argv, Env: env}, nil
}

// Keys implements Adapter.
func (QwenAdapter) Keys() []Key {
	return []Key{{envOpenAIAPIKey, true}, {envOpenAIBaseURL, false}, {envOpenAIModel, false}, {envDashScopeKey, true}}
}

// NewParser implements Adapter.
func (QwenAdapter) NewParser(task Task) Parser {
	return &formatOr{rpc: isACP, twoWay: newACPParser(task), otherwise: newClaudeParser(qwenTools)}
}

// TwoWayInvocation implements TwoWay.
func (a QwenAdapter) TwoWayInvocation(task Task, mode TwoWayMode, creds Credentials) (Invocation, error) {
	if err := a.checkMode(task, mode); err != nil {
		return Invocation{}, fmt.Errorf("harness: qwen two-way invocation: %w", err)
	}
	argv := []string{"qwen", "--acp"}
	if creds[envOpenAIAPIKey] != "" {
		argv = append(argv, "--auth-type", "openai")
	}
	if task.Model != "" {
		argv = append(argv, "--model", task.Model)
	}
	env := buildEnv(nil, creds, keyNames(QwenAdapter{}.Keys())...)
	return Invocation{Argv: argv, Env: env}, nil
}

// Traits implements Adapter. HARNESSES.md §7 confirms no read-only mode for
// Qwen Code (only --yolo was run). A resumed session's result.usage counts
// the whole session.
func (QwenAdapter) Traits() Traits {
	return acpTraits(Traits{ResumeUsage: UsageCumulative})
}

var qwenTools = claudeFlavor{
	shell:          map[string]bool{"run_shell_command": true},
	edits:          map[string]string{"edit": "file_path", "write_file": "file_path"},
	apiErrorPrefix: "[API Error",
	messageUsage:   true,
}
