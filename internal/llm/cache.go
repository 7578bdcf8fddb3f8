package llm

import (
	"strings"

	openrouter "github.com/revrost/go-openrouter"
)

// markerModels are the OpenRouter model-name prefixes whose providers
// cache a prompt prefix only where the request marks a breakpoint
// (cache_control {"type": "ephemeral"} on a text part), after OpenRouter's
// "Prompt Caching" guide (openrouter.ai/docs/guides/best-practices/
// prompt-caching): Anthropic's Claude models, and Google's Gemini models,
// whose explicit caching OpenRouter drives from the same markers (Gemini
// 2.5 also caches implicitly; the markers do no harm there). The others
// OpenRouter routes to — OpenAI, DeepSeek, xAI's Grok, Moonshot, Groq —
// cache matching prefixes by themselves and are sent no markers.
// Alibaba's Qwen takes markers too, but only on Alibaba's own endpoint of
// a model OpenRouter may route elsewhere, so Qwen is left unmarked.
var markerModels = []string{"anthropic/", "google/gemini"}

// TakesCacheMarkers tells whether requests for model mark their cache
// breakpoints (see markerModels).
func TakesCacheMarkers(model string) bool {
	model = strings.ToLower(model)
	for _, p := range markerModels {
		if strings.HasPrefix(model, p) {
			return true
		}
	}
	return false
}

// ephemeral is the only cache_control type providers take (5 minutes).
var ephemeral = &openrouter.CacheControl{Type: "ephemeral"}

// content is a message's content on the wire: its text, or, with markers
// and a breakpoint inside it, text parts of which the one ending at
// CacheUpTo carries cache_control.
func content(m Message, markers bool) openrouter.Content {
	if !markers || m.CacheUpTo <= 0 || m.Content == "" {
		return openrouter.Content{Text: m.Content}
	}
	cut := min(m.CacheUpTo, len(m.Content))
	parts := []openrouter.ChatMessagePart{{Type: openrouter.ChatMessagePartTypeText, Text: m.Content[:cut], CacheControl: ephemeral}}
	if rest := m.Content[cut:]; strings.TrimSpace(rest) != "" {
		parts = append(parts, openrouter.ChatMessagePart{Type: openrouter.ChatMessagePartTypeText, Text: rest})
	}
	return openrouter.Content{Multi: parts}
}
