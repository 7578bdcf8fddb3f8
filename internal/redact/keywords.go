package redact

import "strings"

// keywordIndex finds, in one pass over a lower-cased text, which of the
// rules' keywords it holds, instead of one search per keyword per rule
// (some 200 rules: most of the redactor's time on a short text that
// holds no secret). Keywords are indexed by their first two bytes;
// shorter ones are searched for directly.
type keywordIndex struct {
	words  []string
	byPair map[uint16][]int
	short  []int // words of one byte
}

// add returns the id of word, adding it once.
func (x *keywordIndex) add(word string, ids map[string]int) int {
	if id, ok := ids[word]; ok {
		return id
	}
	id := len(x.words)
	x.words = append(x.words, word)
	ids[word] = id
	if len(word) < 2 {
		x.short = append(x.short, id)
		return id
	}
	if x.byPair == nil {
		x.byPair = map[uint16][]int{}
	}
	p := pair(word, 0)
	x.byPair[p] = append(x.byPair[p], id)
	return id
}

func pair(s string, i int) uint16 { return uint16(s[i])<<8 | uint16(s[i+1]) }

// find reports, per keyword id, whether lower holds it.
func (x *keywordIndex) find(lower string) []bool {
	found := make([]bool, len(x.words))
	for _, id := range x.short {
		found[id] = strings.Contains(lower, x.words[id])
	}
	for i := 0; i+1 < len(lower); i++ {
		for _, id := range x.byPair[pair(lower, i)] {
			if !found[id] && strings.HasPrefix(lower[i:], x.words[id]) {
				found[id] = true
			}
		}
	}
	return found
}
