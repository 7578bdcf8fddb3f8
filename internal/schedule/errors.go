package schedule

import "errors"

var (
	// ErrLimit: the user already has the most active jobs allowed.
	ErrLimit = errors.New("too many active reminders and schedules")
	// ErrNotFound: no such job of the user's (or it is done or removed).
	ErrNotFound = errors.New("no such reminder or schedule")
	// ErrState: the job is not in a state the change applies to (pausing
	// a paused job).
	ErrState = errors.New("reminder or schedule is not in that state")
)
