package conversation

import (
	"context"
	"errors"
)

// ErrorMessage is what the person in the chat reads about an error: short,
// actionable, with no internals or secrets. The detail belongs in the log.
func ErrorMessage(err error) string {
	switch {
	case err == nil:
		return ""
	case errors.Is(err, context.DeadlineExceeded):
		return "That took too long and was stopped. Try again, or break it into smaller steps."
	case errors.Is(err, ErrStopped), errors.Is(err, context.Canceled):
		return "Stopped."
	}
	return "Something went wrong on my side; the details are in Fetch's log. Try again, or /status to see where things stand."
}
