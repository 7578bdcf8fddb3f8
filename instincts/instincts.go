package instincts

import (
	"fmt"
	"regexp"
	"strings"
	"time"
)

// Effect is what the conversation runtime must do after an instinct
// replied.
type Effect string

const (
	// None: the reply is all.
	None Effect = ""
	// Stop: cancel the turn in flight and stop the running task.
	Stop Effect = "stop"
	// Clear: start a fresh history (workspace and settings are kept).
	Clear Effect = "clear"
	// Answer: resolve the open prompt with Response.Answer.
	Answer Effect = "answer"
	// SetAutonomy: store Response.Autonomy as the conversation's level.
	SetAutonomy Effect = "set_autonomy"
	// Remind: create the one-shot reminder Response.Job.
	Remind Effect = "remind"
	// Schedule: create the recurring schedule Response.Job.
	Schedule Effect = "schedule"
	// CronList: list the sender's reminders and schedules.
	CronList Effect = "cron_list"
	// CronRemove, CronPause, CronResume: change the reminder or schedule
	// Response.JobID.
	CronRemove Effect = "cron_remove"
	CronPause  Effect = "cron_pause"
	CronResume Effect = "cron_resume"
	// WatchOn, WatchOff: start or stop watching Response.Workspace.
	WatchOn  Effect = "watch_on"
	WatchOff Effect = "watch_off"
)

// Autonomy is how much Fetch decides on its own in a conversation.
type Autonomy string

const (
	// Supervised: every question reaches the owner and every task needs
	// the owner's approval before it starts.
	Supervised Autonomy = "supervised"
	// Cautious (the default): routine confirmations ("shall I
	// proceed?") are answered yes by Fetch; other questions reach the
	// owner and dangerous actions need approval.
	Cautious Autonomy = "cautious"
	// Autonomous: as Cautious, and what the coding CLI does inside the
	// kennel runs without asking unless it is on the deny list.
	// Destructive questions still reach the owner.
	Autonomous Autonomy = "autonomous"
)

// ParseAutonomy reads a level; "" and unknown words are not levels.
func ParseAutonomy(s string) (Autonomy, bool) {
	switch a := Autonomy(strings.ToLower(strings.TrimSpace(s))); a {
	case Supervised, Cautious, Autonomous:
		return a, true
	}
	return "", false
}

// Spend is today's LLM spend, as /status shows it.
type Spend struct {
	Tokens int
	Cost   float64
	// TokenBudget and CostBudget are today's limits; 0 when none.
	TokenBudget int
	CostBudget  float64
	// TurnTokens and TurnCost are the limits of one request; 0 when none.
	TurnTokens int
	TurnCost   float64
}

// DaySpend is today's whole spend: the coding CLIs' and Fetch's own LLM
// calls (UTC day), with the cap on new tasks (FETCH_DAILY_BUDGET_USD, 0
// when none).
type DaySpend struct {
	USD    float64
	Budget float64
}

// PromptKind is what an open prompt waits for.
type PromptKind string

const (
	Question PromptKind = "question"
	Approval PromptKind = "approval"
)

// Task is the running task, as /status shows it.
type Task struct {
	ID        string
	Goal      string
	Harness   string
	Workspace string
	StartedAt time.Time
	// Bypass: its CLI runs one-shot, its permissions bypassed (the
	// kennel is the boundary).
	Bypass bool
}

// Prompt is what Fetch waits for the owner to answer.
type Prompt struct {
	Kind PromptKind
	Body string
}

