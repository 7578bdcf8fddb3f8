package redact

import (
	"encoding/base64"
	"sort"
	"strings"
	"unicode/utf8"
)

// A configured secret is found in disguise as well as verbatim: split by
// line breaks (LF or CRLF), by terminal escape sequences or by invisible
// zero-width characters inserted anywhere in it, URL-encoded (percent
// escapes, '+' for a space), or base64-encoded (standard or URL alphabet,
// with or without padding, at any of the three alignments a secret can
// have inside a longer encoded text, such as the Authorization: Basic
// header of user:token).
//
// How. A disguise that inserts or re-spells characters is undone on a
// skeleton of the text: a copy without what the disguise inserts (line
// breaks, escape sequences, zero-width characters), or with percent
// escapes decoded, together with where each of its bytes came from. The
// secrets are sought in the skeleton, spelled the way the skeleton spells
// them, and what matched is masked in the text, from the first byte of
// the match to the last (what was inserted in between goes with it). One
// skeleton per kind of disguise the text holds, and one with all of them
// when it holds several, so that a disguise does not hide a secret behind
// another's boundary (a "%4" before a secret that starts "1…" is not
// decoded away when the secret is only split by a newline).
//
// Base64 cannot be undone in place (where would decoding start?), so the
// secret is encoded instead: at each alignment, the characters of its
// encoding that only its own bytes decide are a needle sought like the
// secret itself (in every skeleton: base64 is often wrapped at 76
// columns). A match is widened to the run of base64 characters around it
// (up to maxWiden on each side) and its padding: the partial characters
// at its ends hold bits of the secret, and the rest of a short run such
// as a Basic credential (base64 of "x-access-token:TOKEN", which Fetch's
// mirror sends to GitHub) goes with it, so that the header reads
// "Authorization: Basic [REDACTED]".
//
// Cost. Every needle of a skeleton is sought in one pass over it, by the
// pair of bytes it starts with (a bitmap of pairs rejects almost every
// position at once); skeletons are made only for the disguises a first
// pass finds in the text. Matching ignores ASCII case, as the verbatim
// search ignores case.

// disguise is a kind of disguise a skeleton undoes; a skeleton undoes a
// set of them (a bitmask).
type disguise uint8

const (
	// lineBreaks: CR and LF inserted.
	lineBreaks disguise = 1 << iota
	// zeroWidth: invisible characters inserted (zeroWidthRune).
	zeroWidth
	// escapes: terminal escape sequences inserted (ansi).
	escapes
	// percent: URL encoding; '+' reads as a space.
	percent

	allDisguises = lineBreaks | zeroWidth | escapes | percent
)

// zeroWidthRune tells an invisible character that a secret may carry
// without a reader (or a copy and paste) noticing: zero-width space,
// non-joiner and joiner, the direction marks, word joiner and the
// invisible operators, the byte order mark, the soft hyphen.
func zeroWidthRune(r rune) bool {
	switch {
	case r >= 0x200b && r <= 0x200f, r >= 0x2060 && r <= 0x2064, r == 0xfeff, r == 0xad:
		return true
	}
	return false
}

// needle is one spelling of a configured secret, as sought in a skeleton.
type needle struct {
	// text is folded (fold) with the skeleton's disguises applied.
	text string
	// base64: the needle is the core of a base64 encoding, which the
	// mask widens (widenBase64).
	base64 bool
}

// needles are a skeleton's needles, indexed by their first two bytes.
type needles struct {
	list []needle
	// pairs is a bitmap of the first two bytes of the needles; list is
	// sorted by them (pairOf).
	pairs [1 << 16 / 64]uint64
	fold  *[256]byte
}

// foldLower maps ASCII upper case to lower; foldPercent also reads '+'
// as a space, as URL form encoding writes one.
var foldLower, foldPercent = func() (l, p [256]byte) {
	for i := range 256 {
		l[i] = byte(i)
		if 'A' <= i && i <= 'Z' {
			l[i] = byte(i) + 'a' - 'A'
		}
	}
	p = l
	p['+'] = ' '
	return l, p
}()

