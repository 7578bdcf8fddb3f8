package discord

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"time"

	"github.com/bwmarrin/discordgo"
	"github.com/gorilla/websocket"

	"github.com/fetch-dev/fetch/internal/chat"
	"github.com/fetch-dev/fetch/internal/redact"
	"github.com/fetch-dev/fetch/internal/store"
)

// Channel is the name of the Discord channel in chat.Message.Channel.
const Channel = "discord"

// conversationPrefix starts the id of a Discord conversation; the rest is
// the DM channel's id.
const conversationPrefix = Channel + ":"

// ConversationID is the conversation of a DM channel.
func ConversationID(channelID string) string { return conversationPrefix + channelID }

// discordHost is where discordgo sends every REST request; the transport
// redirects it to Config.BaseURL.
const discordHost = "discord.com"

// Defaults.
const (
	// DefaultEditInterval spaces edits of one message: Discord allows 5
	// message changes per 5 s in a channel, shared with new messages.
	DefaultEditInterval = 1500 * time.Millisecond
	// restTimeout bounds one REST request.
	restTimeout = 20 * time.Second
	// typingDelay is how long a message may take before a typing indicator
	// shows: instincts answer well within it, so they show none.
	typingDelay = time.Second
	// typingEvery renews the indicator, which Discord shows for 10 s.
	typingEvery = 8 * time.Second
)

// Receiver is what the Bot needs of the conversation runtime.
type Receiver interface {
	Receive(ctx context.Context, msg chat.Message) error
	// Idle returns once the conversation handled everything queued.
	Idle(ctx context.Context, conversationID string) error
	// Notify sends a reply outside any turn, through the outbox.
	Notify(ctx context.Context, conversationID string, r chat.Reply) error
}

// Config is what a Bot needs. Token, Store, Redactor, RoleOf and Logger
// are required.
type Config struct {
	Token string
	// BaseURL is where Discord is reached (https://discord.com, or a fake
	// or proxy); the gateway URL comes from its gateway endpoint.
	BaseURL  string
	Store    *store.DB
	Redactor *redact.Redactor
	// RoleOf tells who a user is; "" for anyone not admitted.
	RoleOf func(channel, userID string) chat.Role
	// RateLimit admits at most RateLimit messages per RatePer from one
	// user; 0 turns the limit off.
	RateLimit int
	RatePer   time.Duration
	// Unlimited tells which messages the rate limit never drops (a stop
	// must always get through); nil for none.
	Unlimited func(text string) bool
	// EditInterval is the least time between two edits of one message;
	// DefaultEditInterval when 0.
	EditInterval time.Duration
	Logger       *slog.Logger
	// Now is the clock; time.Now when nil.
	Now func() time.Time
	// Metrics is told of Discord's rate limits; nil: nobody.
	Metrics Metrics
}

// Metrics is told each time Discord answered 429 and how long discordgo
// waits before it retries. RateLimited never blocks.
type Metrics interface {
	RateLimited(wait time.Duration)
}

// Bot is the Discord channel: a discordgo session, its handlers, and the
// Sender the conversation runtime delivers through.
type Bot struct {
	cfg       Config
	log       *slog.Logger
	now       func() time.Time
	session   *discordgo.Session
	transport *http.Transport
	state     state
	limit     *limiter
	red       *redact.Redactor

	// sendMu serialises sends (and edits), so that parts of replies keep
	// their order and an edit key is created once.
	sendMu sync.Mutex

	mu     sync.Mutex
	rcv    Receiver
	ctx    context.Context
	cancel context.CancelFunc
	botID  string
	appID  string
	typing map[string]int // conversations with a typing loop: messages received since it began
	// wake tells the editor that an edit is pending; one slot, as the
	// signals coalesce (the editor reads what is pending from the store).
	wake chan struct{}
	// failed are outbox replies whose delivery failed in this process, by
	// outbox id; retry (one slot, coalescing) tells the retrier that
	// Discord is reachable again.
	failed map[int64]failedSend
	retry  chan struct{}
	wg     sync.WaitGroup
}