// State is the snapshot an instinct decides on.
type State struct {
	Now       time.Time
	Channel   string
	UserID    string
	Role      string
	Mode      string
	ModeEmoji string
	ModeSince time.Time
	Workspace string
	// Task is the running task, nil when none.
	Task *Task
	// Busy tells that a turn is being handled (the agent is thinking).
	Busy bool
	// Prompt is the open prompt, nil when none.
	Prompt *Prompt
	// Autonomy is the conversation's level; "" reads as Cautious.
	Autonomy Autonomy
	// Spend is today's LLM spend, nil when unknown.
	Spend *Spend
	// DaySpend is today's whole spend, for /status; nil when unknown.
	DaySpend *DaySpend
	// LLM tells that an LLM is configured (requests in plain words work).
	LLM bool
	// Location is the owner's time zone for reading and showing times;
	// UTC when nil.
	Location *time.Location
	// Shipping describes how the selected workspace's work ships ("" when
	// unknown); filled for /status only.
	Shipping string
	// Engines describes the Docker engines and their load when Fetch uses
	// more than one; filled for /status only.
	Engines string
	// WayOut describes the kennels' way out and the hosts allowed to the
	// selected workspace ("" when unknown); filled for /status only.
	WayOut string
	// Limits describes the subscription windows the coding CLIs last
	// reported ("" when none did); filled for /status only.
	Limits string
}

// Response is an instinct's answer.
type Response struct {
	// Instinct names the instinct that matched ("status", "stop", …).
	Instinct string
	Reply    string
	Effect   Effect
	// Answer is the answer for Effect Answer: "yes" or "no".
	Answer string
	// Autonomy is the level for Effect SetAutonomy.
	Autonomy Autonomy
	// Job is what to create for Effects Remind and Schedule.
	Job Job
	// JobID is the reminder or schedule for CronRemove, CronPause and
	// CronResume.
	JobID int64
	// Workspace is the workspace for WatchOn, WatchOff, ShipMode and the
	// Hosts effects.
	Workspace string
	// ShipMode is the mode to set for Effect ShipMode; empty shows it.
	ShipMode string
	// PRAction and TaskID are what Effect PR does, and to which task.
	PRAction string
	TaskID   string
	// User is the user id for AllowAdd and AllowRemove.
	User string
	// Host is the entry for HostsAdd and HostsRemove, as typed (the
	// runtime checks it).
	Host string
	// Setting and Value are what AutoMergeSet changes and to what, as
	// typed (the runtime checks the value).
	Setting string
	Value   string
	// ChecksAction and ChecksArg are what Effect Checks does ("" shows
	// the checks; set, add, auto, off, failing) and its argument, as
	// typed (the runtime parses a command line).
	ChecksAction string
	ChecksArg    string
}

// command is one slash command.
type command struct {
	name  string
	usage string
	// short is the one line /help gives it; help what /help NAME adds.
	short string
	help  string
	// handle answers the command; args is the text after the command.
	// nil: the conversation answers it (Match does not take it).
	handle func(args string, st State) Response
}

// Set is the instincts, ready to match.
type Set struct {
	commands []command
	stop     *regexp.Regexp
	yes      *regexp.Regexp
	no       *regexp.Regexp
}

