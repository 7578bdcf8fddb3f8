// Package schedule keeps the owner's reminders (/remind) and cron
// schedules (/schedule) in SQLite and fires them on time, in the owner's
// time zone.
//
// A job comes due at its stored next run. A reminder is sent to its
// conversation through the Deliverer's Notify (the outbox); a "run" job is
// handed to the Deliverer's Receive as a message from the job's owner, as
// if they had written it, with the external id "sched:ID:UNIXTIME" so that
// a run is handled once even when it is handed over twice (after a
// restart). Nothing here calls the LLM: a run reaches the agent only
// through the conversation, like any message, and counts against whatever
// budget that enforces.
//
// Missed runs (Fetch was not running): a one-shot job more than a minute
// late fires once, marked late; a recurring job skips its missed runs,
// logs and audits how many, and carries on from the next one. A due job is
// handed over first and claimed after (its next run moved on,
// compare-and-swap on the stored time); the hand-over carries a key
// ("remind:ID:UNIXTIME", "sched:ID:UNIXTIME") that the conversation's
// inbox and outbox accept once, so neither a crash in between nor two
// processes sharing the database send a reminder twice or lose it.
//
// Time comes from an injected Clock. The runner is one goroutine that
// sleeps until the earliest next run (at most maxSleep, so a wall-clock jump
// or a suspend is noticed) or until a job is added or resumed; cron
// specs are evaluated with robfig/cron's Schedule.Next in the owner's zone,
// which keeps 09:00 at 09:00 across daylight-saving changes.
//
// schedule imports store, chat and instincts (for the Job the instincts
// parsed). New builds, Open starts the runner, Close stops it and waits.
// Apply and the typed methods are safe for concurrent use. ApplyTx is Apply
// inside the caller's transaction — the one that marks the command's
// message handled — with the runner woken by its after hook once that
// committed, so that a command's change is made exactly once.
package schedule
