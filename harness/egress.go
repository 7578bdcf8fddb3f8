package harness

import (
	"maps"
	"slices"
	"strings"

	"github.com/fetch-dev/fetch/kennel"
	"github.com/fetch-dev/fetch/kennel/egress"
)

// modelAPI is a model API whose CLIs can be pointed at another base URL,
// so that their key stays with the kennel's way out (package
// kennel/egress): the CLI is given a placeholder for each of keys and the
// proxy's route as baseVar; the proxy puts the real key back on the way
// out to upstream (or to the base URL the owner configured in baseVar).
type modelAPI struct {
	name     string
	upstream string
	baseVar  string
	keys     []string
}

// modelAPIs are the APIs reached through the proxy's routes. Claude Code
// reads ANTHROPIC_BASE_URL; Codex, Qwen Code, OpenCode (through the AI
// SDK) and Aider (through LiteLLM) read OPENAI_BASE_URL and
// ANTHROPIC_BASE_URL. The other keys (Gemini CLI's, whose base URL
// setting selects an auth type its headless mode refuses; Copilot's
// GitHub token; Cursor's; the other providers' of OpenCode and Aider) are
// kept in the kennel's run environment: KeptKeys names them.
var modelAPIs = []modelAPI{
	{"anthropic", "https://api.anthropic.com", envAnthropicBaseURL, []string{envAnthropicAPIKey, envClaudeOAuthToken, envAnthropicAuthToken}},
	{"openai", "https://api.openai.com/v1", envOpenAIBaseURL, []string{envOpenAIAPIKey, envCodexAPIKey}},
}

// cliHosts are the hosts each CLI reaches through the forward proxy
// beside its API route: the APIs of the keys it keeps, and what the CLI
// fetches to run at all.
var cliHosts = map[Name][]string{
	Gemini:   {"generativelanguage.googleapis.com", "cloudcode-pa.googleapis.com", "oauth2.googleapis.com", "aiplatform.googleapis.com"},
	Copilot:  {"api.githubcopilot.com", "*.githubcopilot.com", "api.github.com", "copilot-proxy.githubusercontent.com"},
	Cursor:   {"*.cursor.sh", "*.cursor.com"},
	Qwen:     {"dashscope.aliyuncs.com", "dashscope-intl.aliyuncs.com"},
	OpenCode: {"models.dev", "generativelanguage.googleapis.com", "api.deepseek.com", "api.groq.com", "api.mistral.ai", "api.x.ai"},
	Aider:    {"generativelanguage.googleapis.com", "api.deepseek.com", "api.groq.com", "api.mistral.ai", "api.x.ai"},
}

// CLIHosts returns the hosts each harness may reach through the proxy
// by default, for egress.Config.CLIHosts.
func CLIHosts() map[string][]string {
	out := make(map[string][]string, len(cliHosts))
	for n, h := range cliHosts {
		out[string(n)] = slices.Clone(h)
	}
	return out
}

// HostsOf returns the hosts h may reach by default. A generic ACP harness
// ("acp:…") has none: Fetch does not know what its agent needs, so it
// reaches only the hosts the owner allowed.
func HostsOf(h Name) []string { return slices.Clone(cliHosts[h]) }

// tokenCLI is the CLI a run's egress token names: the harness, or "acp"
// for every generic ACP harness (whose name holds characters a token's
// field cannot, and which has no hosts of its own).
func tokenCLI(h Name) string {
	if IsACPName(h) {
		return "acp"
	}
	return string(h)
}

// RoutedKeys returns the credential variables that never enter the kennel
// behind the proxy (their API is reached through a route), sorted.
func RoutedKeys() []string {
	var out []string
	for _, a := range modelAPIs {
		out = append(out, a.keys...)
	}
	slices.Sort(out)
	return out
}

// KeptKeys returns the secret variables of an adapter that still enter the
// kennel behind the proxy, because its CLI cannot be pointed elsewhere.
func KeptKeys(a Adapter) []string {
	routed := RoutedKeys()
	var out []string
	for _, k := range a.Keys() {
		if k.Secret && !slices.Contains(routed, k.Name) {
			out = append(out, k.Name)
		}
	}
	return out
}

// Placeholder is what the kennel sees in place of a routed credential:
// the real value's prefix up to its last '-' among the first 16
// characters (so a CLI that checks a key's kind still sees it), then a
// marker naming the variable. It holds nothing secret.
func Placeholder(name, real string) string {
	prefix := ""
	if i := strings.LastIndexByte(real[:min(len(real), 16)], '-'); i > 0 {
		prefix = real[:i+1]
		if strings.ContainsFunc(prefix, func(r rune) bool {
			return !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '-' || r == '_')
		}) {
			prefix = ""
		}
	}
	return prefix + "fetch-placeholder-" + strings.ToLower(strings.ReplaceAll(name, "_", "-"))
}

// EgressAPIs returns the proxy's API routes for creds: one per model API
// one of whose keys is set, to the base URL the owner configured or the
// API's own, with each key's placeholder standing for its value.
func EgressAPIs(creds Credentials) []egress.API {
	var out []egress.API
	for _, a := range modelAPIs {
		secrets := map[string]string{}
		for _, k := range a.keys {
			if v := creds[k]; v != "" {
				secrets[Placeholder(k, v)] = v
			}
		}
		if len(secrets) == 0 {
			continue
		}
		up := a.upstream
		if v := creds[a.baseVar]; v != "" {
			up = strings.TrimSuffix(v, "/")
		}
		out = append(out, egress.API{Name: a.name, Upstream: up, Secrets: secrets})
	}
	return out
}

// Egress sends a task's run through the kennel's way out: Config is the
// proxy's whole configuration (EgressAPIs among it), and the run's
// credentials become placeholders and routes (see modelAPIs).
type Egress struct {
	Config egress.Config
}

// routed returns creds as the kennel sees them behind the proxy, for a run
// with token: each routed key a placeholder, its API's base URL variable
// the proxy's route.
func routed(creds Credentials, token string) Credentials {
	out := maps.Clone(creds)
	for _, a := range modelAPIs {
		set := false
		for _, k := range a.keys {
			if v := creds[k]; v != "" {
				out[k] = Placeholder(k, v)
				set = true
			}
		}
		if set {
			out[a.baseVar] = egress.APIBase(token, a.name)
		}
	}
	return out
}

// egressRun prepares a run of adapter for task behind the proxy: the
// credentials the adapter sees and the exec's Egress. Without task.Egress
// it changes nothing.
func egressRun(adapter Adapter, task Task, creds Credentials) (Credentials, *kennel.EgressRun) {
	if task.Egress == nil {
		return creds, nil
	}
	cfg := task.Egress.Config
	token := egress.Token(cfg.Key, egress.WorkspaceID(task.Workspace), tokenCLI(adapter.Name()), task.ID)
	return routed(creds, token), &kennel.EgressRun{Config: cfg, Token: token}
}
