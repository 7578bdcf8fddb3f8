package main

import (
	"errors"
	"fmt"
	"log/slog"
	"math"
	"net"
	"net/url"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/fetch-dev/fetch/harness"
	"github.com/fetch-dev/fetch/internal/checks"
	"github.com/fetch-dev/fetch/internal/price"
	"github.com/fetch-dev/fetch/internal/review"
	"github.com/fetch-dev/fetch/internal/trust"
	"github.com/fetch-dev/fetch/kennel"
)

// defaultKennelIdle is how long a kennel may be idle before it is stopped.
const defaultKennelIdle = 30 * time.Minute

// Environment variable names: the configuration contract.
const (
	envDataDir      = "FETCH_DATA_DIR"
	envWorkspaces   = "FETCH_WORKSPACES"
	envOwnerID      = "FETCH_OWNER_ID"
	envAllowedIDs   = "FETCH_ALLOWED_IDS"
	envDiscordToken = "FETCH_DISCORD_TOKEN"
	envDiscordURL   = "FETCH_DISCORD_URL"
	envOpenRouter   = "OPENROUTER_API_KEY"
	envLLMURL       = "FETCH_LLM_URL"
	envModel        = "FETCH_MODEL"
	envKennelImage  = "FETCH_KENNEL_IMAGE"
	envKennelIdle   = "FETCH_KENNEL_IDLE"
	envLogLevel     = "FETCH_LOG_LEVEL"
	envIdleAfter    = "FETCH_IDLE_AFTER"
	envRateLimit    = "FETCH_RATE_LIMIT"
	envTimezone     = "FETCH_TIMEZONE"
	envGitInterval  = "FETCH_GIT_INTERVAL"
	envGitHubToken  = "FETCH_GITHUB_TOKEN"
	envGitHubURL    = "FETCH_GITHUB_URL"
	envPRPoll       = "FETCH_PR_POLL"
	envCheckTimeout = "FETCH_CHECK_TIMEOUT"
	envEngines      = "FETCH_ENGINES"
	envPageAddr     = "FETCH_PAGE_ADDR"
	envPageURL      = "FETCH_PAGE_URL"
	envPageTTL      = "FETCH_PAGE_TTL"
	envMetricsAddr  = "FETCH_METRICS_ADDR"
	envEgress       = "FETCH_EGRESS"
	envEgressNets   = "FETCH_EGRESS_NETWORKS"
	envKeep         = "FETCH_KEEP"
	// The certificate authorities Go trusts (crypto/x509 reads the first
	// two) and git's own bundle: Fetch hands them to host git explicitly.
	envSSLCertFile = "SSL_CERT_FILE"
	envSSLCertDir  = "SSL_CERT_DIR"
	envGitSSLCA    = "GIT_SSL_CAINFO"

	envMaxRounds       = "FETCH_MAX_ROUNDS"
	envTurnTimeout     = "FETCH_TURN_TIMEOUT"
	envApprovalTTL     = "FETCH_APPROVAL_TTL"
	envBudgetTurnTok   = "FETCH_BUDGET_TURN_TOKENS"
	envBudgetTurnUSD   = "FETCH_BUDGET_TURN_USD"
	envBudgetDayTokens = "FETCH_BUDGET_DAY_TOKENS"
	envBudgetDayUSD    = "FETCH_BUDGET_DAY_USD"
	envHarness         = "FETCH_HARNESS"
	envTaskTimeout     = "FETCH_TASK_TIMEOUT"
	envTaskBudgetUSD   = "FETCH_TASK_BUDGET_USD"
	envPrices          = "FETCH_PRICES"
	envDailyBudgetUSD  = "FETCH_DAILY_BUDGET_USD"
	envMaxTasks        = "FETCH_MAX_TASKS"
	envAttachMaxBytes  = "FETCH_ATTACH_MAX_BYTES"
	envAttachTypes     = "FETCH_ATTACH_TYPES"
	envOutMaxFiles     = "FETCH_OUT_MAX_FILES"
	envOutMaxBytes     = "FETCH_OUT_MAX_BYTES"
	envAutoMergeFiles  = "FETCH_AUTOMERGE_MAX_FILES"
	envAutoMergeLines  = "FETCH_AUTOMERGE_MAX_LINES"
	envAutoMergePaths  = "FETCH_AUTOMERGE_PATHS"
)

// secretEnv names the variables whose values are redacted from
// everything Fetch sends, logs and stores, besides the Discord token and
// the OpenRouter key: every secret credential a coding CLI may get, as the
// adapters declare them (harness.Adapter.Keys), and GITHUB_TOKEN, which no
// CLI gets but may well be in Fetch's environment.
func secretEnv() []string {
	out := []string{"GITHUB_TOKEN"}
	for _, k := range harnessKeys() {
		if k.Secret {
			out = append(out, k.Name)
		}
	}
	return out
}

