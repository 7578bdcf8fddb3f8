package discord

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"

	"github.com/bwmarrin/discordgo"
)

// ErrUnauthorized: Discord refused the bot token (HTTP 401).
var ErrUnauthorized = errors.New("the bot token is not accepted")

// Identity is who the bot is on Discord.
type Identity struct {
	ID, Username string
}

// Whoami asks Discord (at baseURL, as Config.BaseURL) who the bot with
// token is: one REST request, GET /users/@me, through discordgo. A refused
// token is ErrUnauthorized.
func Whoami(ctx context.Context, token, baseURL string) (Identity, error) {
	base, err := url.Parse(baseURL)
	if err != nil || (base.Scheme != "http" && base.Scheme != "https") || base.Host == "" {
		return Identity{}, fmt.Errorf("discord: whoami: base URL %q is not an http(s) URL", baseURL)
	}
	s, err := discordgo.New("Bot " + token)
	if err != nil {
		return Identity{}, fmt.Errorf("discord: whoami: %w", err)
	}
	tr := http.DefaultTransport.(*http.Transport).Clone()
	defer tr.CloseIdleConnections()
	s.Client = &http.Client{Timeout: restTimeout, Transport: rewrite{base: base, next: tr}}
	s.LogLevel = -1
	s.MaxRestRetries = 0
	u, err := s.User("@me", discordgo.WithContext(ctx))
	if err != nil {
		if _, status := restCode(err); status == http.StatusUnauthorized {
			return Identity{}, fmt.Errorf("discord: whoami: %w", ErrUnauthorized)
		}
		return Identity{}, fmt.Errorf("discord: whoami: %w", err)
	}
	return Identity{ID: u.ID, Username: u.Username}, nil
}
