package discord_test

import (
	"errors"
	"testing"

	"github.com/fetch-dev/fetch/internal/discord"
	"github.com/fetch-dev/fetch/internal/testkit"
)

// TestWhoami: the fake Discord names its bot for the right token and
// refuses a wrong one with ErrUnauthorized.
func TestWhoami(t *testing.T) {
	const token = "MTAwMDAwMDAwMDAwMDAwMDAx.GhJkLm.whoami-test-token"
	d := testkit.NewDiscord(t, token)
	me, err := discord.Whoami(t.Context(), token, d.URL())
	if err != nil || me.ID != d.BotID || me.Username == "" {
		t.Fatalf("Whoami = %+v, %v; want bot %s", me, err, d.BotID)
	}
	if _, err := discord.Whoami(t.Context(), token+"x", d.URL()); !errors.Is(err, discord.ErrUnauthorized) {
		t.Fatalf("wrong token: %v, want ErrUnauthorized", err)
	}
}