// harnessKeys are the credential variables of every adapter, each once,
// sorted by name.
func harnessKeys() []harness.Key {
	reg := harness.NewRegistry()
	seen := map[string]harness.Key{}
	for _, n := range reg.Names() {
		a, _ := reg.Get(n)
		for _, k := range a.Keys() {
			if prev, ok := seen[k.Name]; !ok || k.Secret && !prev.Secret {
				seen[k.Name] = k
			}
		}
	}
	out := make([]harness.Key, 0, len(seen))
	for _, k := range seen {
		out = append(out, k)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}

// configHelp documents every variable for --help.
const configHelp = `Configuration (environment):
  FETCH_DATA_DIR       data directory holding fetch.db (default ~/.local/share/fetch)
  FETCH_WORKSPACES     workspaces directory (default $FETCH_DATA_DIR/workspaces)
  FETCH_OWNER_ID       the owner's Discord user id (digits)
  FETCH_ALLOWED_IDS    other Discord user ids allowed to talk to Fetch, comma separated
  FETCH_DISCORD_TOKEN  the Discord bot token
  FETCH_DISCORD_URL    Discord's base URL (default https://discord.com)
  OPENROUTER_API_KEY   key for the LLM provider
  FETCH_LLM_URL        OpenAI-compatible API base URL (default https://openrouter.ai/api/v1)
  FETCH_MODEL          model name (default anthropic/claude-sonnet-4.5)
  FETCH_KENNEL_IMAGE   sandbox image (default fetch-kennel:latest)
  FETCH_KENNEL_IDLE    how long a workspace's kennel (its container) may sit idle before fetch serve or
                       fetch chat stops it, e.g. 30m; 0 or off keeps kennels up (default 30m). The next task
                       or command that needs it starts it again
  FETCH_LOG_LEVEL      debug, info, warn or error (default info; warn for chat)
  FETCH_IDLE_AFTER     quiet period before RESTING, e.g. 30m; 0 never rests (default 30m)
  FETCH_RATE_LIMIT     messages per user and period on Discord, e.g. 30/60s; 0 turns it off (default 30/60s)
  FETCH_TIMEZONE       the owner's time zone for /remind and /schedule, e.g. Europe/Berlin (default: the system's)
  FETCH_KEEP           how long delivered messages and ended tasks' events and patches are kept, e.g. 90d
                       or 720h; 0 keeps them forever (default 90d; the audit log is always kept). fetch serve
                       prunes at start and daily, fetch prune on demand
  FETCH_GIT_INTERVAL   how often a watched workspace's upstream is fetched, e.g. 5m; 0 never (default 5m)
  FETCH_HARNESS        the coding CLI tasks use unless told otherwise (default claude): claude, codex,
                       gemini, copilot, opencode, qwen, aider or cursor (the CLI must be in the kennel image),
                       or acp:COMMAND [ARGS…] for any agent in the kennel that speaks the Agent Client
                       Protocol (e.g. acp:goose acp): it runs two-way, gets no key from Fetch, and reaches
                       only the hosts you allowed (fetch workspace hosts)
  FETCH_TASK_TIMEOUT   wall-time limit of one task run (default 30m)
  FETCH_TASK_BUDGET_USD   dollars one task may cost (its coding CLI and Fetch's own LLM calls for it); a chat's
                       two-way run that passes it is paused and the owner asked to raise the cap or stop
                       (/budget); any other run is stopped and fails (default 0: no cap)
  FETCH_PRICES         a file of model prices that extends and overrides Fetch's table, one model a line:
                       MODEL INPUT OUTPUT CACHE_READ CACHE_WRITE DATE SOURCE (dollars per million tokens; a
                       malformed line stops Fetch at start, naming it). A model without a price is priced
                       as its provider's dearest known model, and its cost marked estimated; with a budget
                       set, so is one of no known provider, as the dearest of all
  FETCH_DAILY_BUDGET_USD  dollars per UTC day for tasks and Fetch's own LLM calls together; over it a new task is
                       asked about first, and "fetch task run" needs --over-budget (default 0: no cap)
  FETCH_MAX_TASKS      tasks running at once across workspaces; more are queued (default 4)
  FETCH_ATTACH_MAX_BYTES  the largest file the owner may attach to a message for a task (default 8388608)
  FETCH_ATTACH_TYPES   the file types attachments may be, by their content, comma separated (default
                       image/png,image/jpeg,image/gif,image/webp,text/plain,application/pdf)
  FETCH_OUT_MAX_FILES  files a task's CLI may send with its result from .fetch/out/ in its worktree (default 10)
  FETCH_OUT_MAX_BYTES  largest such file, in bytes (default 8388608, Discord's upload limit; all of one result's
                       files together are at most about 7.7 MiB)
  FETCH_GITHUB_TOKEN   GitHub token for pushing task branches and opening pull requests (a fine-grained
                       token on the repositories: Contents read/write, Pull requests read/write, Metadata read);
                       without it nothing is pushed. It is Fetch's only: never given to a coding CLI.
  FETCH_GITHUB_URL     GitHub's API URL (default https://api.github.com/; Enterprise: https://HOST/api/v3/)
  FETCH_PR_POLL        how often open pull requests are checked for a merge or close (default 1m)
  FETCH_AUTOMERGE_MAX_FILES  in an autonomous workspace, Fetch merges its pull request on its own only when
                       it changes at most this many files (default 20; a workspace sets its own with /automerge)
  FETCH_AUTOMERGE_MAX_LINES  ... and at most this many lines, added plus removed (default 400)
  FETCH_AUTOMERGE_PATHS  paths that always need the owner's Merge in every workspace, comma separated (a
                       directory ending in /, a file name such as *.sql, or a path from the root), beside CI
                       workflows, lockfiles and dependency manifests and deploy files, which always do
  FETCH_CHECK_TIMEOUT  the time a workspace's checks (its tests, run in its kennel before a pull request
                       opens or merges; /checks) may take together in one shipment (default 10m); a check
                       still running then is cut and reported as timed out
  SSL_CERT_FILE, SSL_CERT_DIR  a PEM bundle and a directory of certificate authorities to trust besides the
                       system's (e.g. a GitHub Enterprise server's private CA): Fetch's GitHub calls and its own
                       git (clones, pushes) trust them; SSL_CERT_DIR is one directory
  GIT_SSL_CAINFO       a PEM bundle Fetch's git takes instead of SSL_CERT_FILE (its GitHub calls trust it too)
  FETCH_ENGINES        Docker engines new workspaces may go to, comma separated (default: local, the one
                       DOCKER_HOST or the default socket gives): local, a docker context name, or
                       NAME=ssh://USER@HOST[:PORT][?key=FILE&known_hosts=FILE] or
                       NAME=tcp://HOST[:PORT]?certs=DIR (ca.pem, cert.pem, key.pem); a workspace stays
                       on the engine it was placed on (the one with the most memory left)
  FETCH_PAGE_ADDR      where fetch serve and fetch chat serve the read-only task page: PORT or :PORT
                       (on 127.0.0.1), HOST:PORT, or off (default 127.0.0.1:8686, left out when taken);
                       its links come with each task, and fetch page prints them
  FETCH_PAGE_URL       the page's address as the browser reaches it, e.g. behind a reverse proxy
                       https://fetch.example.com/ (default http://FETCH_PAGE_ADDR)
  FETCH_PAGE_TTL       how long a task page link stays valid (default 168h)
  FETCH_METRICS_ADDR   serve Prometheus metrics at http://ADDR/metrics from fetch serve and fetch chat, e.g.
                       :9090 (a bare port listens on 127.0.0.1 only; name a host, such as 0.0.0.0:9090, to
                       expose them further). Default: off
  FETCH_EGRESS         on (default) or off. On: the kennels have no route out; their only way out is a
                       proxy beside them that reaches only each CLI's hosts and the hosts allowed to the
                       workspace (fetch workspace hosts), and adds the Anthropic and OpenAI keys on the way
                       out (the kennel sees placeholders). Off: the kennels are on Docker's default network
                       with every key inside them (not recommended: one-shot CLIs bypass permissions)
  FETCH_EGRESS_NETWORKS Docker networks the proxy joins to reach out, comma separated (default bridge)
  ANTHROPIC_API_KEY, OPENAI_API_KEY, … credentials for the coding CLIs (each gets only its own; behind the
                       proxy the Anthropic and OpenAI ones never enter the kennel)

Agent (the LLM loop):
  FETCH_MAX_ROUNDS          tool rounds an action may use before its final answer (default 8)
  FETCH_TURN_TIMEOUT        wall time of an action before its final answer (default 5m)
  FETCH_APPROVAL_TTL        how long an approval waits for yes/no before it counts as no (default 1h)
  FETCH_BUDGET_TURN_TOKENS  tokens one request may use before Fetch pauses and asks (default 0: no limit)
  FETCH_BUDGET_TURN_USD     dollars one request may cost before Fetch pauses and asks (default 0: no limit)
  FETCH_BUDGET_DAY_TOKENS   tokens per UTC day before Fetch pauses and asks (default 0: no limit)
  FETCH_BUDGET_DAY_USD      dollars per UTC day before Fetch pauses and asks (default 0: no limit)
  Identity: COLLAR.md, ALPHA.md, agents/*.md and skills/*/SKILL.md in $FETCH_DATA_DIR/identity
  override the built-in ones and are reloaded when they change.`

// Config is Fetch's whole configuration. It enters once, here.
type Config struct {
	DataDir    string
	Workspaces string
	// Egress: the kennels' only way out is the proxy (FETCH_EGRESS);
	// EgressNetworks are the networks it reaches out on.
	Egress         bool
	EgressNetworks []string
	OwnerID        string
	AllowedIDs     []string
	DiscordToken   string
	DiscordURL     string
	OpenRouter     string
	LLMURL         string
	Model          string
	KennelImage    string
	// KennelIdle is how long a kennel may be idle before it is stopped
	// (FETCH_KENNEL_IDLE); 0: never.
	KennelIdle time.Duration
	// LogLevel is empty when FETCH_LOG_LEVEL is unset.
	LogLevel  string
	IdleAfter time.Duration

	MaxRounds   int
	TurnTimeout time.Duration
	ApprovalTTL time.Duration
	// Budgets; zero means no limit.
	BudgetTurnTokens int
	BudgetTurnUSD    float64
	BudgetDayTokens  int
	BudgetDayUSD     float64
	// AttachMaxBytes and AttachTypes bound the files that come with
	// messages (package attach; defaults there when zero).
	AttachMaxBytes int
	AttachTypes    []string
	// TaskBudgetUSD caps one task's cost, DailyBudgetUSD a UTC day's
	// (tasks and orchestrator); zero means no cap.
	TaskBudgetUSD  float64
	DailyBudgetUSD float64
	// Prices is the price table: Fetch's, extended by FETCH_PRICES.
	Prices *price.Table
	// OutMaxFiles and OutMaxBytes bound the files a task's CLI sends
	// with its result (task.Config); zero for the defaults.
	OutMaxFiles int
	OutMaxBytes int
	// AutoMerge is what a change may touch and still be merged without
	// the owner in every workspace that /automerge does not set
	// otherwise (zero fields: review's defaults).
	AutoMerge review.Limits
	// RateLimit messages per RatePer are accepted from one Discord user;
	// RateLimit 0 turns the limit off.
	RateLimit int
	RatePer   time.Duration
	// Secrets are the configured secret values (the Discord token, the
	// OpenRouter key, harness keys), for redaction.
	Secrets []string
	// Location is the owner's time zone.
	Location *time.Location
	// Keep is how long what is done with is kept (FETCH_KEEP); 0 keeps
	// it forever.
	Keep time.Duration
	// GitInterval is how often watched workspaces fetch their upstream.
	GitInterval time.Duration
	// Harness is the default coding CLI; TaskTimeout bounds a task run;
	// MaxTasks bounds the tasks running at once.
	Harness     string
	TaskTimeout time.Duration
	MaxTasks    int
	// Credentials are the coding CLIs' credentials found in the
	// environment; each CLI gets only its own.
	Credentials harness.Credentials
	// GitHubToken pushes and opens pull requests (empty: nothing is
	// pushed); GitHubURL is the API's base URL; PRPoll how often open pull
	// requests are polled.
	GitHubToken string
	GitHubURL   string
	PRPoll      time.Duration
	// CheckTimeout is the time the checks of one shipment share.
	CheckTimeout time.Duration
	// CA is what Fetch's HTTPS clients and its host git trust besides the
	// system's authorities (SSL_CERT_FILE, SSL_CERT_DIR, GIT_SSL_CAINFO),
	// checked at start.
	CA trust.CA
	// Engines are the Docker engines new workspaces may go to
	// (FETCH_ENGINES); empty: the local one. Dial is how they are reached
	// (the user's home, the docker CLI's configuration and DOCKER_*).
	Engines []kennel.EngineSpec
	Dial    kennel.DialConfig
	// PageAddr is where fetch serve serves the task page (empty: no page);
	// PageURL its base URL in links (empty: http://PageAddr as bound);
	// PageTTL how long a link is valid.
	PageAddr string
	// PageDefault: PageAddr is the default, not the owner's choice.
	PageDefault bool
	PageURL     string
	PageTTL     time.Duration
	// MetricsAddr is where Prometheus metrics are served (host:port);
	// empty: not served.
	MetricsAddr string
}

// credentialVars name the variables that carry coding CLIs' credentials
// and provider settings: those the adapters declare. OPENROUTER_API_KEY is
// not one of them: it is Fetch's own and never enters the kennel.
func credentialVars() []string {
	var out []string
	for _, k := range harnessKeys() {
		out = append(out, k.Name)
	}
	return out
}

// ConfigError lists every problem found in the configuration.
type ConfigError struct{ Problems []string }

func (e *ConfigError) Error() string {
	return "configuration:\n  - " + strings.Join(e.Problems, "\n  - ")
}

// loadConfig reads the configuration from env, applying defaults, and
// validates it, returning every problem at once as a *ConfigError.
func loadConfig(getenv func(string) string) (Config, error) {
	var problems []string
	c := Config{
		DataDir:      getenv(envDataDir),
		Workspaces:   getenv(envWorkspaces),
		OwnerID:      strings.TrimSpace(getenv(envOwnerID)),
		DiscordToken: getenv(envDiscordToken),
		DiscordURL:   or(getenv(envDiscordURL), "https://discord.com"),
		OpenRouter:   getenv(envOpenRouter),
		LLMURL:       or(getenv(envLLMURL), "https://openrouter.ai/api/v1"),
		Model:        or(getenv(envModel), "anthropic/claude-sonnet-4.5"),
		KennelImage:  or(getenv(envKennelImage), "fetch-kennel:latest"),
		LogLevel:     strings.ToLower(strings.TrimSpace(getenv(envLogLevel))),
		IdleAfter:    30 * time.Minute,
		KennelIdle:   defaultKennelIdle,
		MaxRounds:    8,
		TurnTimeout:  5 * time.Minute,
		ApprovalTTL:  time.Hour,
		RateLimit:    30,
		RatePer:      60 * time.Second,
		Location:     time.Local,
		GitInterval:  5 * time.Minute,
		Keep:         defaultKeep,
		Harness:      or(strings.TrimSpace(getenv(envHarness)), "claude"),
		TaskTimeout:  30 * time.Minute,
		MaxTasks:     4,
		Credentials:  harness.Credentials{},
		GitHubToken:  strings.TrimSpace(getenv(envGitHubToken)),
		GitHubURL:    or(strings.TrimSpace(getenv(envGitHubURL)), "https://api.github.com/"),
		PRPoll:       time.Minute,
		CheckTimeout: checks.DefaultLimit,
		Egress:       true,
	}
	switch v := strings.ToLower(strings.TrimSpace(getenv(envEgress))); v {
	case "", "on", "true", "1", "yes":
	case "off", "false", "0", "no":
		c.Egress = false
	default:
		problems = append(problems, fmt.Sprintf("%s=%q: want on or off", envEgress, v))
	}
	for _, n := range strings.Split(getenv(envEgressNets), ",") {
		if n = strings.TrimSpace(n); n != "" {
			c.EgressNetworks = append(c.EgressNetworks, n)
		}
	}
	for _, k := range credentialVars() {
		if v := getenv(k); v != "" {
			c.Credentials[k] = v
		}
	}
	for _, name := range append([]string{envDiscordToken, envOpenRouter, envGitHubToken}, secretEnv()...) {
		if v := strings.TrimSpace(getenv(name)); v != "" {
			c.Secrets = append(c.Secrets, v)
		}
	}
	if c.DataDir == "" {
		home := getenv("HOME")
		if home == "" {
			problems = append(problems, envDataDir+" is not set and neither is HOME to derive it from")
		} else {
			c.DataDir = filepath.Join(home, ".local", "share", "fetch")
		}
	}
	if c.DataDir != "" && !filepath.IsAbs(c.DataDir) {
		if abs, err := filepath.Abs(c.DataDir); err == nil {
			c.DataDir = abs
		}
	}
	if c.Workspaces == "" && c.DataDir != "" {
		c.Workspaces = filepath.Join(c.DataDir, "workspaces")
	}
	if c.Workspaces != "" && !filepath.IsAbs(c.Workspaces) {
		problems = append(problems, fmt.Sprintf("%s must be an absolute path (the kennel mounts workspaces at the same path), got %q", envWorkspaces, c.Workspaces))
	}
	if c.OwnerID != "" && !isSnowflake(c.OwnerID) {
		problems = append(problems, fmt.Sprintf("%s must be a Discord user id (digits), got %q", envOwnerID, c.OwnerID))
	}
	if v := getenv(envAllowedIDs); strings.TrimSpace(v) != "" {
		for _, id := range strings.Split(v, ",") {
			id = strings.TrimSpace(id)
			if id == "" {
				continue
			}
			if !isSnowflake(id) {
				problems = append(problems, fmt.Sprintf("%s: %q is not a Discord user id (digits)", envAllowedIDs, id))
				continue
			}
			c.AllowedIDs = append(c.AllowedIDs, id)
		}
	}
	for _, u := range []struct{ name, value string }{{envDiscordURL, c.DiscordURL}, {envLLMURL, c.LLMURL}, {envGitHubURL, c.GitHubURL}} {
		p, err := url.Parse(u.value)
		if err != nil || (p.Scheme != "http" && p.Scheme != "https") || p.Host == "" {
			problems = append(problems, fmt.Sprintf("%s must be an http(s) URL, got %q", u.name, u.value))
		}
	}
	switch c.LogLevel {
	case "", "debug", "info", "warn", "error":
	default:
		problems = append(problems, fmt.Sprintf("%s must be debug, info, warn or error, got %q", envLogLevel, c.LogLevel))
	}
	if v := strings.TrimSpace(getenv(envIdleAfter)); v != "" {
		d, err := time.ParseDuration(v)
		if err != nil || d < 0 {
			problems = append(problems, fmt.Sprintf("%s must be a duration such as 30m or 0, got %q", envIdleAfter, v))
		} else {
			c.IdleAfter = d
		}
	}
	if v := strings.ToLower(strings.TrimSpace(getenv(envKennelIdle))); v != "" {
		d, err := time.ParseDuration(v)
		switch {
		case v == "off" || v == "0":
			c.KennelIdle = 0
		case err != nil || d < 0:
			problems = append(problems, fmt.Sprintf("%s must be a duration such as 30m, or 0 or off, got %q", envKennelIdle, v))
		default:
			c.KennelIdle = d
		}
	}
	if v := strings.TrimSpace(getenv(envRateLimit)); v != "" {
		n, per, err := parseRate(v)
		if err != nil {
			problems = append(problems, fmt.Sprintf("%s must be a count per duration such as 30/60s, or 0, got %q", envRateLimit, v))
		} else {
			c.RateLimit, c.RatePer = n, per
		}
	}
	problems = append(problems, c.loadAgent(getenv)...)
	problems = append(problems, c.loadPrices(getenv)...)
	if c.TaskBudgetUSD > 0 || c.DailyBudgetUSD > 0 {
		// A budget holds whatever the model: tokens of a model of no
		// known provider are priced as the dearest, not left unknown.
		c.Prices = c.Prices.PricingUnknown()
	}
	if v := strings.TrimSpace(getenv(envTimezone)); v != "" {
		loc, err := time.LoadLocation(v)
		if err != nil {
			problems = append(problems, fmt.Sprintf("%s must be a time zone such as Europe/Berlin or UTC, got %q", envTimezone, v))
		} else {
			c.Location = loc
		}
	}
	if v := strings.TrimSpace(getenv(envKeep)); v != "" {
		d, err := parseDays(v)
		if err != nil || d < 0 {
			problems = append(problems, fmt.Sprintf("%s must be a duration such as 90d, 720h or 0, got %q", envKeep, v))
		} else {
			c.Keep = d
		}
	}
	if v := strings.TrimSpace(getenv(envGitInterval)); v != "" {
		d, err := time.ParseDuration(v)
		if err != nil || d < 0 || (d > 0 && d < 10*time.Second) {
			problems = append(problems, fmt.Sprintf("%s must be a duration of at least 10s, such as 5m, or 0, got %q", envGitInterval, v))
		} else {
			c.GitInterval = d
		}
	}
	if v := strings.TrimSpace(getenv(envPRPoll)); v != "" {
		d, err := time.ParseDuration(v)
		if err != nil || d < time.Second {
			problems = append(problems, fmt.Sprintf("%s must be a duration of at least 1s, such as 1m, got %q", envPRPoll, v))
		} else {
			c.PRPoll = d
		}
	}
	if v := strings.TrimSpace(getenv(envCheckTimeout)); v != "" {
		d, err := time.ParseDuration(v)
		if err != nil || d < time.Second || d > 2*time.Hour {
			problems = append(problems, fmt.Sprintf("%s must be a duration from 1s to 2h, such as 10m, got %q", envCheckTimeout, v))
		} else {
			c.CheckTimeout = d
		}
	}
	if v := strings.TrimSpace(getenv(envEngines)); v != "" {
		specs, err := kennel.ParseEngines(v)
		if err != nil {
			problems = append(problems, fmt.Sprintf("%s: %v", envEngines, err))
		}
		c.Engines = specs
	}
	c.Dial = kennel.DialConfig{
		Home:            getenv("HOME"),
		DockerConfig:    getenv("DOCKER_CONFIG"),
		DockerHost:      getenv("DOCKER_HOST"),
		DockerTLSVerify: getenv("DOCKER_TLS_VERIFY") != "",
		DockerCertPath:  getenv("DOCKER_CERT_PATH"),
		DockerContext:   getenv("DOCKER_CONTEXT"),
	}
	for i, spec := range c.Engines {
		r, err := spec.Resolve(c.Dial)
		if err != nil {
			problems = append(problems, fmt.Sprintf("%s: %v", envEngines, err))
			continue
		}
		c.Engines[i] = r
	}
	if _, err := harness.NewRegistry().Get(harness.Name(c.Harness)); err != nil {
		if harness.IsACPName(harness.Name(c.Harness)) {
			problems = append(problems, fmt.Sprintf("%s: %v", envHarness, err))
		} else {
			problems = append(problems, fmt.Sprintf("%s must be one of %s or acp:COMMAND [ARGS…], got %q", envHarness, strings.Join(harnessNames(harness.NewRegistry(), ""), ", "), c.Harness))
		}
	}
	if v := strings.TrimSpace(getenv(envTaskTimeout)); v != "" {
		d, err := time.ParseDuration(v)
		if err != nil || d <= 0 {
			problems = append(problems, fmt.Sprintf("%s must be a positive duration such as 30m, got %q", envTaskTimeout, v))
		} else {
			c.TaskTimeout = d
		}
	}
	if v := strings.TrimSpace(getenv(envMaxTasks)); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 || n > 64 {
			problems = append(problems, fmt.Sprintf("%s must be a number from 1 to 64, got %q", envMaxTasks, v))
		} else {
			c.MaxTasks = n
		}
	}
	problems = append(problems, c.loadPage(getenv)...)
	problems = append(problems, c.loadCA(getenv)...)
	if v := strings.TrimSpace(getenv(envMetricsAddr)); v != "" {
		addr, err := metricsAddr(v)
		if err != nil {
			problems = append(problems, fmt.Sprintf("%s must be a port or host:port such as :9090 or 127.0.0.1:9090, got %q", envMetricsAddr, v))
		} else {
			c.MetricsAddr = addr
		}
	}
	if len(problems) > 0 {
		return c, &ConfigError{Problems: problems}
	}
	// The one place the price table enters: every run's usage is priced
	// by it (harness, through internal/price).
	price.Use(c.Prices)
	return c, nil
}

