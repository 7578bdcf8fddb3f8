package discord

import (
	"errors"
	"net/http"

	"github.com/bwmarrin/discordgo"
)

// ErrNotDiscord is returned by Send for a conversation of another channel.
var ErrNotDiscord = errors.New("not a Discord conversation")

// codeUnknownMessage is Discord's JSON error code for a message that is
// gone (deleted).
const codeUnknownMessage = 10008

// restCode returns Discord's error code and HTTP status of a REST error,
// 0 and 0 for anything else.
func restCode(err error) (code, status int) {
	var re *discordgo.RESTError
	if !errors.As(err, &re) {
		return 0, 0
	}
	if re.Message != nil {
		code = re.Message.Code
	}
	if re.Response != nil {
		status = re.Response.StatusCode
	}
	return code, status
}

// isUnknownMessage tells whether err says the message is gone (deleted).
func isUnknownMessage(err error) bool {
	code, status := restCode(err)
	return code == codeUnknownMessage || (code == 0 && status == http.StatusNotFound)
}
