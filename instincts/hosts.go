package instincts

// More effects: the hosts a workspace's runs may reach through the
// kennel's way out.
const (
	// HostsList: list the hosts allowed to Response.Workspace (with the
	// default harness's own and whether the way out is on).
	HostsList Effect = "hosts_list"
	// HostsAdd, HostsRemove: allow Response.Host to Response.Workspace's
	// runs, or no longer. Host is as the owner typed it: the runtime
	// checks it (egress.CheckHost), which instincts cannot import.
	HostsAdd    Effect = "hosts_add"
	HostsRemove Effect = "hosts_remove"
)

const hostsUsage = "Usage: /hosts · /hosts add HOST · /hosts remove HOST — the hosts the selected workspace's runs may reach through the kennel's way out, besides their coding CLI's own (HOST: a name such as registry.npmjs.org, *.example.com for its subdomains, or a public IP address)."

// hosts reads /hosts [list | add HOST | remove HOST], for the selected
// workspace.
func hosts(args string, st State) Response {
	action, host, ok := listCommand(args)
	switch {
	case !ok:
		return Response{Instinct: "hosts", Reply: hostsUsage}
	case st.Role != "owner":
		return Response{Instinct: "hosts", Reply: "Only the owner can see or change the hosts a workspace's runs may reach."}
	case st.Workspace == "":
		return Response{Instinct: "hosts", Reply: "No workspace is selected: /use NAME selects one, then /hosts shows or changes the hosts its runs may reach."}
	}
	switch action {
	case "add":
		return Response{Instinct: "hosts", Effect: HostsAdd, Workspace: st.Workspace, Host: host}
	case "remove":
		return Response{Instinct: "hosts", Effect: HostsRemove, Workspace: st.Workspace, Host: host}
	}
	return Response{Instinct: "hosts", Effect: HostsList, Workspace: st.Workspace}
}