// New builds the instinct set.
func New() *Set {
	s := &Set{
		// The whole message must be a stop: "stop using tabs in main.go"
		// is a request, not a stop.
		stop: regexp.MustCompile(`(?i)^\s*(?:(?:please|pls|ok|okay|hey|fetch)[\s,]+)*(?:stop|cancel|abort|halt|kill)(?:\s+(?:it|that|this|now|the\s+task|this\s+task|that\s+task|the\s+run|everything|all|please|right\s+now|immediately))*\s*[.!]*\s*$`),
		yes:  regexp.MustCompile(`(?i)^\s*(?:/?approve|approved|yes|y|yep|yeah|yup|confirm|confirmed|👍|✅)\s*[.!]*\s*$`),
		no:   regexp.MustCompile(`(?i)^\s*(?:/?deny|denied|no|n|nope|nah|reject|rejected|👎|❌)\s*[.!]*\s*$`),
	}
	s.commands = []command{
		{"help", "/help", "this list; /help COMMAND for one in full", "what Fetch understands", s.help},
		{"status", "/status", "what runs, what waits for you, today's spend", "mode, workspace, running task, autonomy, what waits for you and the LLM budget left", status},
		{"stop", "/stop", "stop the running task now", "stop the running task now (also: stop, cancel, abort the task)", stopCommand},
		{"clear", "/clear", "a fresh conversation history", "start a fresh conversation history (keeps the workspace)", clear},
		{"whoami", "/whoami", "who Fetch thinks you are", "who Fetch thinks you are", whoami},
		{"autonomy", "/autonomy", "how much Fetch decides on its own", "show or set how much Fetch decides on its own: /autonomy supervised, cautious or autonomous", autonomy},
		{"commands", "/commands", "the command names", "the list of commands", s.commandList},
		{"approve", "/approve", "approve what waits (also: yes)", "approve what Fetch is waiting on (also: yes)", func(_ string, st State) Response { return answer("yes", st) }},
		{"deny", "/deny", "deny what waits (also: no)", "deny what Fetch is waiting on (also: no)", func(_ string, st State) Response { return answer("no", st) }},
		{"remind", "/remind", "a one-time reminder", "a one-time reminder: /remind in 20m check the deploy, /remind at 18:30 call Bob, /remind tomorrow 9am standup, /remind on friday at 17:00 report; or in plain words: remind me tomorrow at 9 to check the deploy", remind},
		{"schedule", "/schedule", "a recurring job or reminder", `a recurring job: /schedule "0 9 * * 1-5" summarize open PRs (runs it as a request), /schedule "30 17 * * 5" remind weekly report (only reminds); or in plain words: every monday at 9 summarize open PRs, every weekday at 17:30 remind me to stretch`, schedule},
		{"cron", "/cron", "your reminders and schedules", "your reminders and schedules: /cron list, /cron remove ID, /cron pause ID, /cron resume ID", cronCommand},
		{"watch", "/watch", "changes and upstream news of a workspace", "/watch on|off [WORKSPACE]: tell you when files change there or its branch falls behind upstream", watch},
		{"ship", "/ship", "how a workspace's work ships", "/ship [WORKSPACE] [pr-required|autonomous|local]: show or set how a workspace's finished work ships", ship},
		{"checks", "/checks", "what a workspace's work must pass before a pull request", "/checks, /checks set|add COMMAND, /checks auto|off, /checks failing draft|hold: the tests and builds run in the kennel on a task's branch before its pull request opens or merges (detected when you set none), and whether a failure opens a draft or nothing (changes: owner only)", checksCommand},
		{"pr", "/pr", "push, merge, close a task's pull request", "/pr ship|merge|close|resolve|review|anyway ID: push a task's branch and open its pull request, merge or close it, resolve its conflict with the base, address its review, ship it although a check failed", pr},
		{"use", "/use", "the workspace to work in", "/use WORKSPACE: work in that workspace from now on (/use alone lists them)", use},
		{"allow", "/allow", "who else may talk to me (owner)", "/allow add|remove USER_ID, /allow list: who besides the owner may talk to me (owner only)", allow},
		{"automerge", "/automerge", "when a pull request merges on its own", "/automerge, /automerge files|lines N, /automerge add|remove PATH: when Fetch may merge the selected workspace's pull requests on its own (changes owner only)", automerge},
		{"hosts", "/hosts", "what the workspace's runs may reach (owner)", "/hosts, /hosts add|remove HOST: the hosts the selected workspace's runs may reach besides their coding CLI's own (owner only)", hosts},
		// Taken by the conversation, which owns the coding CLIs' requests
		// (listed here so that /help and /commands name them).
		{"plan", "/plan", "a plan to approve before any change", "/plan GOAL: the coding CLI reads the code and proposes a plan; you approve, revise or cancel it before anything changes", nil},
		{"policy", "/policy", "what the coding CLI may do unasked", "/policy, /policy remove ID: what the coding CLI may do without asking you, and the remembered rules (remove: owner only)", nil},
		{"continue", "/continue", "tell a task what to do next", "/continue TASK_ID TEXT: a running task's CLI gets TEXT at its next turn (or as its next run); an ended task continues with it on its own branch, and an open pull request gets the commits (the result's Continue button)", nil},
		{"retry", "/retry", "run a failed task again", "/retry TASK_ID: run a task that failed, was stopped or needs attention again, as it was asked, on its branch", nil},
		{"model", "/model", "the coding CLI's model for tasks here", "/model NAME, /model default: the coding CLI's model this conversation's tasks use (claude: sonnet, opus, haiku; codex: gpt-…); a CLI that does not take it refuses the task with the names it takes", nil},
		{"budget", "/budget", "raise a paused task's cap, or stop it", "/budget TASK_ID raise [USD]|stop: a task paused at its budget goes on under a higher cap (twice it when no USD), or stops there (its buttons send these; owner only)", nil},
		{"withdraw", "/withdraw", "take back a waiting message", "/withdraw MESSAGE_ID: take back a message that waits for a task's next run (the Take it back button)", nil},
		{"req", "/req", "answer a coding CLI's request by id", "/req ID allow|task|always|deny [reason]|answer TEXT|approve|revise TEXT|cancel|full: answer a coding CLI's request by its id (the buttons send these)", nil},
	}
	return s
}

