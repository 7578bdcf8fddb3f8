package harness

import "errors"

// Sentinel errors, for errors.Is.
var (
	// ErrUnknownHarness: no adapter has that name.
	ErrUnknownHarness = errors.New("unknown harness")
	// ErrInvalidTask: the task cannot be run as given (bad id, empty goal,
	// relative path, …). The message lists every problem.
	ErrInvalidTask = errors.New("invalid task")
	// ErrNoReadOnly: the task is read-only and the CLI has no read-only
	// mode Fetch trusts (Traits.ReadOnly is false).
	ErrNoReadOnly = errors.New("the CLI has no read-only mode")
	// ErrNoPlanMode: the CLI has no plan mode Fetch can drive in a
	// two-way run (ModePlan).
	ErrNoPlanMode = errors.New("the CLI has no plan mode Fetch can drive")
	// ErrNoTwoWay: the CLI has no two-way protocol Fetch speaks
	// (Traits.TwoWay is false); run it one-shot.
	ErrNoTwoWay = errors.New("the CLI has no two-way mode")
	// ErrNoOneShot: the CLI has no one-shot mode (Traits.TwoWayOnly: a
	// generic ACP agent); run it two-way (RunTwoWay).
	ErrNoOneShot = errors.New("the CLI has no one-shot mode; run it two-way")
	// ErrCannotReply: the reply asked for does not fit the request (an
	// answer to a permission request, an allow of a request whose input
	// was not kept); deny it instead.
	ErrCannotReply = errors.New("cannot reply that way to this request")
)