// New builds a Bot. It connects nothing: Send works at once (REST), Open
// connects the gateway.
func New(cfg Config) (*Bot, error) {
	var problems []string
	if cfg.Token == "" {
		problems = append(problems, "no token")
	}
	if cfg.Store == nil || cfg.Redactor == nil || cfg.RoleOf == nil || cfg.Logger == nil {
		problems = append(problems, "Store, Redactor, RoleOf and Logger are required")
	}
	base, err := url.Parse(cfg.BaseURL)
	if err != nil || (base.Scheme != "http" && base.Scheme != "https") || base.Host == "" {
		problems = append(problems, fmt.Sprintf("base URL %q is not an http(s) URL", cfg.BaseURL))
	}
	if len(problems) > 0 {
		return nil, fmt.Errorf("discord: new: %s", strings.Join(problems, "; "))
	}
	if cfg.EditInterval <= 0 {
		cfg.EditInterval = DefaultEditInterval
	}
	now := cfg.Now
	if now == nil {
		now = time.Now
	}
	s, err := discordgo.New("Bot " + cfg.Token)
	if err != nil {
		return nil, fmt.Errorf("discord: new: %w", err)
	}
	tr := http.DefaultTransport.(*http.Transport).Clone()
	s.Client = &http.Client{Timeout: restTimeout, Transport: rewrite{base: base, next: tr}}
	s.Dialer = &websocket.Dialer{Proxy: http.ProxyFromEnvironment, HandshakeTimeout: 30 * time.Second}
	s.Identify.Intents = discordgo.IntentsDirectMessages
	s.SyncEvents = true
	s.LogLevel = -1 // see the package doc: discordgo's logger is global
	s.StateEnabled = true

	b := &Bot{
		cfg:       cfg,
		log:       cfg.Logger,
		now:       now,
		session:   s,
		transport: tr,
		state:     state{db: cfg.Store, now: now},
		limit:     newLimiter(cfg.RateLimit, cfg.RatePer),
		red:       cfg.Redactor,
		typing:    map[string]int{},
		wake:      make(chan struct{}, 1),
		failed:    map[int64]failedSend{},
		retry:     make(chan struct{}, 1),
	}
	s.AddHandler(b.onReady)
	s.AddHandler(b.onResumed)
	s.AddHandler(b.onDisconnect)
	s.AddHandler(b.onMessage)
	s.AddHandler(b.onInteraction)
	if cfg.Metrics != nil {
		// discordgo tells of each 429 before it sleeps for its
		// retry_after and retries.
		s.AddHandler(func(_ *discordgo.Session, rl *discordgo.RateLimit) {
			var wait time.Duration
			if rl.TooManyRequests != nil {
				wait = rl.TooManyRequests.RetryAfter
			}
			cfg.Metrics.RateLimited(wait)
		})
	}
	return b, nil
}

// rewrite sends discordgo's requests for discord.com to the configured
// base URL (discordgo's endpoints are package variables computed for
// discord.com; reassigning them would be global state).
type rewrite struct {
	base *url.URL
	next http.RoundTripper
}

func (t rewrite) RoundTrip(r *http.Request) (*http.Response, error) {
	if r.URL.Host == discordHost && (t.base.Host != discordHost || t.base.Scheme != r.URL.Scheme) {
		r = r.Clone(r.Context())
		r.URL.Scheme, r.URL.Host = t.base.Scheme, t.base.Host
		r.URL.Path = strings.TrimSuffix(t.base.Path, "/") + r.URL.Path
		r.Host = t.base.Host
	}
	return t.next.RoundTrip(r)
}

// Open connects to the gateway, handing inbound messages to rcv,
// registers the slash commands and starts the editor. ctx bounds the
// connecting; the Bot runs until Close.
func (b *Bot) Open(ctx context.Context, rcv Receiver) error {
	b.mu.Lock()
	if b.ctx != nil {
		b.mu.Unlock()
		return errors.New("discord: already open")
	}
	b.rcv = rcv
	b.ctx, b.cancel = context.WithCancel(context.WithoutCancel(ctx))
	b.mu.Unlock()

	b.wg.Add(2)
	go func() {
		defer b.wg.Done()
		b.editor(b.ctx)
	}()
	go func() {
		defer b.wg.Done()
		b.retrier(b.ctx)
	}()
	if err := b.openGateway(ctx); err != nil {
		return fmt.Errorf("discord: open gateway: %w", err)
	}
	if err := b.registerCommands(ctx); err != nil {
		return err
	}
	b.log.Info("connected to Discord", "bot", b.id())
	return nil
}