// IsStop tells whether text is a stop: /stop or a whole-message natural
// form. The runtime uses it to let a stop overtake queued messages.
func (s *Set) IsStop(text string) bool {
	t := strings.TrimSpace(text)
	return strings.EqualFold(t, "/stop") || s.stop.MatchString(t)
}

// Match answers text when an instinct applies to it.
func (s *Set) Match(text string, st State) (Response, bool) {
	t := strings.TrimSpace(text)
	if t == "" {
		return Response{}, false
	}
	if s.IsStop(t) {
		return stopCommand("", st), true
	}
	if strings.HasPrefix(t, "/") {
		name, args, _ := strings.Cut(t[1:], " ")
		name = strings.ToLower(name)
		for _, c := range s.commands {
			if c.name == name {
				if c.handle == nil {
					return Response{}, false // the conversation's
				}
				return c.handle(strings.TrimSpace(args), st), true
			}
		}
		return Response{
			Instinct: "unknown",
			Reply:    fmt.Sprintf("I don't know the command %q. Send /help to see what I understand.", "/"+name),
		}, true
	}
	if s.yes.MatchString(t) {
		return answer("yes", st), true
	}
	if s.no.MatchString(t) {
		return answer("no", st), true
	}
	return plainWords(t, st)
}

// help lists the commands a line each, short enough for one Discord
// message; /help NAME gives one command in full.
func (s *Set) help(args string, _ State) Response {
	if name := strings.ToLower(strings.TrimPrefix(strings.TrimSpace(args), "/")); name != "" {
		for _, c := range s.commands {
			if c.name == name {
				return Response{Instinct: "help", Reply: fmt.Sprintf("%s — %s", c.usage, c.help)}
			}
		}
		return Response{Instinct: "help", Reply: fmt.Sprintf("I don't know the command %q. Send /help to see what I understand.", "/"+name)}
	}
	var b strings.Builder
	b.WriteString("Tell me what to do in plain words (\"add a health check to the API\"), ask about your code, or use a command:\n")
	for _, c := range s.commands {
		fmt.Fprintf(&b, "%s — %s\n", c.usage, c.short)
	}
	b.WriteString("/help COMMAND says one in full. When I ask you something, just answer; yes/no settles an approval.")
	return Response{Instinct: "help", Reply: b.String()}
}

func (s *Set) commandList(_ string, _ State) Response {
	names := make([]string, len(s.commands))
	for i, c := range s.commands {
		names[i] = c.usage
	}
	return Response{Instinct: "commands", Reply: "Commands: " + strings.Join(names, " ")}
}

