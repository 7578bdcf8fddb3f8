package instincts

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"
)

// maxAhead is the furthest ahead a reminder may be set.
const maxAhead = 366 * 24 * time.Hour

// Errors of the time parser; the usage reply explains each.
var (
	errNoTime   = errors.New("no time")
	errPast     = errors.New("time in the past")
	errTooFar   = errors.New("too far ahead")
	errNoText   = errors.New("no text")
	errBadClock = errors.New("bad clock time")
)

// ParseWhen reads the time at the start of s — "in 20m", "20m", "in 2
// hours", "at 18:30", "at 6pm", "tomorrow 9am", "today at 17:00", "on
// friday at 9am", "next monday 10:00", "on 2026-12-24 9:00" — in loc,
// relative to now, and returns it with the rest of s. Times at or before
// now, and more than a year ahead, are errors; it never returns a zero
// time without an error.
func ParseWhen(s string, now time.Time, loc *time.Location) (time.Time, string, error) {
	return parseWhen(s, now, loc, false)
}

// parseWhen is ParseWhen; with bareHour a bare number is an hour of the
// day ("tomorrow at 9"), as people write in plain words.
func parseWhen(s string, now time.Time, loc *time.Location, bareHour bool) (time.Time, string, error) {
	if loc == nil {
		loc = time.UTC
	}
	now = now.In(loc)
	words := strings.Fields(s)
	if len(words) == 0 {
		return time.Time{}, "", errNoTime
	}
	var at time.Time
	var n int
	var err error
	switch strings.ToLower(words[0]) {
	case "in":
		var d time.Duration
		d, n, err = parseDuration(words[1:])
		n++
		if err == nil {
			at = now.Add(d)
		}
	case "at":
		at, n, err = parseDay(words[1:], now, loc, bareHour)
		n++
	case "today", "tomorrow", "on", "next":
		at, n, err = parseDay(words, now, loc, bareHour)
	default:
		if _, ok := weekday(words[0]); ok {
			at, n, err = parseDay(words, now, loc, bareHour)
			break
		}
		// A bare duration: /remind 5m check tests.
		var d time.Duration
		if d, n, err = parseDuration(words); err == nil {
			at = now.Add(d)
		}
	}
	if err != nil {
		return time.Time{}, "", err
	}
	switch {
	case !at.After(now):
		return time.Time{}, "", errPast
	case at.Sub(now) > maxAhead:
		return time.Time{}, "", errTooFar
	}
	return at, strings.Join(words[n:], " "), nil
}

// parseDay reads [today|tomorrow|on DATE|DATE|[on|next] WEEKDAY] [at]
// CLOCK, or a bare CLOCK meaning today, and returns how many words it
// used. A weekday is its next one: today when the time is still ahead,
// a week on with "next" or when it is past.
func parseDay(words []string, now time.Time, loc *time.Location, bareHour bool) (time.Time, int, error) {
	y, m, d := now.Date()
	n := 0
	days := -1 // days ahead to a weekday; -1 when none was named
	if n < len(words) {
		w := strings.ToLower(words[n])
		next := false
		if (w == "on" || w == "next") && n+1 < len(words) {
			if _, ok := weekday(words[n+1]); ok {
				next = w == "next"
				n++
				w = strings.ToLower(words[n])
			}
		}
		switch wd, isDay := weekday(w); {
		case isDay:
			days = (int(wd) - int(now.Weekday()) + 7) % 7
			if next && days == 0 {
				days = 7
			}
			y, m, d = now.AddDate(0, 0, days).Date()
			n++
		case w == "today":
			n++
		case w == "tomorrow":
			y, m, d = now.AddDate(0, 0, 1).Date()
			n++
		case w == "on" || isDate(w):
			if w == "on" {
				n++
			}
			if n >= len(words) || !isDate(words[n]) {
				return time.Time{}, 0, errNoTime
			}
			t, err := time.ParseInLocation("2006-01-02", words[n], loc)
			if err != nil {
				return time.Time{}, 0, errNoTime
			}
			y, m, d = t.Date()
			n++
		}
	}
	if n < len(words) && strings.EqualFold(words[n], "at") {
		n++
	}
	if n >= len(words) {
		return time.Time{}, 0, errNoTime
	}
	h, mi, used, err := parseClock(words[n:], bareHour)
	if err != nil {
		return time.Time{}, 0, err
	}
	at := time.Date(y, m, d, h, mi, 0, 0, loc)
	if days == 0 && !at.After(now) {
		at = at.AddDate(0, 0, 7)
	}
	return at, n + used, nil
}

// weekdays are the days' names and their short forms.
var weekdays = map[string]time.Weekday{
	"sunday": time.Sunday, "sun": time.Sunday,
	"monday": time.Monday, "mon": time.Monday,
	"tuesday": time.Tuesday, "tue": time.Tuesday, "tues": time.Tuesday,
	"wednesday": time.Wednesday, "wed": time.Wednesday,
	"thursday": time.Thursday, "thu": time.Thursday, "thur": time.Thursday, "thurs": time.Thursday,
	"friday": time.Friday, "fri": time.Friday,
	"saturday": time.Saturday, "sat": time.Saturday,
}

// weekday reads a day's name ("monday", "Fri", "mondays").
func weekday(w string) (time.Weekday, bool) {
	w = strings.ToLower(strings.TrimRight(w, ","))
	if d, ok := weekdays[w]; ok {
		return d, true
	}
	d, ok := weekdays[strings.TrimSuffix(w, "s")]
	return d, ok && strings.HasSuffix(w, "days")
}

