// Package hosts carries out /hosts: the hosts the owner allows a
// workspace's runs to reach through the kennels' way out (the egress
// proxy), besides what their coding CLI needs. They are kept in the store
// (workspace_hosts), the same table fetch workspace hosts changes and the
// task engine reads at the start of each run; a change applies from the
// next run on. An entry is checked by the proxy's own rule
// (egress.CheckHost) before it is stored: a bad one is refused with the
// form it expects, and nothing changes.
//
// hosts imports store (the table), instincts (the /hosts Response) and
// kennel/egress (the rule; the standard library only). A *List keeps no
// state of its own and is safe for concurrent use.
package hosts

import (
	"context"
	"database/sql"
	"fmt"
	"strings"

	"github.com/fetch-dev/fetch/instincts"
	"github.com/fetch-dev/fetch/internal/store"
	"github.com/fetch-dev/fetch/kennel/egress"
)

// Config is what a List needs; Store is required.
type Config struct {
	Store *store.DB
	// On tells that the kennels' way out is on: their only route out is
	// the proxy.
	On bool
	// Switch names the setting that turns the way out off, for replies
	// ("FETCH_EGRESS").
	Switch string
	// Harness is the default coding CLI, and Defaults the hosts it
	// reaches by default (harness.HostsOf), for /hosts's list.
	Harness  string
	Defaults []string
}

// List is the hosts allowed to the workspaces, as /hosts shows and
// changes them.
type List struct{ cfg Config }

// New builds a List. It reads nothing yet.
func New(cfg Config) *List { return &List{cfg: cfg} }

// ApplyTx carries out /hosts, /hosts add HOST and /hosts remove HOST
// (instincts.HostsList, HostsAdd, HostsRemove) on r.Workspace for the
// owner userID inside tx, the transaction that completes the command's
// message. The reply says what was done or why not (a bad host, with the
// form expected); after has nothing to do (the task engine reads the table
// at each run). An error is the store's and rolls tx back.
func (l *List) ApplyTx(ctx context.Context, tx *sql.Tx, _ string, userID string, r instincts.Response) (string, func(), error) {
	none := func() {}
	ws := r.Workspace
	if ws == "" {
		return "", nil, fmt.Errorf("hosts: %s without a workspace", r.Effect)
	}
	switch r.Effect {
	case instincts.HostsList:
		list, err := l.cfg.Store.HostsOfTx(ctx, tx, ws)
		if err != nil {
			return "", nil, err
		}
		return l.list(ws, list), none, nil
	case instincts.HostsAdd:
		host, err := egress.CheckHost(r.Host)
		if err != nil {
			return "Nothing changed: " + err.Error() + ".", none, nil
		}
		added, err := l.cfg.Store.AllowHostTx(ctx, tx, ws, host, userID)
		if err != nil {
			return "", nil, err
		}
		if !added {
			return fmt.Sprintf("%s was allowed to workspace %s already; nothing changed.", host, ws), none, nil
		}
		list, err := l.cfg.Store.HostsOfTx(ctx, tx, ws)
		if err != nil {
			return "", nil, err
		}
		return fmt.Sprintf("Workspace %s's runs may now reach %s, from the next run on (hosts allowed: %s).%s /hosts remove %s undoes it.",
			ws, host, strings.Join(list, ", "), l.off(), host), none, nil
	case instincts.HostsRemove:
		host, checkErr := egress.CheckHost(r.Host)
		if checkErr != nil {
			// An entry stored before the rule refused it can still go.
			host = strings.TrimSpace(r.Host)
		}
		removed, err := l.cfg.Store.DisallowHostTx(ctx, tx, ws, host)
		switch {
		case err != nil:
			return "", nil, err
		case !removed && checkErr != nil:
			return "Nothing changed: " + checkErr.Error() + ".", none, nil
		case !removed:
			return fmt.Sprintf("%s is not among the hosts allowed to workspace %s; nothing changed.", host, ws), none, nil
		}
		list, err := l.cfg.Store.HostsOfTx(ctx, tx, ws)
		if err != nil {
			return "", nil, err
		}
		left := "none"
		if len(list) > 0 {
			left = strings.Join(list, ", ")
		}
		return fmt.Sprintf("Workspace %s's runs may no longer reach %s, from the next run on (hosts allowed: %s).", ws, host, left), none, nil
	}
	return "", nil, fmt.Errorf("hosts: not a /hosts effect: %q", r.Effect)
}

// off is what a change adds while the way out is off.
func (l *List) off() string {
	if l.cfg.On {
		return ""
	}
	return fmt.Sprintf(" The way out is off (%s=off): the kennels reach any host until it is on.", l.cfg.Switch)
}

// list is /hosts's reply: the way out, the workspace's hosts and the
// default coding CLI's.
func (l *List) list(ws string, hosts []string) string {
	var b strings.Builder
	if l.cfg.On {
		b.WriteString("Way out: only through Fetch's proxy; the model APIs' keys stay outside the kennel.\n")
	} else {
		fmt.Fprintf(&b, "Way out: off (%s=off): the kennels reach any host, with the coding CLIs' keys inside them; these hosts count once it is on.\n", l.cfg.Switch)
	}
	if len(hosts) == 0 {
		fmt.Fprintf(&b, "Hosts allowed to workspace %s: none (/hosts add HOST allows one)", ws)
	} else {
		fmt.Fprintf(&b, "Hosts allowed to workspace %s: %s", ws, strings.Join(hosts, ", "))
	}
	if l.cfg.Harness != "" {
		if len(l.cfg.Defaults) == 0 {
			fmt.Fprintf(&b, "\n%s (the default coding CLI) reaches only its model API besides these.", l.cfg.Harness)
		} else {
			fmt.Fprintf(&b, "\n%s (the default coding CLI) also reaches: %s", l.cfg.Harness, strings.Join(l.cfg.Defaults, ", "))
		}
	}
	return b.String()
}

// Describe is /status's line on the way out: that it is off, or the hosts
// allowed to the selected workspace ("" when it is on and no workspace is
// selected).
func (l *List) Describe(ctx context.Context, workspace string) string {
	if !l.cfg.On {
		return fmt.Sprintf("off (%s=off): the kennels reach any host", l.cfg.Switch)
	}
	if workspace == "" {
		return ""
	}
	all, err := l.cfg.Store.WorkspaceHosts(ctx)
	switch {
	case err != nil:
		return "proxy; hosts allowed: unknown (the database did not answer)"
	case len(all[workspace]) == 0:
		return "proxy; hosts allowed: none"
	}
	return "proxy; hosts allowed: " + strings.Join(all[workspace], ", ")
}
