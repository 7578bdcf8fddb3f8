package store

import (
	"bytes"
	"database/sql/driver"
	"encoding/json"
	"unicode/utf8"
)

// Text at rest holds no secret. The caller of Open passes a scrubber
// (WithScrub: in Fetch, the redactor's String) and every text value this
// process writes to the database passes through it, whoever writes it:
// the store's own methods and the packages that write through SQL() or
// Tx (tasks and their events, the agent's history, schedules, discord
// state). This is done where the write lock is taken (writer.go): the
// arguments of every statement that writes are scrubbed before SQLite
// sees them, so a new table or column cannot forget it.
//
// A value that is a JSON object or array (a reply's extra, a task event)
// is scrubbed string by string, keys included, and encoded again, so that
// it stays valid JSON whatever the mask or the secret looks like; other
// text is scrubbed whole. Arguments of statements that only read are not
// touched: a lookup by a value that held a secret does not find the
// stored row, and no key Fetch looks rows up by (ids, channel ids,
// workspace names) holds one.
//
// The scrubber must be deterministic and idempotent; redaction is.

// Option configures Open.
type Option func(*options)

type options struct {
	scrub func(string) string
}

// WithScrub makes every text value written to the database pass through
// scrub first (see scrub.go). scrub must be safe for concurrent use.
func WithScrub(scrub func(string) string) Option {
	return func(o *options) { o.scrub = scrub }
}

// Scrub returns s as the database would store it: scrubbed by the
// function given to Open, unchanged without one. Packages call it for
// text they keep in memory or hand on besides storing it (a task's goal
// before it reaches a CLI), so that what they use is what is stored.
func (db *DB) Scrub(s string) string {
	if db.scrub == nil {
		return s
	}
	return db.scrub(s)
}

// scrubArgs returns args with every text value scrubbed; args itself is
// not changed.
func scrubArgs(scrub func(string) string, args []driver.NamedValue) []driver.NamedValue {
	if scrub == nil || len(args) == 0 {
		return args
	}
	var out []driver.NamedValue
	for i, a := range args {
		v := a.Value
		switch x := a.Value.(type) {
		case string:
			v = scrubText(scrub, x)
		case []byte:
			if utf8.Valid(x) {
				v = []byte(scrubText(scrub, string(x)))
			}
		default:
			continue
		}
		if out == nil {
			out = append([]driver.NamedValue(nil), args...)
		}
		out[i].Value = v
	}
	if out == nil {
		return args
	}
	return out
}

// scrubText scrubs a text value; JSON objects and arrays string by string.
func scrubText(scrub func(string) string, s string) string {
	if inert(s) {
		return s
	}
	if t := bytes.TrimSpace([]byte(s)); len(t) > 0 && (t[0] == '{' || t[0] == '[') && json.Valid(t) {
		if out, ok := scrubJSON(scrub, t); ok {
			return out
		}
	}
	return scrub(s)
}

// inert tells whether s cannot hold a secret, so that the redactor's
// rules need not run on it: every timestamp and number the store writes
// (several per message) is made of digits and a few separators only,
// and no credential is.
func inert(s string) bool {
	if len(s) > 64 {
		return false
	}
	for i := 0; i < len(s); i++ {
		switch c := s[i]; {
		case c >= '0' && c <= '9':
		case c == '-' || c == ':' || c == '.' || c == '+' || c == ' ' || c == 'T' || c == 'Z':
		default:
			return false
		}
	}
	return true
}

// scrubJSON scrubs the strings of a JSON document and encodes it again;
// a document with nothing to scrub is returned as it was.
func scrubJSON(scrub func(string) string, doc []byte) (string, bool) {
	d := json.NewDecoder(bytes.NewReader(doc))
	d.UseNumber()
	var v any
	if err := d.Decode(&v); err != nil {
		return "", false
	}
	changed := false
	v = scrubValue(scrub, v, &changed)
	if !changed {
		return string(doc), true
	}
	var b bytes.Buffer
	e := json.NewEncoder(&b)
	e.SetEscapeHTML(false)
	if err := e.Encode(v); err != nil {
		return "", false
	}
	return string(bytes.TrimRight(b.Bytes(), "\n")), true
}

func scrubValue(scrub func(string) string, v any, changed *bool) any {
	switch x := v.(type) {
	case string:
		s := scrub(x)
		if s != x {
			*changed = true
		}
		return s
	case []any:
		for i := range x {
			x[i] = scrubValue(scrub, x[i], changed)
		}
		return x
	case map[string]any:
		out := make(map[string]any, len(x))
		for k, val := range x {
			sk := scrub(k)
			if sk != k {
				*changed = true
			}
			out[sk] = scrubValue(scrub, val, changed)
		}
		return out
	}
	return v
}