func foldFor(d disguise) *[256]byte {
	if d&percent != 0 {
		return &foldPercent
	}
	return &foldLower
}

// disguised holds the needles of every set of disguises, built by New.
type disguised struct {
	sets [allDisguises + 1]*needles
}

// newDisguised builds the needles of the configured secrets.
func newDisguised(secrets []string) *disguised {
	var spellings []needle
	for _, s := range secrets {
		spellings = append(spellings, needle{text: s})
		spellings = append(spellings, base64Cores(s)...)
	}
	d := &disguised{}
	for set := range d.sets {
		ds := disguise(set)
		ns := &needles{fold: foldFor(ds)}
		seen := map[string]bool{}
		for _, sp := range spellings {
			t := skeletonOf(sp.text, ds).text
			t = foldString(t, ns.fold)
			// Too short a spelling would mask ordinary words; one that
			// the mask holds would be found in the mask again.
			if len(t) < minSecretLen || strings.Contains(strings.ToLower(Mask), t) || seen[t] {
				continue
			}
			seen[t] = true
			sp.text = t
			p := pairOf(t)
			ns.pairs[p>>6] |= 1 << (p & 63)
			ns.list = append(ns.list, sp)
		}
		sort.Slice(ns.list, func(i, j int) bool { return pairOf(ns.list[i].text) < pairOf(ns.list[j].text) })
		d.sets[set] = ns
	}
	return d
}

// base64Cores are the parts of s's base64 encodings that s alone decides,
// at each of the three alignments s can have in an encoded text, in the
// standard and the URL alphabet.
func base64Cores(s string) []needle {
	var out []needle
	for a := range 3 {
		from, to := (8*a+5)/6, 8*(a+len(s))/6
		if to-from < minSecretLen {
			continue
		}
		raw := strings.Repeat("\x00", a) + s
		for _, enc := range []*base64.Encoding{base64.RawStdEncoding, base64.RawURLEncoding} {
			core := enc.EncodeToString([]byte(raw))[from:to]
			out = append(out, needle{text: core, base64: true})
		}
	}
	return out
}

func pairOf(t string) uint16 { return uint16(t[0])<<8 | uint16(t[1]) }

func foldString(s string, fold *[256]byte) string {
	b := []byte(s)
	for i, c := range b {
		b[i] = fold[c]
	}
	return string(b)
}

// spans returns the byte ranges of s holding a configured secret in
// disguise (or verbatim, in any ASCII case).
func (d *disguised) spans(s string) [][2]int {
	present := disguisesIn(s)
	out := d.find(skeleton{text: s}, 0)
	var sets []disguise
	for _, k := range []disguise{lineBreaks, zeroWidth, escapes, percent} {
		if present&k != 0 {
			sets = append(sets, k)
		}
	}
	if len(sets) > 1 {
		sets = append(sets, present)
	}
	for _, set := range sets {
		sk := skeletonOf(s, set)
		if sk.segs == nil && set&percent == 0 {
			// The text itself, sought already.
			continue
		}
		out = append(out, d.find(sk, set)...)
	}
	return out
}

// disguisesIn tells which disguises s may hold, in one pass.
func disguisesIn(s string) disguise {
	var d disguise
	for i := 0; i < len(s); i++ {
		switch c := s[i]; {
		case c == '\n' || c == '\r':
			d |= lineBreaks
		case c == 0x1b:
			d |= escapes
		case c == '%' || c == '+':
			d |= percent
		case c >= utf8.RuneSelf:
			r, n := utf8.DecodeRuneInString(s[i:])
			switch {
			case r == 0x9b:
				d |= escapes
			case zeroWidthRune(r):
				d |= zeroWidth
			}
			i += n - 1
		}
	}
	return d
}