func isDate(w string) bool {
	return len(w) == 10 && w[4] == '-' && w[7] == '-'
}

// parseClock reads "18:30", "9am", "9:30pm" or "9 am" (and, with
// bareHour, "9") and returns the hour and minute and how many words it
// used.
func parseClock(words []string, bareHour bool) (hour, minute, used int, err error) {
	w := strings.ToLower(words[0])
	used = 1
	suffix := ""
	for _, s := range []string{"am", "pm"} {
		if strings.HasSuffix(w, s) {
			w, suffix = strings.TrimSuffix(w, s), s
		}
	}
	if suffix == "" && len(words) > 1 {
		if s := strings.ToLower(words[1]); s == "am" || s == "pm" {
			suffix, used = s, 2
		}
	}
	hs, ms, hasMinutes := strings.Cut(w, ":")
	hour, err = smallInt(hs, 2)
	if err != nil {
		return 0, 0, 0, errBadClock
	}
	if hasMinutes {
		if len(ms) != 2 {
			return 0, 0, 0, errBadClock
		}
		if minute, err = smallInt(ms, 2); err != nil || minute > 59 {
			return 0, 0, 0, errBadClock
		}
	} else if suffix == "" && !bareHour {
		// A bare number is not a time ("at 5 people").
		return 0, 0, 0, errBadClock
	}
	switch {
	case suffix == "" && hour > 23:
		return 0, 0, 0, errBadClock
	case suffix != "" && (hour < 1 || hour > 12):
		return 0, 0, 0, errBadClock
	case suffix == "am" && hour == 12:
		hour = 0
	case suffix == "pm" && hour != 12:
		hour += 12
	}
	return hour, minute, used, nil
}

// smallInt parses 1 to max ASCII digits.
func smallInt(s string, max int) (int, error) {
	if s == "" || len(s) > max {
		return 0, errBadClock
	}
	for _, r := range s {
		if r < '0' || r > '9' {
			return 0, errBadClock
		}
	}
	return strconv.Atoi(s)
}

// units maps the words of "in 20 minutes" to durations.
var units = map[string]time.Duration{
	"s": time.Second, "sec": time.Second, "secs": time.Second, "second": time.Second, "seconds": time.Second,
	"m": time.Minute, "min": time.Minute, "mins": time.Minute, "minute": time.Minute, "minutes": time.Minute,
	"h": time.Hour, "hr": time.Hour, "hrs": time.Hour, "hour": time.Hour, "hours": time.Hour,
	"d": 24 * time.Hour, "day": 24 * time.Hour, "days": 24 * time.Hour,
	"w": 7 * 24 * time.Hour, "week": 7 * 24 * time.Hour, "weeks": 7 * 24 * time.Hour,
}

// parseDuration reads "20m", "1h30m", "2d", "20 minutes" or "1 hour 30
// minutes" and returns how many words it used.
func parseDuration(words []string) (time.Duration, int, error) {
	var total time.Duration
	used := 0
	for used < len(words) {
		w := strings.ToLower(words[used])
		if w == "and" && used > 0 {
			used++
			continue
		}
		// "20m", "1h30m": number-unit pairs in one word.
		if d, ok := compact(w); ok {
			total += d
			used++
			continue
		}
		// "20 minutes": a number, then a unit word.
		if used+1 < len(words) {
			n, err := smallInt(w, 4)
			u, ok := units[strings.TrimSuffix(strings.ToLower(words[used+1]), ",")]
			if err == nil && ok {
				total += time.Duration(n) * u
				used += 2
				continue
			}
		}
		break
	}
	if used > 0 && strings.EqualFold(words[used-1], "and") {
		used--
	}
	if used == 0 || total > maxAhead {
		if total > maxAhead {
			return 0, 0, errTooFar
		}
		return 0, 0, errNoTime
	}
	return total, used, nil
}

// compact reads number-unit pairs written together: "20m", "1h30m", "2d".
func compact(w string) (time.Duration, bool) {
	var total time.Duration
	if w == "" {
		return 0, false
	}
	for w != "" {
		i := 0
		for i < len(w) && w[i] >= '0' && w[i] <= '9' {
			i++
		}
		if i == 0 || i > 4 {
			return 0, false
		}
		n, _ := strconv.Atoi(w[:i])
		w = w[i:]
		j := 0
		for j < len(w) && (w[j] < '0' || w[j] > '9') {
			j++
		}
		u, ok := units[w[:j]]
		if !ok {
			return 0, false
		}
		total += time.Duration(n) * u
		w = w[j:]
	}
	return total, true
}

// whenExample is the usage shown when a time cannot be read.
const whenExample = "Usage: /remind in 20m check the deploy · /remind at 18:30 call Bob · /remind tomorrow 9am standup · /remind on 2026-12-24 at 10:00 wrap presents"

// whenProblem explains a parse error to the owner.
func whenProblem(err error, loc *time.Location) string {
	switch {
	case errors.Is(err, errPast):
		return "That time has already passed. For a time of day that is over, say tomorrow — " + "/remind tomorrow 9am standup."
	case errors.Is(err, errTooFar):
		return "That is more than a year ahead; I keep reminders for up to a year."
	case errors.Is(err, errBadClock):
		return fmt.Sprintf("I could not read that time of day (times are in %s; use 18:30 or 6:30pm). %s", loc, whenExample)
	case errors.Is(err, errNoText):
		return "What should I remind you of? " + whenExample
	}
	return "I could not tell when. " + whenExample
}
