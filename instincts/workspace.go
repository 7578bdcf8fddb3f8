package instincts

import (
	"fmt"
	"regexp"
	"strings"
)

// More effects: the conversation's workspace and who may talk to Fetch.
const (
	// UseWorkspace: select Response.Workspace as the conversation's
	// workspace when it exists (the same as the agent's workspace_select);
	// with Response.Workspace empty, list the workspaces.
	UseWorkspace Effect = "use_workspace"
	// AllowAdd, AllowRemove: let Response.User talk to Fetch on the
	// channel, or no longer; AllowList: list who may.
	AllowAdd    Effect = "allow_add"
	AllowRemove Effect = "allow_remove"
	AllowList   Effect = "allow_list"
)

const useUsage = "Usage: /use WORKSPACE — work in WORKSPACE from now on (/use alone lists the workspaces)."

func use(args string, st State) Response {
	words := strings.Fields(args)
	switch {
	case len(words) == 0:
		return Response{Instinct: "use", Effect: UseWorkspace}
	case len(words) > 1:
		return Response{Instinct: "use", Reply: useUsage}
	case !validWorkspace(words[0]):
		return Response{Instinct: "use", Reply: fmt.Sprintf("%q is not a workspace name (letters, digits, '.', '_' and '-'). %s", words[0], useUsage)}
	case st.Task != nil && st.Task.Workspace != words[0]:
		// Allowed: the running task keeps its workspace; say so.
		return Response{Instinct: "use", Effect: UseWorkspace, Workspace: words[0],
			Reply: fmt.Sprintf("Task %s keeps running in %s.", st.Task.ID, st.Task.Workspace)}
	}
	return Response{Instinct: "use", Effect: UseWorkspace, Workspace: words[0]}
}

// userID is a Discord user id (a snowflake: digits only).
var userID = regexp.MustCompile(`^[0-9]{1,20}$`)

const allowUsage = "Usage: /allow add USER_ID · /allow remove USER_ID · /allow list — who besides you may talk to me (USER_ID is a Discord user id: digits; Discord shows it under Copy User ID in developer mode)."

// listCommand reads the arguments of a command that lists, adds to and
// removes from a list (/allow, /hosts): nothing or "list", "add X",
// "remove X". ok is false for anything else.
func listCommand(args string) (action, arg string, ok bool) {
	words := strings.Fields(args)
	if len(words) == 0 {
		return "list", "", true
	}
	switch action = strings.ToLower(words[0]); {
	case action == "list" && len(words) == 1:
		return action, "", true
	case (action == "add" || action == "remove") && len(words) == 2:
		return action, words[1], true
	}
	return "", "", false
}

func allow(args string, st State) Response {
	action, arg, ok := listCommand(args)
	switch {
	case !ok:
		return Response{Instinct: "allow", Reply: allowUsage}
	case st.Role != "owner":
		return Response{Instinct: "allow", Reply: "Only the owner can manage who may talk to me."}
	case action == "list":
		return Response{Instinct: "allow", Effect: AllowList}
	}
	// <@123> is how Discord writes a mention.
	id := strings.TrimSuffix(strings.TrimPrefix(strings.TrimPrefix(arg, "<@"), "!"), ">")
	if !userID.MatchString(id) {
		return Response{Instinct: "allow", Reply: fmt.Sprintf("%q is not a Discord user id (digits only). %s", arg, allowUsage)}
	}
	if id == st.UserID {
		return Response{Instinct: "allow", Reply: "That is you: the owner may always talk to me."}
	}
	if action == "add" {
		return Response{Instinct: "allow", Effect: AllowAdd, User: id}
	}
	return Response{Instinct: "allow", Effect: AllowRemove, User: id}
}
