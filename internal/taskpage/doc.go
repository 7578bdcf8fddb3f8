// Package taskpage serves the task page: a read-only web view of Fetch's
// tasks — the list (state, CLI, workspace, duration, cost; cards on a
// phone) and one task's page: its facts (branch and base, commits, cost as
// `fetch task show` says it, exit code, how to take the work), a failed
// task's failure and last output, its whole diff (a file list with
// counts, line numbers, syntax highlighting, wrapped or not) and its
// timeline (steps, a command's start and end as one entry, paths relative
// to the worktree, questions, answers, re-attach, result). Times are in
// the owner's zone. A running task's page follows its event log live over
// server-sent events, its cost so far added up from the run's spend
// reports; without JavaScript it says it does not update.
//
// Every request carries a signed, expiring link (Links): a task link opens
// that task only; the list link, for the owner, opens the list and the
// tasks it shows. Anything else answers 401. Pages are server-rendered
// html/template with embedded assets (no CDN, no inline script, a strict
// Content-Security-Policy), and every text shown passes the redactor.
//
// taskpage reads tasks through the small Tasks interface (cmd/fetch gives
// it the *task.Engine); it imports task (types), harness (event kinds) and
// redact, and never writes anything. Concurrency: Server's Open starts the
// HTTP server's goroutine and Close stops it and waits; each live stream
// polls the store on its own request goroutine and ends when its client
// goes, the task ends, maxStream passes or the server closes.
package taskpage
