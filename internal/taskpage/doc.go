// Package taskpage serves the task page: a read-only web view of Fetch's
// tasks — the list (state, harness, workspace, duration, cost) and one
// task's timeline (steps, questions, answers, re-attach, result), its
// whole diff with syntax highlighting, and its cost. A running task's page
// follows its event log live over server-sent events.
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
