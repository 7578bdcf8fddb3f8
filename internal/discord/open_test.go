package discord

import (
	"errors"
	"fmt"
	"net"
	"net/http"
	"testing"

	"github.com/bwmarrin/discordgo"
	"github.com/gorilla/websocket"
)

// TestRefused: opening the gateway is tried again after a network error
// or a Discord outage, never after Discord refused the token or the
// connection's settings.
func TestRefused(t *testing.T) {
	rest := func(code int) error {
		return fmt.Errorf("get gateway: %w", &discordgo.RESTError{Response: &http.Response{StatusCode: code}})
	}
	for _, tc := range []struct {
		name string
		err  error
		want bool
	}{
		{"401", rest(http.StatusUnauthorized), true},
		{"403", rest(http.StatusForbidden), true},
		{"502", rest(http.StatusBadGateway), false},
		{"authentication failed", &websocket.CloseError{Code: 4004}, true},
		{"disallowed intents", &websocket.CloseError{Code: 4014}, true},
		{"session timed out", &websocket.CloseError{Code: 4009}, false},
		{"unauthorized", discordgo.ErrUnauthorized, true},
		{"connection refused", &net.OpError{Op: "dial", Net: "tcp", Err: errors.New("connection refused")}, false},
	} {
		if got := refused(tc.err); got != tc.want {
			t.Errorf("%s: refused = %v; want %v", tc.name, got, tc.want)
		}
	}
}
