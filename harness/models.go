package harness

import (
	"fmt"
	"strings"
)

// modelNames is what each CLI takes as a model name: its aliases, and the
// prefixes of the full model ids it knows. A CLI missing here takes any
// well-formed name (its own list is not known to Fetch).
var modelNames = map[Name]struct {
	aliases  []string
	prefixes []string
	// provider: the name is provider/model (OpenCode, Aider).
	provider bool
}{
	Claude:  {aliases: []string{"sonnet", "opus", "haiku", "opusplan", "default"}, prefixes: []string{"claude-"}},
	Codex:   {prefixes: []string{"gpt-", "o1", "o3", "o4", "codex-"}},
	Gemini:  {aliases: []string{"auto", "pro", "flash", "flash-lite"}, prefixes: []string{"gemini-"}},
	Copilot: {prefixes: []string{"claude-", "gpt-", "gemini-", "o1", "o3", "o4"}},
	Qwen:    {prefixes: []string{"qwen", "gpt-", "claude-", "gemini-"}},
	// OpenCode and Aider name models provider/model
	// ("anthropic/claude-sonnet-4-5"); Aider also takes its aliases.
	OpenCode: {provider: true},
	Aider:    {aliases: []string{"sonnet", "opus", "haiku", "4o", "gpt-4o", "deepseek", "gemini", "o3-mini"}, provider: true},
}

// CheckModel tells whether CLI name takes model, with the names it takes
// when it does not. An empty model (the CLI's default) is always taken.
func CheckModel(name Name, model string) error {
	if model == "" {
		return nil
	}
	if !safeModel.MatchString(model) || len(model) > 200 {
		return fmt.Errorf("harness: model %q is not a model name: %w", model, ErrInvalidTask)
	}
	if IsACPName(name) {
		return fmt.Errorf("harness: %s takes no model from Fetch (ACP has no standard way to set one): set it in the agent's own configuration: %w", name, ErrInvalidTask)
	}
	m, ok := modelNames[name]
	if !ok {
		return nil
	}
	lower := strings.ToLower(model)
	for _, a := range m.aliases {
		if lower == a {
			return nil
		}
	}
	for _, p := range m.prefixes {
		if strings.HasPrefix(lower, p) {
			return nil
		}
	}
	if m.provider {
		if prov, rest, ok := strings.Cut(model, "/"); ok && prov != "" && rest != "" {
			return nil
		}
	}
	return fmt.Errorf("harness: %s does not take the model %q; it takes %s: %w", name, model, describeModels(m.aliases, m.prefixes, m.provider), ErrInvalidTask)
}

// describeModels says what a CLI takes, for CheckModel's error.
func describeModels(aliases, prefixes []string, provider bool) string {
	var parts []string
	if len(aliases) > 0 {
		parts = append(parts, strings.Join(aliases, ", "))
	}
	for _, p := range prefixes {
		parts = append(parts, p+"…")
	}
	if provider {
		parts = append(parts, "provider/model (such as anthropic/claude-sonnet-4-5)")
	}
	return strings.Join(parts, ", ")
}