// loadCA reads the certificate authorities to trust; a file that does not
// exist or holds no certificate is a problem that names it.
func (c *Config) loadCA(getenv func(string) string) []string {
	var problems []string
	path := func(name string) string {
		v := strings.TrimSpace(getenv(name))
		if v == "" {
			return ""
		}
		if abs, err := filepath.Abs(v); err == nil {
			v = abs
		}
		return v
	}
	c.CA.File, c.CA.GitFile = path(envSSLCertFile), path(envGitSSLCA)
	if v := strings.TrimSpace(getenv(envSSLCertDir)); v != "" {
		var dirs []string
		for _, d := range filepath.SplitList(v) {
			if d = strings.TrimSpace(d); d != "" {
				dirs = append(dirs, d)
			}
		}
		switch len(dirs) {
		case 0:
		case 1:
			c.CA.Dir = path(envSSLCertDir)
		default:
			problems = append(problems, fmt.Sprintf("%s=%q: Fetch's git takes one directory; give one, or put the certificates in %s", envSSLCertDir, v, envSSLCertFile))
		}
	}
	for _, f := range []struct{ name, path string }{{envSSLCertFile, c.CA.File}, {envGitSSLCA, c.CA.GitFile}} {
		if f.path == "" {
			continue
		}
		if err := trust.CheckFile(f.path); err != nil {
			problems = append(problems, fmt.Sprintf("%s: %v", f.name, err))
		}
	}
	if c.CA.Dir != "" {
		if err := trust.CheckDir(c.CA.Dir); err != nil {
			problems = append(problems, fmt.Sprintf("%s: %v", envSSLCertDir, err))
		}
	}
	return problems
}

