package review

import "errors"

var (
	// ErrBadPattern: a path pattern the owner typed is not one.
	ErrBadPattern = errors.New("not a path pattern")
	// ErrNoReviewer: no LLM is configured to review.
	ErrNoReviewer = errors.New("no LLM is configured for Fetch's review")
	// ErrOverBudget: the review would go over a budget; it was not asked.
	ErrOverBudget = errors.New("over budget")
	// ErrNoVerdict: the LLM's answer holds no verdict Fetch can read (no
	// submit_review call, arguments that do not parse, a cut answer).
	ErrNoVerdict = errors.New("the review's answer holds no verdict")
	// ErrTooLarge: the diff is over what a review reads whole.
	ErrTooLarge = errors.New("the diff is too large to review whole")
)
