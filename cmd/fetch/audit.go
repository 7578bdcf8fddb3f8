package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"strings"
	"time"

	"github.com/fetch-dev/fetch/internal/store"
)

const auditUsage = `Usage: fetch audit [--since DURATION] [--action ACTION] [--limit N] [--json]

Prints Fetch's audit log, oldest first: what it decided and did, and who
said so (approvals and denials, of merges and pushes too; the policy's
answers to the coding CLIs' requests and yours; autonomy, workspace and
way-out changes; /stop, /clear). Times are in FETCH_TIMEZONE. Secrets are
masked. The log is never pruned.

  --since DURATION  only entries of the last DURATION, e.g. 24h or 7d
  --action ACTION   only entries of that action, e.g. approve or merge
  --limit N         the newest N entries (default 50; 0: all)
  --json            one JSON array of {at, conversation, actor, action, detail}
`

func runAudit(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("fetch audit", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	since := fs.String("since", "", "")
	action := fs.String("action", "", "")
	limit := fs.Int("limit", 50, "")
	asJSON := fs.Bool("json", false, "")
	help := fs.Bool("help", false, "")
	err := fs.Parse(args)
	var q store.AuditQuery
	if err == nil && *since != "" {
		var d time.Duration
		if d, err = parseDays(*since); err == nil && d <= 0 {
			err = fmt.Errorf("--since must be positive, got %q", *since)
		}
		q.Since = time.Now().Add(-d)
	}
	switch {
	case err == nil && fs.NArg() > 0:
		err = fmt.Errorf("unexpected argument %q", fs.Arg(0))
	case err == nil && *limit < 0:
		err = fmt.Errorf("--limit must be 0 or more, got %d", *limit)
	}
	if errors.Is(err, flag.ErrHelp) {
		err, *help = nil, true
	}
	if err != nil {
		return fmt.Errorf("%w: %v", errUsage, err)
	}
	if *help {
		fmt.Fprint(stdout, auditUsage)
		return nil
	}
	q.Action, q.Limit = strings.TrimSpace(*action), *limit
	cfg, err := loadConfig(getenv)
	if err != nil {
		return err
	}
	_, red, db, err := openBase(ctx, cfg, stderr, slog.LevelWarn)
	if err != nil {
		return err
	}
	defer db.Close()
	entries, err := db.AuditEntries(ctx, q)
	if err != nil {
		return err
	}
	// Stored text is masked already; masked again with today's secrets.
	for i := range entries {
		e := &entries[i]
		e.Actor, e.Action, e.Detail = red.String(e.Actor), red.String(e.Action), red.String(e.Detail)
	}
	if *asJSON {
		return writeAuditJSON(stdout, entries, cfg.Location)
	}
	if len(entries) == 0 {
		fmt.Fprintln(stdout, "No audit entries.")
		return nil
	}
	for _, e := range entries {
		detail := strings.Join(strings.Fields(e.Detail), " ")
		fmt.Fprintf(stdout, "%s  %-8s %-16s %s\n", e.At.In(cfg.Location).Format("2006-01-02 15:04:05 MST"), e.Actor, e.Action, detail)
	}
	return nil
}

func writeAuditJSON(w io.Writer, entries []store.AuditEntry, loc *time.Location) error {
	type entry struct {
		At           time.Time `json:"at"`
		Conversation string    `json:"conversation,omitempty"`
		Actor        string    `json:"actor"`
		Action       string    `json:"action"`
		Detail       string    `json:"detail"`
	}
	out := make([]entry, 0, len(entries))
	for _, e := range entries {
		out = append(out, entry{At: e.At.In(loc), Conversation: e.ConversationID, Actor: e.Actor, Action: e.Action, Detail: e.Detail})
	}
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(out)
}
