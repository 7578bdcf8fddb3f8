// Package modes is the mode machine of a conversation: ALERT, WORKING,
// WAITING, GUARDING and RESTING, driven by github.com/looplab/fsm and
// persisted with its history through a Store (internal/store satisfies it).
//
// Every transition is written, together with its reason and a history row,
// in one transaction before the machine moves; a failed write leaves the
// machine where it was. An event that is not legal in the current mode is
// an *IllegalError, never a silent no-op.
//
// After a restart, ALERT and RESTING are restored as they were; WORKING,
// WAITING and GUARDING are reconciled against what is really live (see
// Reconcile), so that no conversation is left claiming work that no longer
// exists.
//
// A Machine belongs to one goroutine (the conversation's) and is not safe
// for concurrent use. modes imports only internal/store.
package modes