// metricsAddr reads FETCH_METRICS_ADDR: host:port, :port or a bare port.
// Without a host it listens on the loopback interface only: exposing the
// metrics further is the owner's explicit choice.
func metricsAddr(v string) (string, error) {
	if _, err := strconv.Atoi(v); err == nil {
		v = ":" + v
	}
	host, port, err := net.SplitHostPort(v)
	if err != nil {
		return "", err
	}
	if n, err := strconv.Atoi(port); err != nil || n < 0 || n > 65535 {
		return "", errUsage
	}
	if host == "" {
		host = "127.0.0.1"
	}
	return net.JoinHostPort(host, port), nil
}

// loadAgent reads the agent's limits and budgets.
func (c *Config) loadAgent(getenv func(string) string) []string {
	var problems []string
	positiveInt := func(name string, dst *int, allowZero bool) {
		v := strings.TrimSpace(getenv(name))
		if v == "" {
			return
		}
		n, err := strconv.Atoi(v)
		if err != nil || n < 0 || (n == 0 && !allowZero) {
			problems = append(problems, fmt.Sprintf("%s must be a whole number above %s, got %q", name, map[bool]string{true: "or equal to 0", false: "0"}[allowZero], v))
			return
		}
		*dst = n
	}
	duration := func(name string, dst *time.Duration) {
		v := strings.TrimSpace(getenv(name))
		if v == "" {
			return
		}
		d, err := time.ParseDuration(v)
		if err != nil || d <= 0 {
			problems = append(problems, fmt.Sprintf("%s must be a positive duration such as 5m, got %q", name, v))
			return
		}
		*dst = d
	}
	dollars := func(name string, dst *float64) {
		v := strings.TrimSpace(strings.TrimPrefix(strings.TrimSpace(getenv(name)), "$"))
		if v == "" {
			return
		}
		f, err := strconv.ParseFloat(v, 64)
		if err != nil || f < 0 || math.IsNaN(f) || math.IsInf(f, 0) {
			problems = append(problems, fmt.Sprintf("%s must be an amount in US dollars such as 2.50, got %q", name, getenv(name)))
			return
		}
		*dst = f
	}
	positiveInt(envMaxRounds, &c.MaxRounds, false)
	duration(envTurnTimeout, &c.TurnTimeout)
	duration(envApprovalTTL, &c.ApprovalTTL)
	positiveInt(envBudgetTurnTok, &c.BudgetTurnTokens, true)
	positiveInt(envBudgetDayTokens, &c.BudgetDayTokens, true)
	dollars(envBudgetTurnUSD, &c.BudgetTurnUSD)
	dollars(envBudgetDayUSD, &c.BudgetDayUSD)
	dollars(envTaskBudgetUSD, &c.TaskBudgetUSD)
	dollars(envDailyBudgetUSD, &c.DailyBudgetUSD)
	positiveInt(envAttachMaxBytes, &c.AttachMaxBytes, false)
	for _, t := range strings.Split(getenv(envAttachTypes), ",") {
		if t = strings.ToLower(strings.TrimSpace(t)); t != "" {
			if !strings.Contains(t, "/") {
				problems = append(problems, fmt.Sprintf("%s: %q is not a media type such as image/png", envAttachTypes, t))
				continue
			}
			c.AttachTypes = append(c.AttachTypes, t)
		}
	}
	positiveInt(envOutMaxFiles, &c.OutMaxFiles, false)
	positiveInt(envOutMaxBytes, &c.OutMaxBytes, false)
	positiveInt(envAutoMergeFiles, &c.AutoMerge.MaxFiles, false)
	positiveInt(envAutoMergeLines, &c.AutoMerge.MaxLines, false)
	for _, v := range strings.Split(getenv(envAutoMergePaths), ",") {
		if strings.TrimSpace(v) == "" {
			continue
		}
		p, err := review.ParsePattern(v)
		if err != nil {
			problems = append(problems, fmt.Sprintf("%s: %s", envAutoMergePaths, strings.TrimPrefix(err.Error(), "review: ")))
			continue
		}
		c.AutoMerge.Paths = append(c.AutoMerge.Paths, p)
	}
	return problems
}

