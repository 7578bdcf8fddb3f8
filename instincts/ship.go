package instincts

import (
	"fmt"
	"regexp"
	"slices"
	"strings"
)

// More effects: shipping.
const (
	// ShipMode: show (Response.ShipMode empty) or set the shipping mode
	// of Response.Workspace.
	ShipMode Effect = "ship_mode"
	// PR: carry out Response.PRAction on task Response.TaskID's pull
	// request (ship, merge, close).
	PR Effect = "pr"
)

// shipModes are the shipping modes /ship accepts.
var shipModes = []string{"pr-required", "autonomous", "local"}

const shipUsage = "Usage: /ship [WORKSPACE] [pr-required|autonomous|local] — how far Fetch takes a workspace's finished work: pr-required (push and open a pull request; the default), autonomous (may also merge it), local (never push)."

func ship(args string, st State) Response {
	words := strings.Fields(args)
	if len(words) > 2 {
		return Response{Instinct: "ship", Reply: shipUsage}
	}
	ws, mode := st.Workspace, ""
	for _, w := range words {
		if l := strings.ToLower(w); slices.Contains(shipModes, l) {
			mode = l
		} else {
			ws = w
		}
	}
	switch {
	case len(words) == 2 && mode == "":
		return Response{Instinct: "ship", Reply: fmt.Sprintf("%q is not a shipping mode. %s", words[1], shipUsage)}
	case ws == "":
		return Response{Instinct: "ship", Reply: "No workspace is selected; name one. " + shipUsage}
	case !validWorkspace(ws):
		return Response{Instinct: "ship", Reply: fmt.Sprintf("%q is not a workspace name (letters, digits, '.', '_' and '-'). %s", ws, shipUsage)}
	case mode != "" && st.Role != "owner":
		return Response{Instinct: "ship", Reply: "Only the owner can change how a workspace ships."}
	}
	return Response{Instinct: "ship", Effect: ShipMode, Workspace: ws, ShipMode: mode}
}

// taskID is a task id as /pr accepts it.
var taskID = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$`)

const prUsage = "Usage: /pr ship ID (push task ID's branch and open its pull request) · /pr merge ID · /pr close ID · /pr resolve ID (rebase a conflicting branch onto the latest base) · /pr review ID (address the pull request's review) · /pr anyway ID (open the pull request a failing check held back)"

func pr(args string, st State) Response {
	words := strings.Fields(args)
	if len(words) != 2 {
		return Response{Instinct: "pr", Reply: prUsage}
	}
	action := strings.ToLower(words[0])
	if !slices.Contains([]string{"ship", "merge", "close", "resolve", "review", "anyway"}, action) {
		return Response{Instinct: "pr", Reply: fmt.Sprintf("%q is not something I do to a pull request. %s", words[0], prUsage)}
	}
	if !taskID.MatchString(words[1]) {
		return Response{Instinct: "pr", Reply: fmt.Sprintf("%q is not a task id. %s", words[1], prUsage)}
	}
	if st.Role != "owner" {
		return Response{Instinct: "pr", Reply: "Only the owner can act on pull requests."}
	}
	return Response{Instinct: "pr", Effect: PR, PRAction: action, TaskID: words[1]}
}
