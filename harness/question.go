package harness

import (
	"strings"
	"unicode"
)

// detectQuestion returns the question in an agent's final message, or "".
//
// Most CLIs have no structured way to ask the user anything in headless
// mode, so the question is inferred from the final text:
//   - a line starting with QuestionMarker (the prompt asks for one) wins:
//     the text after the marker is the question;
//   - otherwise, when one of the last two sentences of the last paragraph
//     ends with '?', that paragraph is the question. Two sentences, because
//     agents often follow a question with a request such as "Please tell me
//     which behaviour you want."
//
// Code is ignored: fenced blocks and `inline code` may contain '?' without
// asking anything. A closing offer ("Anything else?") counts as a question;
// that costs one extra turn in the chat, never a wrong action.
func detectQuestion(final string) string {
	final = strings.TrimSpace(final)
	if final == "" {
		return ""
	}
	lines := strings.Split(final, "\n")
	for i := len(lines) - 1; i >= 0; i-- {
		l := strings.TrimLeft(strings.TrimSpace(lines[i]), "*_>#- ")
		if rest, ok := cutPrefixFold(l, QuestionMarker); ok {
			if q := strings.TrimSpace(strings.TrimLeft(rest, "*_ ")); q != "" {
				return q
			}
		}
	}
	para := lastParagraph(withoutCode(final))
	if para == "" {
		return ""
	}
	sentences := splitSentences(para)
	for i := len(sentences) - 1; i >= 0 && i >= len(sentences)-2; i-- {
		if strings.HasSuffix(strings.TrimRight(sentences[i], `"')]»”’*_ `), "?") {
			return lastParagraph(final)
		}
	}
	return ""
}

func cutPrefixFold(s, prefix string) (string, bool) {
	if len(s) >= len(prefix) && strings.EqualFold(s[:len(prefix)], prefix) {
		return s[len(prefix):], true
	}
	return "", false
}

// withoutCode blanks fenced code blocks and inline code spans, keeping line
// structure so paragraphs stay where they were.
func withoutCode(s string) string {
	var b strings.Builder
	fenced := false
	for i, line := range strings.Split(s, "\n") {
		if i > 0 {
			b.WriteByte('\n')
		}
		if strings.HasPrefix(strings.TrimSpace(line), "```") {
			fenced = !fenced
			continue
		}
		if fenced {
			continue
		}
		inCode := false
		for _, r := range line {
			switch {
			case r == '`':
				inCode = !inCode
				b.WriteString("code")
			case !inCode:
				b.WriteRune(r)
			}
		}
	}
	return b.String()
}

// lastParagraph returns the last run of non-blank lines, trimmed.
func lastParagraph(s string) string {
	lines := strings.Split(strings.TrimSpace(s), "\n")
	start := len(lines) - 1
	for start > 0 && strings.TrimSpace(lines[start-1]) != "" {
		start--
	}
	return strings.TrimSpace(strings.Join(lines[start:], "\n"))
}

// splitSentences splits at '.', '!' or '?' (and any closing quotes or
// brackets after them) followed by white space or the end.
func splitSentences(s string) []string {
	var out []string
	rs := []rune(s)
	start := 0
	for i := 0; i < len(rs); i++ {
		if rs[i] != '.' && rs[i] != '!' && rs[i] != '?' {
			continue
		}
		j := i + 1
		for j < len(rs) && strings.ContainsRune(`"')]»”’*_`, rs[j]) {
			j++
		}
		if j == len(rs) || unicode.IsSpace(rs[j]) {
			if sent := strings.TrimSpace(string(rs[start:j])); sent != "" {
				out = append(out, sent)
			}
			start = j
			i = j - 1
		}
	}
	if rest := strings.TrimSpace(string(rs[start:])); rest != "" {
		out = append(out, rest)
	}
	return out
}