func status(_ string, st State) Response {
	var b strings.Builder
	fmt.Fprintf(&b, "%s %s since %s (%s)\n", st.ModeEmoji, st.Mode, st.ModeSince.UTC().Format("2006-01-02 15:04 UTC"), ago(st.Now, st.ModeSince))
	if st.Workspace == "" {
		b.WriteString("Workspace: none selected (/use WORKSPACE selects one)\n")
	} else {
		fmt.Fprintf(&b, "Workspace: %s\n", st.Workspace)
	}
	if st.Task == nil {
		b.WriteString("Task: none running")
	} else {
		fmt.Fprintf(&b, "Task: %s on %s in %s, running for %s — %s", st.Task.ID, st.Task.Harness, st.Task.Workspace, elapsed(st.Now.Sub(st.Task.StartedAt)), truncate(st.Task.Goal, 120))
		if st.Task.Bypass {
			fmt.Fprintf(&b, "\n  (%s runs one-shot: its permissions are bypassed, and the kennel is the boundary)", st.Task.Harness)
		}
	}
	autonomy := st.Autonomy
	if autonomy == "" {
		autonomy = Cautious
	}
	fmt.Fprintf(&b, "\nAutonomy: %s", autonomy)
	if st.Shipping != "" {
		fmt.Fprintf(&b, "\nShipping: %s", st.Shipping)
	}
	if st.Engines != "" {
		fmt.Fprintf(&b, "\nEngines: %s", st.Engines)
	}
	if st.WayOut != "" {
		fmt.Fprintf(&b, "\nWay out: %s", st.WayOut)
	}
	if st.Limits != "" {
		fmt.Fprintf(&b, "\nSubscription limits (as the CLIs last told): %s", st.Limits)
	}
	if st.Prompt != nil {
		fmt.Fprintf(&b, "\nWaiting for your %s: %s", st.Prompt.Kind, truncate(st.Prompt.Body, 200))
	} else {
		b.WriteString("\nWaiting for your approval or answer: nothing")
	}
	if d := st.DaySpend; d != nil && (d.USD > 0 || d.Budget > 0) {
		fmt.Fprintf(&b, "\nSpent today (coding CLIs and Fetch's own calls): $%.4f", d.USD)
		switch {
		case d.Budget <= 0:
			b.WriteString("; no daily budget for tasks")
		case d.USD >= d.Budget:
			fmt.Fprintf(&b, ", over the daily budget of $%.2f: a new task asks you first", d.Budget)
		default:
			fmt.Fprintf(&b, " of $%.2f a day; $%.2f left for tasks", d.Budget, d.Budget-d.USD)
		}
	}
	switch {
	case st.Spend != nil:
		b.WriteString("\n" + spendLine(*st.Spend))
	case !st.LLM:
		b.WriteString("\nLLM: none configured; commands work, requests in plain words need OPENROUTER_API_KEY")
	}
	return Response{Instinct: "status", Reply: b.String()}
}

// spendLine is today's LLM spend and the budgets left.
func spendLine(s Spend) string {
	line := fmt.Sprintf("Today: %d tokens, $%.4f", s.Tokens, s.Cost)
	var limits, left []string
	if s.TokenBudget > 0 {
		limits = append(limits, fmt.Sprintf("%d tokens", s.TokenBudget))
		left = append(left, fmt.Sprintf("%d tokens", max(0, s.TokenBudget-s.Tokens)))
	}
	if s.CostBudget > 0 {
		limits = append(limits, fmt.Sprintf("$%.2f", s.CostBudget))
		left = append(left, fmt.Sprintf("$%.2f", max(0, s.CostBudget-s.Cost)))
	}
	if len(limits) > 0 {
		line += fmt.Sprintf(" of %s; left today: %s", strings.Join(limits, " / "), strings.Join(left, " / "))
	} else {
		line += "; no daily budget"
	}
	var turn []string
	if s.TurnTokens > 0 {
		turn = append(turn, fmt.Sprintf("%d tokens", s.TurnTokens))
	}
	if s.TurnCost > 0 {
		turn = append(turn, fmt.Sprintf("$%.2f", s.TurnCost))
	}
	if len(turn) > 0 {
		line += "; per request at most " + strings.Join(turn, " / ")
	}
	return line
}