// loadPrices reads FETCH_PRICES: the price table is Fetch's, extended by
// the owner's file, which is refused whole at a malformed line.
func (c *Config) loadPrices(getenv func(string) string) []string {
	c.Prices = price.Builtin()
	path := strings.TrimSpace(getenv(envPrices))
	if path == "" {
		return nil
	}
	t, err := price.ParseFile(path)
	if err != nil {
		return []string{fmt.Sprintf("%s: %v", envPrices, err)}
	}
	c.Prices = t
	return nil
}

// parseRate reads "N/duration" (30/60s, 10/1m) or "0".
func parseRate(v string) (int, time.Duration, error) {
	if v == "0" {
		return 0, 0, nil
	}
	count, window, ok := strings.Cut(v, "/")
	if !ok {
		return 0, 0, errUsage
	}
	n, err := strconv.Atoi(strings.TrimSpace(count))
	if err != nil || n < 1 {
		return 0, 0, errUsage
	}
	per, err := time.ParseDuration(strings.TrimSpace(window))
	if err != nil || per <= 0 {
		return 0, 0, errUsage
	}
	return n, per, nil
}

// require reports the variables a command needs that are unset.
func (c Config) require(command string, names ...string) error {
	values := map[string]string{envOwnerID: c.OwnerID, envDiscordToken: c.DiscordToken, envOpenRouter: c.OpenRouter}
	var problems []string
	for _, n := range names {
		if values[n] == "" {
			problems = append(problems, fmt.Sprintf("%s is required by fetch %s", n, command))
		}
	}
	if len(problems) > 0 {
		return &ConfigError{Problems: problems}
	}
	return nil
}

func (c Config) level(fallback slog.Level) slog.Level {
	switch c.LogLevel {
	case "debug":
		return slog.LevelDebug
	case "info":
		return slog.LevelInfo
	case "warn":
		return slog.LevelWarn
	case "error":
		return slog.LevelError
	}
	return fallback
}

func isSnowflake(s string) bool {
	if len(s) == 0 || len(s) > 20 {
		return false
	}
	for _, r := range s {
		if r < '0' || r > '9' {
			return false
		}
	}
	return true
}

func or(v, def string) string {
	if strings.TrimSpace(v) == "" {
		return def
	}
	return v
}

var errUsage = errors.New("usage")

// defaultKeep is FETCH_KEEP's default: 90 days.
const defaultKeep = 90 * 24 * time.Hour

// parseDays reads a duration that may be given in days ("90d") as well as
// as Go writes them ("720h").
func parseDays(v string) (time.Duration, error) {
	if n, ok := strings.CutSuffix(v, "d"); ok {
		days, err := strconv.Atoi(n)
		if err != nil || days < 0 || days > 100*366 {
			return 0, fmt.Errorf("bad number of days %q", n)
		}
		return time.Duration(days) * 24 * time.Hour, nil
	}
	return time.ParseDuration(v)
}