// find seeks the needles of set in the skeleton and returns the matches
// as ranges of the original text.
func (d *disguised) find(sk skeleton, set disguise) [][2]int {
	ns := d.sets[set]
	if len(ns.list) == 0 {
		return nil
	}
	t, fold := sk.text, ns.fold
	var out [][2]int
	for i := 0; i+1 < len(t); i++ {
		p := uint16(fold[t[i]])<<8 | uint16(fold[t[i+1]])
		if ns.pairs[p>>6]&(1<<(p&63)) == 0 {
			continue
		}
		first := sort.Search(len(ns.list), func(k int) bool { return pairOf(ns.list[k].text) >= p })
		for id := first; id < len(ns.list) && pairOf(ns.list[id].text) == p; id++ {
			n := &ns.list[id]
			if !hasFoldedPrefix(t[i:], n.text, fold) {
				continue
			}
			from, to := i, i+len(n.text)
			if n.base64 {
				from, to = widenBase64(t, from, to)
			}
			out = append(out, [2]int{sk.orig(from), sk.origEnd(to - 1)})
		}
	}
	return out
}

func hasFoldedPrefix(s, prefix string, fold *[256]byte) bool {
	if len(s) < len(prefix) {
		return false
	}
	for j := 0; j < len(prefix); j++ {
		if fold[s[j]] != prefix[j] {
			return false
		}
	}
	return true
}

// maxWiden bounds how far a base64 match is widened on each side: far
// enough for a credential's user name, not so far that every match in a
// long encoded blob scans it.
const maxWiden = 128

// widenBase64 takes in the run of base64 characters around a core (its
// partial characters among them) and the padding after it.
func widenBase64(t string, from, to int) (int, int) {
	for k := 0; k < maxWiden && from > 0 && base64Char(t[from-1]); k++ {
		from--
	}
	for k := 0; k < maxWiden && to < len(t) && base64Char(t[to]); k++ {
		to++
	}
	for k := 0; k < 2 && to < len(t) && t[to] == '='; k++ {
		to++
	}
	return from, to
}

func base64Char(c byte) bool {
	return 'A' <= c && c <= 'Z' || 'a' <= c && c <= 'z' || '0' <= c && c <= '9' || c == '+' || c == '/' || c == '-' || c == '_'
}

// skeleton is a text with a set of disguises undone, and where each of
// its bytes came from. segs is nil when it is the text itself.
type skeleton struct {
	text string
	segs []segment
}

// segment is a run of the skeleton's bytes from from in the original: a
// run of bytes as they were (decoded false, one byte each), or one byte
// decoded from the original's [from, to) (a percent escape).
type segment struct {
	at, from, to int
	decoded      bool
}

// orig is where the skeleton's byte i starts in the original.
func (sk skeleton) orig(i int) int {
	if sk.segs == nil {
		return i
	}
	g := sk.seg(i)
	if g.decoded {
		return g.from
	}
	return g.from + i - g.at
}

// origEnd is where the skeleton's byte i ends in the original.
func (sk skeleton) origEnd(i int) int {
	if sk.segs == nil {
		return i + 1
	}
	g := sk.seg(i)
	if g.decoded {
		return g.to
	}
	return g.from + i - g.at + 1
}

func (sk skeleton) seg(i int) segment {
	k := sort.Search(len(sk.segs), func(k int) bool { return sk.segs[k].at > i }) - 1
	return sk.segs[k]
}

