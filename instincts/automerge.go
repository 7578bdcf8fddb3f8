package instincts

import (
	"slices"
	"strings"
)

// More effects: when Fetch may merge a workspace's pull request on its
// own.
const (
	// AutoMergeShow: show Response.Workspace's limits for merging on its
	// own.
	AutoMergeShow Effect = "automerge_show"
	// AutoMergeSet: change one of them: Response.Setting (files, lines,
	// add, remove) to Response.Value, as typed (the runtime checks it).
	AutoMergeSet Effect = "automerge_set"
)

const autoMergeUsage = "Usage: /automerge · /automerge files N · /automerge lines N (N or default) · /automerge add PATH · /automerge remove PATH — when Fetch may merge the selected workspace's pull requests on its own: within N files and N lines changed, touching none of the paths listed (PATH: a directory ending in /, a file name such as *.sql, or a path from the root)."

// automerge reads /automerge [files N | lines N | add PATH | remove PATH]
// for the selected workspace.
func automerge(args string, st State) Response {
	words := strings.Fields(args)
	switch {
	case len(words) == 1 || len(words) > 2:
		return Response{Instinct: "automerge", Reply: autoMergeUsage}
	case len(words) == 2 && !slices.Contains([]string{"files", "lines", "add", "remove"}, strings.ToLower(words[0])):
		return Response{Instinct: "automerge", Reply: autoMergeUsage}
	case st.Workspace == "":
		return Response{Instinct: "automerge", Reply: "No workspace is selected: /use NAME selects one, then /automerge shows or changes when its pull requests merge on their own."}
	case len(words) == 2 && st.Role != "owner":
		return Response{Instinct: "automerge", Reply: "Only the owner can change when a workspace's pull requests merge on their own."}
	case len(words) == 0:
		return Response{Instinct: "automerge", Effect: AutoMergeShow, Workspace: st.Workspace}
	}
	return Response{Instinct: "automerge", Effect: AutoMergeSet, Workspace: st.Workspace, Setting: strings.ToLower(words[0]), Value: words[1]}
}
