package instincts

import (
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/robfig/cron/v3"
)

// specOptions are the cron specs Fetch accepts: five fields (minute,
// hour, day of month, month, day of week) or a descriptor such as @daily,
// evaluated in the owner's time zone. The schedule runner parses stored
// specs with ParseSpec too, so that a spec accepted here runs there.
const specOptions = cron.Minute | cron.Hour | cron.Dom | cron.Month | cron.Dow | cron.Descriptor

// ParseSpec parses a cron spec as /schedule accepts it and returns its
// schedule. It refuses time-zone prefixes (the owner's zone applies),
// @every (a fixed interval is not a calendar schedule) and specs that
// never come due.
func ParseSpec(spec string) (cron.Schedule, error) {
	spec = strings.TrimSpace(spec)
	switch {
	case spec == "":
		return nil, errors.New("empty cron spec")
	case strings.Contains(spec, "TZ="):
		return nil, errors.New("time-zone prefixes are not accepted: schedules run in the owner's time zone")
	case strings.HasPrefix(spec, "@every"):
		return nil, errors.New("@every is not accepted: use a five-field spec")
	case !strings.HasPrefix(spec, "@") && len(strings.Fields(spec)) != 5:
		return nil, fmt.Errorf("a cron spec has five fields (minute hour day-of-month month day-of-week), got %d", len(strings.Fields(spec)))
	}
	sched, err := cron.NewParser(specOptions).Parse(spec)
	if err != nil {
		return nil, fmt.Errorf("cron spec %q: %w", spec, err)
	}
	return sched, nil
}

// NextRun is the first time after now that sched comes due, in loc; zero
// when it never does within five years (30 February).
func NextRun(sched cron.Schedule, now time.Time, loc *time.Location) time.Time {
	if loc == nil {
		loc = time.UTC
	}
	return sched.Next(now.In(loc))
}

// scheduleExample is the usage shown when /schedule cannot be read.
const scheduleExample = `Usage: /schedule "0 9 * * 1-5" summarize open PRs — runs the text as if you wrote it (the agent works on it); /schedule "30 17 * * 5" remind write the weekly report — just reminds you. Fields: minute hour day-of-month month day-of-week, in your time zone; @daily, @weekly and @hourly work too.`

// splitSpec takes the spec off the front of args: a quoted string
// ("0 9 * * 1-5", '…' or `…`) or a single @descriptor word.
func splitSpec(args string) (spec, rest string, ok bool) {
	args = strings.TrimSpace(args)
	if args == "" {
		return "", "", false
	}
	if args[0] == '@' {
		spec, rest, _ = strings.Cut(args, " ")
		return spec, strings.TrimSpace(rest), true
	}
	for _, q := range []string{`"`, `'`, "`", "“"} {
		if strings.HasPrefix(args, q) {
			closeQ := q
			if q == "“" {
				closeQ = "”"
			}
			spec, rest, found := strings.Cut(args[len(q):], closeQ)
			if !found {
				return "", "", false
			}
			return strings.TrimSpace(spec), strings.TrimSpace(rest), true
		}
	}
	return "", "", false
}
