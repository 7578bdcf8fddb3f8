// Package access keeps who besides the owner may talk to Fetch on a
// channel: the seed ids from the configuration (FETCH_ALLOWED_IDS) and the
// ids the owner added with /allow, persisted in the store (allowed_users).
//
// The set is asked on every incoming message (Allowed), so it lives in
// memory: loaded once by Load, replaced only after a /allow change has
// committed (the after hook of ApplyTx), never read from the database per
// message. Readers take an immutable snapshot through an atomic pointer:
// no lock is held, by anyone, across a call into another package. A change
// made by another process on the same data directory (fetch chat while
// fetch serve runs) is seen by this one at its next start.
//
// access imports store (the table) and instincts (the /allow Response).
// A *List is safe for concurrent use.
package access

import (
	"context"
	"database/sql"
	"fmt"
	"maps"
	"slices"
	"strings"
	"sync/atomic"

	"github.com/fetch-dev/fetch/instincts"
	"github.com/fetch-dev/fetch/internal/store"
)

// SeedSource names where the seed ids come from, for replies.
const SeedSource = "FETCH_ALLOWED_IDS"

// List is the allowed users of one channel.
type List struct {
	db      *store.DB
	channel string
	owner   string
	seed    []string
	// ids are the persisted ids (not the seed): an immutable map,
	// replaced whole.
	ids atomic.Pointer[map[string]bool]
}

// New builds the list of channel's allowed users: owner (never listed),
// the seed ids, and what Load reads. It reads nothing yet.
func New(db *store.DB, channel, owner string, seed []string) *List {
	l := &List{db: db, channel: channel, owner: owner, seed: slices.Clone(seed)}
	l.ids.Store(&map[string]bool{})
	return l
}

// Load reads the persisted ids.
func (l *List) Load(ctx context.Context) error {
	us, err := l.db.AllowedUsers(ctx, l.channel)
	if err != nil {
		return fmt.Errorf("access: load: %w", err)
	}
	ids := make(map[string]bool, len(us))
	for _, u := range us {
		ids[u.UserID] = true
	}
	l.ids.Store(&ids)
	return nil
}

// Allowed tells whether userID may talk to Fetch (the owner is not asked
// about: the caller knows the owner).
func (l *List) Allowed(userID string) bool {
	return userID != "" && (slices.Contains(l.seed, userID) || (*l.ids.Load())[userID])
}

// change replaces the set with one where id is in (or not).
func (l *List) change(id string, in bool) {
	for {
		old := l.ids.Load()
		next := maps.Clone(*old)
		if in {
			next[id] = true
		} else {
			delete(next, id)
		}
		if l.ids.CompareAndSwap(old, &next) {
			return
		}
	}
}

// ApplyTx carries out /allow add|remove|list (instincts.AllowAdd,
// AllowRemove, AllowList) for the owner userID inside tx, the transaction
// that completes the command's message: the reply says what was done or
// why not; after updates the in-memory set once tx committed.
func (l *List) ApplyTx(ctx context.Context, tx *sql.Tx, _ string, userID string, r instincts.Response) (string, func(), error) {
	none := func() {}
	id := r.User
	switch r.Effect {
	case instincts.AllowList:
		return l.list(ctx), none, nil
	case instincts.AllowAdd:
		switch {
		case id == l.owner:
			return "That is the owner, who may always talk to me.", none, nil
		case slices.Contains(l.seed, id):
			return fmt.Sprintf("%s may talk to me already (%s).", id, SeedSource), none, nil
		}
		added, err := l.db.AllowUserTx(ctx, tx, store.AllowedUser{Channel: l.channel, UserID: id, AddedBy: userID})
		if err != nil {
			return "", nil, err
		}
		if !added {
			return fmt.Sprintf("%s may talk to me already.", id), none, nil
		}
		return fmt.Sprintf("%s may now talk to me in direct messages: they get a conversation of their own and may ask for work in the workspaces; /autonomy, /ship, /pr, /allow and /hosts stay yours. /allow remove %s undoes it.", id, id),
			func() { l.change(id, true) }, nil
	case instincts.AllowRemove:
		removed, err := l.db.DisallowUserTx(ctx, tx, l.channel, id)
		if err != nil {
			return "", nil, err
		}
		switch {
		case slices.Contains(l.seed, id):
			// The configuration wins: /allow cannot take back what the
			// operator set.
			reply := fmt.Sprintf("%s is allowed by %s, which /allow cannot change: remove it there and restart Fetch.", id, SeedSource)
			if removed {
				return reply + " (Their /allow entry is removed.)", func() { l.change(id, false) }, nil
			}
			return reply, none, nil
		case !removed:
			return fmt.Sprintf("%s was not allowed; nothing changed.", id), none, nil
		}
		return fmt.Sprintf("%s may no longer talk to me; their messages are ignored from now on.", id), func() { l.change(id, false) }, nil
	}
	return "", nil, fmt.Errorf("access: not an /allow effect: %q", r.Effect)
}

// list is /allow list's reply.
func (l *List) list(ctx context.Context) string {
	var parts []string
	for _, id := range l.seed {
		parts = append(parts, id+" ("+SeedSource+")")
	}
	us, err := l.db.AllowedUsers(ctx, l.channel)
	if err != nil {
		return "I could not read who may talk to me: " + err.Error()
	}
	for _, u := range us {
		if !slices.Contains(l.seed, u.UserID) {
			parts = append(parts, fmt.Sprintf("%s (added %s)", u.UserID, u.AddedAt.UTC().Format("2006-01-02")))
		}
	}
	if len(parts) == 0 {
		return "Only you may talk to me. /allow add USER_ID lets someone else."
	}
	return "Besides you, these may talk to me: " + strings.Join(parts, ", ") + "."
}
