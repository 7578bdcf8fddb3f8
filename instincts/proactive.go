package instincts

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"time"
)

// JobKind is what a reminder or schedule does when it comes due.
type JobKind string

const (
	// Reminder sends its text to the owner.
	Reminder JobKind = "remind"
	// Run hands its text to the pipeline as if the owner had written it.
	Run JobKind = "run"
)

// Job is a reminder or schedule to create, as /remind and /schedule read
// it.
type Job struct {
	Kind JobKind
	Text string
	// At is a one-shot job's due time; zero for a recurring one.
	At time.Time
	// Spec is a recurring job's cron spec; empty for a one-shot one.
	Spec string
	// Next is when the job first comes due.
	Next time.Time
}

// maxJobText bounds a reminder's or schedule's text.
const maxJobText = 1000

// timeLayout is how due times are shown to the owner.
const timeLayout = "Mon 2 Jan 15:04 MST"

func remind(args string, st State) Response {
	loc := st.location()
	if args == "" {
		return Response{Instinct: "remind", Reply: whenExample}
	}
	at, text, err := ParseWhen(args, st.Now, loc)
	if err != nil {
		return Response{Instinct: "remind", Reply: whenProblem(err, loc)}
	}
	return reminder(at, text, st)
}

// remindWord marks a schedule that only reminds: /schedule "…" remind TEXT.
var remindWord = regexp.MustCompile(`(?i)^remind(?:\s+me)?(?:\s*:\s*|\s+|$)`)

func schedule(args string, st State) Response {
	spec, text, ok := splitSpec(args)
	if !ok {
		return Response{Instinct: "schedule", Reply: scheduleExample}
	}
	kind := Run
	if m := remindWord.FindString(text); m != "" {
		kind, text = Reminder, strings.TrimSpace(text[len(m):])
	}
	return scheduled(spec, kind, text, st)
}

// scheduled is the reply and job of a schedule of spec doing text.
func scheduled(spec string, kind JobKind, text string, st State) Response {
	loc := st.location()
	sched, err := ParseSpec(spec)
	if err != nil {
		return Response{Instinct: "schedule", Reply: fmt.Sprintf("I could not read that cron spec: %v.\n%s", err, scheduleExample)}
	}
	switch n := len([]rune(text)); {
	case n == 0:
		return Response{Instinct: "schedule", Reply: "What should the schedule do? " + scheduleExample}
	case n > maxJobText:
		return Response{Instinct: "schedule", Reply: fmt.Sprintf("That text is %d characters long; keep it under %d.", n, maxJobText)}
	}
	next := NextRun(sched, st.Now, loc)
	if next.IsZero() {
		return Response{Instinct: "schedule", Reply: fmt.Sprintf("%q never comes due (is the date impossible?). %s", spec, scheduleExample)}
	}
	what := fmt.Sprintf("each run sends %q to me as if you wrote it, so I work on it (it uses the LLM like any request)", text)
	if kind == Reminder {
		what = fmt.Sprintf("each run reminds you: %s", text)
	}
	return Response{
		Instinct: "schedule",
		Effect:   Schedule,
		Job:      Job{Kind: kind, Text: text, Spec: spec, Next: next},
		Reply:    fmt.Sprintf("🔁 Scheduled %q (%s); next run %s — %s.", spec, loc, next.Format(timeLayout), what),
	}
}

const cronUsage = "Usage: /cron list · /cron remove ID · /cron pause ID · /cron resume ID (the ids are in /cron list)"

func cronCommand(args string, _ State) Response {
	words := strings.Fields(strings.ToLower(args))
	if len(words) == 1 && words[0] == "list" {
		return Response{Instinct: "cron", Effect: CronList}
	}
	if len(words) != 2 {
		return Response{Instinct: "cron", Reply: cronUsage}
	}
	effect, ok := map[string]Effect{"remove": CronRemove, "delete": CronRemove, "rm": CronRemove, "pause": CronPause, "resume": CronResume}[words[0]]
	id, err := strconv.ParseInt(strings.TrimPrefix(words[1], "#"), 10, 64)
	if !ok || err != nil || id <= 0 {
		return Response{Instinct: "cron", Reply: cronUsage}
	}
	return Response{Instinct: "cron", Effect: effect, JobID: id}
}

// workspaceName is a workspace's name as /watch, /ship and /use accept it.
var workspaceName = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$`)

// validWorkspace tells a workspace name the commands accept (never a path).
func validWorkspace(name string) bool {
	return workspaceName.MatchString(name) && !strings.Contains(name, "..")
}

const watchUsage = "Usage: /watch on [WORKSPACE] · /watch off [WORKSPACE] — tells you when files change in the workspace and when its branch falls behind upstream."

func watch(args string, st State) Response {
	words := strings.Fields(args)
	if len(words) == 0 || len(words) > 2 {
		return Response{Instinct: "watch", Reply: watchUsage}
	}
	effect, ok := map[string]Effect{"on": WatchOn, "off": WatchOff}[strings.ToLower(words[0])]
	if !ok {
		return Response{Instinct: "watch", Reply: watchUsage}
	}
	ws := st.Workspace
	if len(words) == 2 {
		ws = words[1]
	}
	switch {
	case ws == "":
		return Response{Instinct: "watch", Reply: "No workspace is selected; name one: /watch " + strings.ToLower(words[0]) + " WORKSPACE."}
	case !validWorkspace(ws):
		return Response{Instinct: "watch", Reply: fmt.Sprintf("%q is not a workspace name (letters, digits, '.', '_' and '-'). %s", ws, watchUsage)}
	}
	return Response{Instinct: "watch", Effect: effect, Workspace: ws}
}

func (st State) location() *time.Location {
	if st.Location == nil {
		return time.UTC
	}
	return st.Location
}
