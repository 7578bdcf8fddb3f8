// Package instincts holds Fetch's deterministic reflexes: the commands and
// safety words answered without the LLM (/help, /status, /stop and its
// natural forms, /clear, /whoami, /autonomy, /commands, yes/no on a pending
// prompt), the reading of /use, /allow and /hosts (whose effects,
// selecting a workspace, changing who may talk to Fetch and the hosts a
// workspace's runs may reach, the runtime carries out),
// and the reading of /remind, /schedule, /cron and /watch: their times and
// cron specs are parsed here (ParseWhen, ParseSpec) and handed on in the
// Response as a Job for the runtime to store. Reminders and schedules
// in plain words ("remind me tomorrow at 9 to check the deploy", "every
// monday at 9 summarize open PRs") are read by the same parsers into the
// same Jobs (plainwords.go); what only looks like one is left alone.
//
// An instinct sees only the message text and a State snapshot, and returns
// the reply text and an Effect for the conversation runtime to carry out
// (stop the task, clear the history, answer the prompt, set the autonomy
// level). It does no I/O of
// its own and never calls the LLM or Docker, so /stop keeps working when
// everything else is down. The same text and State always give
// byte-identical replies.
//
// instincts imports nothing of Fetch's own (and of the outside world only
// robfig/cron's parser). A *Set is safe for concurrent
// use.
package instincts