// skeletonOf undoes the disguises of set in s. It makes no copy when
// there is nothing to undo. Runs of bytes kept as they are are copied
// whole; only the bytes that may start a disguise (stops) are looked at
// one by one.
func skeletonOf(s string, set disguise) skeleton {
	var esc [][]int
	if set&escapes != 0 && containsEscape(s) {
		esc = ansi.FindAllStringIndex(s, -1)
	}
	stop := &stops[set]
	var b strings.Builder
	var segs []segment
	kept := 0 // s[kept:i] is kept as it is, not yet copied
	keep := func(i int) {
		if kept == i {
			return
		}
		if b.Cap() == 0 {
			b.Grow(len(s))
		}
		if n := len(segs); n > 0 && !segs[n-1].decoded && segs[n-1].to == kept {
			segs[n-1].to = i
		} else {
			segs = append(segs, segment{at: b.Len(), from: kept, to: i})
		}
		b.WriteString(s[kept:i])
	}
	changed := false
	for i := 0; i < len(s); {
		if !stop[s[i]] {
			i++
			continue
		}
		for len(esc) > 0 && esc[0][0] < i {
			esc = esc[1:] // begun inside what was undone already
		}
		skip, decoded := 0, false
		var v byte
		switch c := s[i]; {
		case len(esc) > 0 && esc[0][0] == i:
			skip = esc[0][1] - i
			esc = esc[1:]
		case c == '\n' || c == '\r':
			if set&lineBreaks != 0 {
				skip = 1
			}
		case c == '%':
			if w, ok := unhex(s, i); ok && set&percent != 0 {
				if skip = decodedInserted(s, i, w, set); skip == 0 {
					v, decoded = w, true
				}
			}
		case c >= utf8.RuneSelf:
			if r, n := utf8.DecodeRuneInString(s[i:]); set&zeroWidth != 0 && zeroWidthRune(r) {
				skip = n
			}
		}
		switch {
		case skip > 0:
			keep(i)
			i += skip
			kept = i
			changed = true
		case decoded:
			keep(i)
			if b.Cap() == 0 {
				b.Grow(len(s))
			}
			segs = append(segs, segment{at: b.Len(), from: i, to: i + 3, decoded: true})
			b.WriteByte(v)
			i += 3
			kept = i
			changed = true
		default:
			i++
		}
	}
	if !changed {
		return skeleton{text: s}
	}
	keep(len(s))
	if segs == nil {
		return skeleton{text: "", segs: []segment{}}
	}
	return skeleton{text: b.String(), segs: segs}
}

// stops are, for each set of disguises, the bytes that may start one.
var stops = func() (t [allDisguises + 1][256]bool) {
	for set := range t {
		d := disguise(set)
		if d&lineBreaks != 0 {
			t[set]['\n'], t[set]['\r'] = true, true
		}
		if d&percent != 0 {
			t[set]['%'] = true
		}
		if d&escapes != 0 {
			t[set][0x1b], t[set][0xc2] = true, true // ESC, and the lead byte of U+009B
		}
		if d&zeroWidth != 0 {
			t[set][0xc2], t[set][0xe2], t[set][0xef] = true, true, true // U+00AD; U+200B…U+2064; U+FEFF
		}
	}
	return t
}()

// decodedInserted is the length of the percent escapes at s[i:] that
// decode (v first) to what the set removes: a line break, or the UTF-8 of
// a zero-width character. 0 when they do not.
func decodedInserted(s string, i int, v byte, set disguise) int {
	if v == '\n' || v == '\r' {
		if set&lineBreaks != 0 {
			return 3
		}
		return 0
	}
	if set&zeroWidth == 0 || v < 0xc0 {
		return 0
	}
	var buf [utf8.UTFMax]byte
	n := 0
	for j := i; n < len(buf) && j+2 < len(s) && s[j] == '%'; j += 3 {
		w, ok := unhex(s, j)
		if !ok {
			break
		}
		buf[n] = w
		n++
		if r, size := utf8.DecodeRune(buf[:n]); r != utf8.RuneError && size == n {
			if zeroWidthRune(r) {
				return 3 * n
			}
			return 0
		}
	}
	return 0
}

// unhex decodes the percent escape at s[i] ('%' and two hex digits).
func unhex(s string, i int) (byte, bool) {
	if i+2 >= len(s) {
		return 0, false
	}
	h, ok1 := hexVal(s[i+1])
	l, ok2 := hexVal(s[i+2])
	return h<<4 | l, ok1 && ok2
}

func hexVal(c byte) (byte, bool) {
	switch {
	case '0' <= c && c <= '9':
		return c - '0', true
	case 'a' <= c && c <= 'f':
		return c - 'a' + 10, true
	case 'A' <= c && c <= 'F':
		return c - 'A' + 10, true
	}
	return 0, false
}