// Waits between tries to reach the gateway when Fetch starts: doubling
// from openRetryFirst up to openRetryMax.
const (
	openRetryFirst = time.Second
	openRetryMax   = time.Minute
)

// openGateway connects to the gateway, trying again with backoff while
// Discord (or the network) cannot be reached, logging each try, until ctx
// ends: a supervisor that restarts Fetch (Compose's restart:
// unless-stopped) would otherwise restart it in a loop. What retrying
// cannot fix (a token or intents Discord refuses) ends it at once.
func (b *Bot) openGateway(ctx context.Context) error {
	wait := openRetryFirst
	for {
		err := b.session.Open()
		if err == nil || refused(err) {
			return err
		}
		b.log.Warn("cannot reach Discord; trying again", "in", wait, "err", err)
		t := time.NewTimer(wait)
		select {
		case <-ctx.Done():
			t.Stop()
			return fmt.Errorf("%w (last: %w)", context.Cause(ctx), err)
		case <-t.C:
		}
		wait = min(2*wait, openRetryMax)
	}
}

// refused tells an error of opening the gateway that trying again cannot
// fix: Discord refused the token (401, 403, close code 4004) or the
// connection's settings (close codes 4010 to 4014).
func refused(err error) bool {
	var rest *discordgo.RESTError
	if errors.As(err, &rest) && rest.Response != nil {
		return rest.Response.StatusCode == http.StatusUnauthorized || rest.Response.StatusCode == http.StatusForbidden
	}
	var closed *websocket.CloseError
	if errors.As(err, &closed) {
		return closed.Code == 4004 || (closed.Code >= 4010 && closed.Code <= 4014)
	}
	return errors.Is(err, discordgo.ErrUnauthorized)
}

// Close disconnects from the gateway, makes the pending edits and waits
// for the Bot's goroutines. Sends still work after Close.
func (b *Bot) Close(ctx context.Context) error {
	b.mu.Lock()
	opened := b.cancel != nil
	b.mu.Unlock()
	if !opened {
		b.transport.CloseIdleConnections()
		return nil
	}
	// The gateway first: nothing new arrives while the rest stops.
	err := b.session.Close()
	// Cancelled under mu, so that startTyping (which checks ctx under mu
	// before adding to wg) never adds once Wait may have begun.
	b.mu.Lock()
	b.cancel()
	b.mu.Unlock()
	done := make(chan struct{})
	go func() { b.wg.Wait(); close(done) }()
	select {
	case <-done:
	case <-ctx.Done():
		return fmt.Errorf("discord: close: %w", context.Cause(ctx))
	}
	b.transport.CloseIdleConnections()
	if err != nil {
		return fmt.Errorf("discord: close: %w", err)
	}
	return nil
}

func (b *Bot) onReady(_ *discordgo.Session, r *discordgo.Ready) {
	b.mu.Lock()
	if r.User != nil {
		b.botID = r.User.ID
	}
	if r.Application != nil {
		b.appID = r.Application.ID
	}
	b.mu.Unlock()
	b.log.Info("gateway session ready", "session", r.SessionID)
	b.reachable()
}

func (b *Bot) onResumed(*discordgo.Session, *discordgo.Resumed) {
	b.log.Info("gateway session resumed")
	b.reachable()
}

func (b *Bot) onDisconnect(*discordgo.Session, *discordgo.Disconnect) {
	b.log.Info("gateway disconnected; discordgo reconnects and resumes")
}

// id is the bot's own user id, "" before the first READY.
func (b *Bot) id() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.botID
}

// running returns the Bot's lifecycle context and receiver, nil before
// Open.
func (b *Bot) running() (context.Context, Receiver) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.ctx, b.rcv
}
