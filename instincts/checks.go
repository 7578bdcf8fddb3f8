package instincts

import (
	"fmt"
	"strings"
)

// Checks: show (Response.ChecksAction empty) or change the checks of
// Response.Workspace (package checks carries it out).
const Checks Effect = "checks"

const checksUsage = "Usage: /checks · /checks set COMMAND · /checks add COMMAND · /checks auto · /checks off · /checks failing draft|hold — the selected workspace's checks, run in its kennel on a task's branch before its pull request opens or merges: your commands (set replaces them, add adds one; one plain command each, sh -c '…' for more), detected from its files (auto), or none (off); and whether a failing check opens the pull request as a draft or opens none."

// checksCommand reads /checks [set|add COMMAND | auto | off | failing
// draft|hold] for the selected workspace.
func checksCommand(args string, st State) Response {
	action, rest, _ := strings.Cut(strings.TrimSpace(args), " ")
	action, rest = strings.ToLower(action), strings.TrimSpace(rest)
	switch {
	case st.Workspace == "":
		return Response{Instinct: "checks", Reply: "No workspace is selected: /use NAME selects one, then /checks shows or changes its checks."}
	case action == "":
		return Response{Instinct: "checks", Effect: Checks, Workspace: st.Workspace}
	case st.Role != "owner":
		return Response{Instinct: "checks", Reply: "Only the owner can change a workspace's checks."}
	}
	switch action {
	case "set", "add", "failing":
		if rest == "" {
			return Response{Instinct: "checks", Reply: fmt.Sprintf("/checks %s needs its argument. %s", action, checksUsage)}
		}
	case "auto", "off":
		if rest != "" {
			return Response{Instinct: "checks", Reply: checksUsage}
		}
	default:
		return Response{Instinct: "checks", Reply: fmt.Sprintf("%q is not something /checks does. %s", action, checksUsage)}
	}
	return Response{Instinct: "checks", Effect: Checks, Workspace: st.Workspace, ChecksAction: action, ChecksArg: rest}
}
