package instincts

import (
	"fmt"
	"regexp"
	"strings"
	"time"
)

// Reminders and schedules in plain words. "remind me tomorrow at 9 to
// check the deploy", "remind me to call Bob in 20 minutes", "every monday
// at 9 summarize open PRs" and "remind me every friday at 17:00 to write
// the weekly report" are read with the parsers of /remind and /schedule
// and saved as those would save them, without the LLM. A message that
// only looks like one ("remind me how the cleanup works", "every file
// needs a header") is left to the conversation.

// plainLead is what may open a message before the request: "please",
// "hey fetch,", "can you".
const plainLead = `(?i)^(?:(?:please|pls|hey|hi|ok|okay|fetch)[\s,!]+)*(?:(?:can|could|would|will) you\s+)?(?:please\s+)?`

var (
	// plainRemind is "remind me" followed by a time or what to be
	// reminded of; the group is what follows.
	plainRemind = regexp.MustCompile(plainLead + `remind me\s+((?:to|that|about|of|in|at|on|next|tomorrow|today|every|each|(?:mon|tues|wednes|thurs|fri|satur|sun)day)\b.*?)[.!?\s]*$`)
	// plainEvery is a recurring request: "every monday at 9 TEXT".
	plainEvery = regexp.MustCompile(plainLead + `((?:every|each)\s.*?)[.!?\s]*$`)
	// plainConnector joins the time to the text: "… to check the deploy".
	plainConnector = regexp.MustCompile(`(?i)^(?:to|that|about|of)\s+`)
	// plainTimeWords start a time at the end of a reminder: "remind me to
	// call Bob at 18:30".
	plainTimeWords = map[string]bool{"in": true, "at": true, "on": true, "next": true, "today": true, "tomorrow": true}
)

// plainExample is the usage a reminder in plain words gets when its time
// cannot be read.
const plainExample = "Say it like: remind me in 20 minutes to check the deploy · remind me tomorrow at 9 to call Bob · every monday at 9 summarize open PRs (times are in %s)."

// plainWords answers a reminder or schedule in plain words.
func plainWords(t string, st State) (Response, bool) {
	if m := plainEvery.FindStringSubmatch(t); m != nil {
		return plainSchedule(m[1], Run, st)
	}
	m := plainRemind.FindStringSubmatch(t)
	if m == nil {
		return Response{}, false
	}
	rest := m[1]
	if w := strings.ToLower(strings.Fields(rest)[0]); w == "every" || w == "each" {
		r, ok := plainSchedule(rest, Reminder, st)
		if !ok {
			return Response{Instinct: "remind", Reply: fmt.Sprintf("I could not tell when. "+plainExample, st.location())}, true
		}
		return r, true
	}
	loc := st.location()
	// The time first: "remind me tomorrow at 9 to check the deploy".
	at, text, err := parseWhen(rest, st.Now, loc, true)
	if err == errNoTime {
		// The time last: "remind me to call Bob at 18:30".
		words := strings.Fields(rest)
		for i := len(words) - 1; i > 0; i-- {
			if !plainTimeWords[strings.ToLower(words[i])] {
				continue
			}
			a, tail, e := parseWhen(strings.Join(words[i:], " "), st.Now, loc, true)
			if e == errNoTime || (e == nil && tail != "") {
				continue
			}
			at, text, err = a, strings.Join(words[:i], " "), e
			break
		}
	}
	text = plainConnector.ReplaceAllString(strings.TrimSpace(text), "")
	switch {
	case err == errNoTime:
		return Response{Instinct: "remind", Reply: fmt.Sprintf("When should I remind you? "+plainExample, loc)}, true
	case err != nil:
		return Response{Instinct: "remind", Reply: whenProblem(err, loc)}, true
	}
	return reminder(at, text, st), true
}

// plainSchedule reads "every PERIOD [at CLOCK] TEXT" into the schedule
// /schedule would make, kind Run unless the text begins "remind me"; ok
// is false when s names no period Fetch knows.
func plainSchedule(s string, kind JobKind, st State) (Response, bool) {
	words := strings.Fields(s)[1:] // after "every"
	dow, n := plainPeriod(words)
	if n == 0 {
		return Response{}, false
	}
	words = words[n:]
	minute, hour := "0", "*"
	if dow != "hourly" {
		if len(words) == 0 || !strings.EqualFold(words[0], "at") {
			return Response{Instinct: "schedule", Reply: fmt.Sprintf("At what time? "+plainExample, st.location())}, true
		}
		h, mi, used, err := parseClock(words[1:], true)
		if len(words) < 2 || err != nil {
			return Response{Instinct: "schedule", Reply: whenProblem(errBadClock, st.location())}, true
		}
		minute, hour, words = fmt.Sprint(mi), fmt.Sprint(h), words[1+used:]
	} else {
		dow = "*"
	}
	text := strings.Join(words, " ")
	if m := remindWord.FindString(text); m != "" {
		kind, text = Reminder, strings.TrimSpace(text[len(m):])
	}
	if kind == Reminder {
		text = plainConnector.ReplaceAllString(text, "")
	}
	return scheduled(fmt.Sprintf("%s %s * * %s", minute, hour, dow), kind, text, st), true
}

// plainPeriod reads the days of "every monday and thursday", "every
// weekday", "every day" (or "hour") as a cron day-of-week field ("hourly"
// for an hour) and says how many words it used; 0 when none.
func plainPeriod(words []string) (string, int) {
	if len(words) == 0 {
		return "", 0
	}
	switch strings.ToLower(strings.TrimRight(words[0], ",")) {
	case "day", "days":
		return "*", 1
	case "weekday", "weekdays":
		return "1-5", 1
	case "weekend", "weekends":
		return "0,6", 1
	case "hour":
		return "hourly", 1
	}
	var days []string
	n := 0
	for n < len(words) {
		if d, ok := weekday(words[n]); ok {
			days = append(days, fmt.Sprint(int(d)))
			n++
			continue
		}
		if w := strings.ToLower(words[n]); (w == "and" || w == ",") && len(days) > 0 && n+1 < len(words) {
			if _, ok := weekday(words[n+1]); ok {
				n++
				continue
			}
		}
		break
	}
	return strings.Join(days, ","), n
}

// reminder is the reply and job of a one-shot reminder at at.
func reminder(at time.Time, text string, st State) Response {
	loc := st.location()
	if strings.TrimSpace(text) == "" {
		return Response{Instinct: "remind", Reply: whenProblem(errNoText, loc)}
	}
	if n := len([]rune(text)); n > maxJobText {
		return Response{Instinct: "remind", Reply: fmt.Sprintf("That reminder is %d characters long; keep it under %d.", n, maxJobText)}
	}
	return Response{
		Instinct: "remind",
		Effect:   Remind,
		Job:      Job{Kind: Reminder, Text: text, At: at, Next: at},
		Reply:    fmt.Sprintf("⏰ I'll remind you %s (in %s): %s", at.In(loc).Format(timeLayout), elapsed(at.Sub(st.Now).Round(time.Second)), text),
	}
}
