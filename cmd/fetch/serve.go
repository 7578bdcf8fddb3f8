package main

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"time"

	"github.com/fetch-dev/fetch/instincts"
	"github.com/fetch-dev/fetch/internal/access"
	"github.com/fetch-dev/fetch/internal/chat"
	"github.com/fetch-dev/fetch/internal/discord"
	"github.com/fetch-dev/fetch/internal/store"
	"github.com/fetch-dev/fetch/internal/task"
)

const serveUsage = `Usage: fetch serve

Run Fetch as a Discord bot. The owner (FETCH_OWNER_ID) and the users in
FETCH_ALLOWED_IDS talk to it in direct messages; everything else on
Discord is ignored. Replies that could not be delivered go out once at the
next start. Logs go to stderr, with secrets redacted. Stop it with
SIGINT or SIGTERM. When Discord cannot be reached at start, it says so
in the log and tries again (after 1s, 2s, … up to a minute apart) rather
than exit; a token Discord refuses ends it.

It also serves the read-only task page on FETCH_PAGE_ADDR (default
127.0.0.1:8686; off turns it off); each task's messages carry a signed
link to it, and "fetch page" prints one. When the default address is
taken (by another Fetch), it runs without the page and the log says so;
an address you set must be free.

Requires FETCH_DISCORD_TOKEN and FETCH_OWNER_ID; see "fetch help" for the
other variables.
`

// closeTimeout bounds the shutdown of fetch serve.
const closeTimeout = 15 * time.Second

func runServe(ctx context.Context, getenv func(string) string, stderr io.Writer) error {
	cfg, err := loadConfig(getenv)
	if err != nil {
		return err
	}
	if err := cfg.require("serve", envDiscordToken, envOwnerID); err != nil {
		return err
	}
	warnNotReady(ctx, cfg, stderr)
	log, red, db, err := openBase(ctx, cfg, stderr, slog.LevelInfo)
	if err != nil {
		return err
	}
	defer db.Close()
	defer startPruner(ctx, cfg, db, log)()

	allowed, err := discordAccess(ctx, cfg, db)
	if err != nil {
		return err
	}
	roleOf := discordRole(cfg.OwnerID, allowed)
	m := newMetrics(cfg, db)
	dc := discord.Config{
		Token:     cfg.DiscordToken,
		BaseURL:   cfg.DiscordURL,
		Store:     db,
		Redactor:  red,
		RoleOf:    roleOf,
		RateLimit: cfg.RateLimit,
		RatePer:   cfg.RatePer,
		// A stop always gets through, however fast the owner types.
		Unlimited: instincts.New().IsStop,
		Logger:    log.With("channel", discord.Channel),
	}
	if m != nil {
		dc.Metrics = m
	}
	bot, err := discord.New(dc)
	if err != nil {
		return err
	}
	closeCtx := func() (context.Context, context.CancelFunc) {
		return context.WithTimeout(context.WithoutCancel(ctx), closeTimeout)
	}
	// The task page listens first: the results of tasks carry its links.
	pg, err := servePage(ctx, cfg, log)
	if err != nil {
		return err
	}
	rt, err := newConversations(cfg, db, log, map[string]chat.Sender{discord.Channel: bot}, roleOf, runtimeExtras{taskLink: pg.link(), allowed: allowed, metrics: m, relay: &task.Relay{Channel: discord.Channel, UserID: cfg.OwnerID}})
	if err != nil {
		cctx, cancel := closeCtx()
		defer cancel()
		return errors.Join(err, pg.close(cctx))
	}

	// The runtime opens first: it replays its outbox through the bot's
	// REST side before the gateway brings new messages.
	if err := rt.open(ctx); err != nil {
		cctx, cancel := closeCtx()
		defer cancel()
		return errors.Join(err, pg.close(cctx))
	}
	if err := pg.open(ctx, cfg, rt.tasks, red, log); err != nil {
		cctx, cancel := closeCtx()
		defer cancel()
		return errors.Join(err, rt.close(cctx))
	}
	if err := bot.Open(ctx, rt.mgr); err != nil {
		cctx, cancel := closeCtx()
		defer cancel()
		return errors.Join(err, pg.close(cctx), bot.Close(cctx), rt.close(cctx))
	}
	log.Info("fetch serve running", "owner", cfg.OwnerID, "allowed", len(cfg.AllowedIDs))
	<-ctx.Done()

	cctx, cancel := closeCtx()
	defer cancel()
	// The gateway closes first, so that nothing new arrives while the
	// runtime finishes what it has.
	return errors.Join(pg.close(cctx), bot.Close(cctx), rt.close(cctx))
}

// discordAccess is who besides the owner may talk to Fetch on Discord:
// FETCH_ALLOWED_IDS and the users the owner allowed with /allow.
func discordAccess(ctx context.Context, cfg Config, db *store.DB) (*access.List, error) {
	l := access.New(db, discord.Channel, cfg.OwnerID, cfg.AllowedIDs)
	if err := l.Load(ctx); err != nil {
		return nil, err
	}
	return l, nil
}

// discordRole tells who a Discord user is: the owner, an allowed user, or
// nobody (""). It is asked for every message: allowed answers from memory.
func discordRole(owner string, allowed *access.List) func(channel, userID string) chat.Role {
	return func(channel, userID string) chat.Role {
		switch {
		case channel != discord.Channel || userID == "":
			return ""
		case userID == owner:
			return chat.Owner
		case allowed.Allowed(userID):
			return chat.Allowed
		}
		return ""
	}
}