func stopCommand(_ string, st State) Response {
	switch {
	case st.Task != nil:
		return Response{Instinct: "stop", Effect: Stop, Reply: fmt.Sprintf("Stopping task %s.", st.Task.ID)}
	case st.Busy:
		return Response{Instinct: "stop", Effect: Stop, Reply: "Stopped."}
	}
	return Response{Instinct: "stop", Effect: Stop, Reply: "Nothing is running."}
}

func clear(_ string, st State) Response {
	if st.Task != nil {
		return Response{Instinct: "clear", Reply: fmt.Sprintf("Task %s is running; /stop it or wait for it to finish before clearing the history.", st.Task.ID)}
	}
	kept := "no workspace selected"
	if st.Workspace != "" {
		kept = "workspace " + st.Workspace + " kept"
	}
	return Response{Instinct: "clear", Effect: Clear, Reply: "History cleared (" + kept + ")."}
}

func autonomy(args string, st State) Response {
	cur := st.Autonomy
	if cur == "" {
		cur = Cautious
	}
	if args == "" {
		return Response{Instinct: "autonomy", Reply: fmt.Sprintf("Autonomy: %s. Set it with /autonomy supervised, cautious or autonomous.", cur)}
	}
	level, ok := ParseAutonomy(args)
	if !ok {
		return Response{Instinct: "autonomy", Reply: fmt.Sprintf("%q is not a level. Use /autonomy supervised, cautious or autonomous.", args)}
	}
	if st.Role != "owner" {
		return Response{Instinct: "autonomy", Reply: "Only the owner can change the autonomy level."}
	}
	var what string
	switch level {
	case Supervised:
		what = "I'll ask you before every task and pass every question on."
	case Cautious:
		what = "I'll answer routine confirmations myself, pass other questions on and ask before anything dangerous."
	case Autonomous:
		what = "I'll answer routine confirmations myself; dangerous actions still need your yes."
	}
	return Response{Instinct: "autonomy", Effect: SetAutonomy, Autonomy: level, Reply: fmt.Sprintf("Autonomy: %s. %s", level, what)}
}

func whoami(_ string, st State) Response {
	return Response{Instinct: "whoami", Reply: fmt.Sprintf("You are %s (%s) on %s.", st.UserID, st.Role, st.Channel)}
}

func answer(yesno string, st State) Response {
	if st.Prompt == nil {
		return Response{Instinct: yesno, Reply: "Nothing is waiting for a yes or no right now."}
	}
	reply := "Approved."
	switch {
	case st.Prompt.Kind == Approval && yesno == "no":
		reply = "Denied. Nothing was done."
	case st.Prompt.Kind == Question:
		reply = "Got it: " + yesno + "."
	}
	return Response{Instinct: yesno, Effect: Answer, Answer: yesno, Reply: reply}
}

// ago renders how long before now t was, coarsely.
func ago(now, t time.Time) string {
	d := now.Sub(t)
	if d < time.Minute {
		return "just now"
	}
	return elapsed(d) + " ago"
}

// elapsed renders a duration as 1h02m, 4m12s or 9s.
func elapsed(d time.Duration) string {
	if d < 0 {
		d = 0
	}
	d = d.Truncate(time.Second)
	h, m, s := int(d.Hours()), int(d.Minutes())%60, int(d.Seconds())%60
	switch {
	case h > 0:
		return fmt.Sprintf("%dh%02dm", h, m)
	case m > 0:
		return fmt.Sprintf("%dm%02ds", m, s)
	}
	return fmt.Sprintf("%ds", s)
}

func truncate(s string, n int) string {
	s = strings.Join(strings.Fields(s), " ")
	r := []rune(s)
	if len(r) <= n {
		return s
	}
	return string(r[:n-1]) + "…"
}
