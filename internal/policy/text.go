package policy

import (
	"fmt"
	"strings"

	"github.com/fetch-dev/fetch/instincts"
	"github.com/fetch-dev/fetch/internal/store"
)

// Audit actions, one per verdict and one for the owner's answer.
const (
	ActionAllow  = "policy_allow"
	ActionDeny   = "policy_deny"
	ActionAsk    = "policy_ask"
	ActionAnswer = "policy_answer"
	ActionRemove = "policy_remove"
)

// Answer is the owner's answer to a request that asked.
type Answer string

const (
	AllowOnce   Answer = "allow once"
	AllowTask   Answer = "allow for this task"
	AllowAlways Answer = "always allow in this workspace"
	DenyOnce    Answer = "deny"
)

// AuditEntry is the audit record of a decision Fetch made: who (fetch),
// what (the request) and what decided (the level, a rule, the deny list).
// The caller redacts Detail and writes it with store.Audit.
func AuditEntry(conversationID string, t Task, req Request, d Decision) store.AuditEntry {
	action := ActionAsk
	switch d.Verdict {
	case Allow:
		action = ActionAllow
	case Deny:
		action = ActionDeny
	}
	return store.AuditEntry{ConversationID: conversationID, Actor: "fetch", Action: action,
		Detail: fmt.Sprintf("task %s in %s: %s: %s", t.ID, t.Workspace, Describe(req), d.Reason)}
}

// AnswerEntry is the audit record of the owner's click: actor is who
// clicked, rule the rule it remembered (0 for none).
func AnswerEntry(conversationID, actor string, t Task, req Request, a Answer, rule int64) store.AuditEntry {
	detail := fmt.Sprintf("task %s in %s: %s: %s", t.ID, t.Workspace, Describe(req), a)
	if rule != 0 {
		detail += fmt.Sprintf(" (rule #%d)", rule)
	}
	return store.AuditEntry{ConversationID: conversationID, Actor: actor, Action: ActionAnswer, Detail: detail}
}

// LevelMeaning says what a level allows, asks and denies.
func LevelMeaning(level instincts.Autonomy) string {
	switch normal(level) {
	case instincts.Autonomous:
		return "autonomous: everything inside the kennel runs without asking, except the deny list, which is denied. Unknown tools ask."
	case instincts.Cautious:
		return "cautious: reads, edits in the worktree and the workspace's test and build commands run without asking; anything else asks you, the deny list with a warning."
	default:
		return "supervised: reads run without asking; every change asks you, the deny list with a warning."
	}
}

// maxTextRules bounds the rules /policy lists (a Discord message is 2,000
// characters).
const (
	maxTextRules = 15
	maxTextLen   = 1700
)

// Text is the /policy reply for a workspace: the level's meaning, the
// deny list, the test and build commands and the remembered rules with
// their ids.
func Text(workspace string, level instincts.Autonomy, commands []string, rules []store.PolicyRule) string {
	var b strings.Builder
	fmt.Fprintf(&b, "Policy for %s. Autonomy %s\n", workspace, LevelMeaning(level))
	b.WriteString("\nDeny list (denied when autonomous, asked with a warning otherwise, never remembered):\n")
	for _, d := range DenyList {
		fmt.Fprintf(&b, "• %s\n", d.Item)
	}
	if len(commands) > 0 {
		fmt.Fprintf(&b, "\nTest and build commands: %s\n", strings.Join(commands, ", "))
	}
	var mine []store.PolicyRule
	for _, r := range rules {
		if r.Workspace == workspace {
			mine = append(mine, r)
		}
	}
	if len(mine) == 0 {
		b.WriteString("\nNo remembered rules. \"Always allow in this workspace\" on a request adds one.")
		return b.String()
	}
	b.WriteString("\nRemembered rules:\n")
	for i, r := range mine {
		if i == maxTextRules || b.Len() > maxTextLen {
			fmt.Fprintf(&b, "… and %d more\n", len(mine)-i)
			break
		}
		scope := "always"
		if r.TaskID != "" {
			scope = "task " + r.TaskID
		}
		fmt.Fprintf(&b, "#%d %s `%s` (%s, by %s, %s)\n", r.ID, r.Tool, clip(r.Pattern, 60), scope, r.CreatedBy, r.CreatedAt.Format("2006-01-02"))
	}
	b.WriteString("Remove one with /policy remove ID.")
	return b.String()
}
