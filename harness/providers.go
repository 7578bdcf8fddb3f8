package harness

import (
	"maps"
	"slices"
	"strings"
)

// Provider API key variables, for the CLIs that talk to any provider
// (OpenCode, Aider). Such a CLI gets the key of its model's provider only.
// OpenRouter is deliberately absent: OPENROUTER_API_KEY is Fetch's own key
// and never enters the kennel.
const (
	envGoogleGenAIKey = "GOOGLE_GENERATIVE_AI_API_KEY"
	envDeepSeekAPIKey = "DEEPSEEK_API_KEY"
	envGroqAPIKey     = "GROQ_API_KEY"
	envMistralAPIKey  = "MISTRAL_API_KEY"
	envXAIAPIKey      = "XAI_API_KEY"
)

// providerEnv maps a provider name (the part before '/' in
// "provider/model") to the variables that carry its credentials.
var providerEnv = map[string][]string{
	"anthropic": {envAnthropicAPIKey, envAnthropicBaseURL},
	"openai":    {envOpenAIAPIKey, envOpenAIBaseURL},
	"google":    {envGeminiAPIKey, envGoogleGenAIKey},
	"gemini":    {envGeminiAPIKey},
	"deepseek":  {envDeepSeekAPIKey},
	"groq":      {envGroqAPIKey},
	"mistral":   {envMistralAPIKey},
	"xai":       {envXAIAPIKey},
}

// providerKeys are the variables of every provider, in a fixed order:
// its base URLs are settings, the rest API keys.
func providerKeys() []Key {
	var out []Key
	for _, p := range slices.Sorted(maps.Keys(providerEnv)) {
		for _, n := range providerEnv[p] {
			if !slices.ContainsFunc(out, func(k Key) bool { return k.Name == n }) {
				out = append(out, Key{Name: n, Secret: !strings.HasSuffix(n, "_BASE_URL")})
			}
		}
	}
	return out
}

// modelAliases maps Aider's short model names to their provider.
var modelAliases = map[string]string{
	"sonnet": "anthropic", "opus": "anthropic", "haiku": "anthropic",
	"4o": "openai", "gpt-4o": "openai", "o3": "openai", "o4-mini": "openai",
	"gemini": "gemini", "flash": "gemini",
	"deepseek": "deepseek", "r1": "deepseek",
	"grok3": "xai",
}

// providerOf returns the provider of a model name: the prefix before '/',
// an alias, or a guess from the model family ("claude-…", "gpt-…").
func providerOf(model string) string {
	if p, _, ok := strings.Cut(model, "/"); ok {
		return strings.ToLower(p)
	}
	m := strings.ToLower(model)
	if p, ok := modelAliases[m]; ok {
		return p
	}
	switch {
	case strings.HasPrefix(m, "claude"):
		return "anthropic"
	case strings.HasPrefix(m, "gpt"), strings.HasPrefix(m, "o1"), strings.HasPrefix(m, "o3"), strings.HasPrefix(m, "o4"):
		return "openai"
	case strings.HasPrefix(m, "gemini"):
		return "gemini"
	case strings.HasPrefix(m, "deepseek"):
		return "deepseek"
	}
	return ""
}
