package intent

import "strings"

// ruleSpec is one row of the rule table before compilation.
type ruleSpec struct {
	name    string
	kind    Kind
	when    condition
	on      subject
	pattern string
}

// ruleSpecs is the ordered rule table; the first match wins. Patterns are
// written with a space for "one or more spaces", an apostrophe for both '
// and ’, and {name} for the fragments in expander. See doc.go for why the
// order is what it is.
func ruleSpecs() []ruleSpec {
	return []ruleSpec{
		// Whole message, in context: an answer to Fetch's proposal.
		{"empty", Clarify, always, whole, `^$`},
		{"decline", Conversation, awaiting, short,
			`^{sep}*(?:(?:{fillers}|{agree}){e})*{decline}{e}(?:(?:{decline}|{fillers}|{agree}){e})*$`},
		{"confirm", Action, awaiting, short,
			`^{sep}*(?:(?:(?:{agree}|{fillers}){e})*(?:{affirm}|{pronounact}){e}(?:(?:{affirm}|{pronounact}|{agree}|{fillers}){e})*` +
				`|(?:{agree}{e})+)$`},

		// Whole message: nothing but chat.
		{"social", Conversation, always, short, `^{sep}*(?:(?:{social}|\p{So}){e})+$`},

		// Body: the message after its greetings and discourse markers.
		// A reminder or a schedule in plain words ("remind me tomorrow at 9
		// to …", "every monday at 9 summarize open PRs") asks Fetch to do
		// something later, before any question rule reads its words.
		{"reminder", Action, always, body,
			`^(?:remind me (?:to|that|about|of|in|at|on|tomorrow|today|tonight|every|each|next){b}` +
				`|(?:set|create|add|make|schedule) (?:me )?(?:a |an )?(?:reminder|recurring (?:job|reminder|task)){b}` +
				`|(?:every|each) (?:day|weekday|morning|evening|hour|week|month|(?:mon|tues|wednes|thurs|fri|satur|sun)day)s?{b})`},
		{"hypothetical", Inquiry, always, body,
			`^what (?:(?:if|happens if|would happen if){b}.*[\s,](?:would|will|could|does|do|did|is) (?:that|it|this|things|we){b}` +
				`|(?:happens|would happen) if{b})`},
		{"suggestion", Action, always, body,
			`^(?:what if (?:you|u|we)|how about|what about (?:\pL+ing|you|we|u)|why (?:don't|dont|not|do not) (?:you|u|we)|why not \pL` +
				`|(?:maybe|perhaps) (?:you|we|u) (?:could|should|can)|(?:you|u) (?:could|should|can|might) (?:also |maybe |just |probably )?\pL)`},
		{"await-question", Inquiry, awaiting, body, `^(?:{whs}|{auxes}){b}`},
		{"state-question", Inquiry, always, body,
			`^what(?:(?:'s| is| are)? (?:you|u|fetch) (?:doing|working on|up to|busy with)` +
				`|(?:'s| is| are) (?:running|going on|happening|in progress|queued|pending|left){b}` +
				`|(?:'s| is| was)? (?:happened|happening|going on|wrong|the (?:problem|issue|error))(?: now| again| here| there)?{sep}*$)`},
		{"vague", Clarify, always, shortBody,
			`^{sep}*(?:` +
				`{vague}{e}(?:(?:{vague}|{vagueq}){e})*` + // a statement of generic words
				`|(?:{vagueq}{e})*` + // bare question words, or nothing but punctuation
				`|{vagueq}{e}(?:(?:{vague}|{vagueq}){e})*{referents}{e}(?:(?:{vague}|{vagueq}){e})*` + // a question about "it"
				`|(?:{vague}{e})*{acts}{e}(?:{vague}{e})*{referents}{e}(?:{vague}{e})*` + // a verb applied to "it"
				`)$`},
		{"choice", Action, awaiting, shortBody,
			`^(?:(?:the|option|number|choice|approach|#) ?)?(?:first|second|third|fourth|last|other|latter|former|1st|2nd|3rd|4th|[1-9]|[a-d]|one|two|three|both)` +
				`(?: (?:one|option|choice|approach|way|please|pls|then))*{sep}*$`},
		{"compound", Action, always, body,
			`^(?:{polite}(?: {adverbs})* )?{reads}{b}.*?(?:[\s,;&](?:and|then|&)|[,;]) (?:(?:then|also|maybe|please|pls|just|if (?:needed|necessary|so),?) )*{acts}{b}` +
				`|[.!?;:。！？] (?:{lead}{lsep}+)*(?:{polite}(?: {adverbs})* )?{coreacts}{b}` +
				`|[,;—–] (?:{lead}{lsep}+)*{coreacts}(?: (?:it|that|this|them|those|pls|please|plz|asap|now))*{sep}*$`},
		{"polite-read", Inquiry, always, body, `^{polite}(?: {adverbs})* {reads}{b}`},
		{"polite-request", Action, always, body, `^{polite}{b}`},
		{"want-to-know", Inquiry, always, body,
			`^(?:(?:i|we)(?:'d| would| really| just| also)* (?:need|want|like|love|wanna)(?: to)? (?:know|understand|see|learn|ask|check|find out|hear|figure out|review|look at|read)` +
				`|(?:i'm|im|i am) (?:curious|wondering)|curious|i wonder|i was wondering (?:why|what|how|if|whether|when|where|which)){b}`},
		{"desire", Action, always, body,
			`^(?:(?:i|we)(?:'d| would| really| also| just| still| do|'ll)* (?:need|want|wanna|like|love|prefer|require|expect)` +
				`|let's|lets|let us|(?:i think |i guess |maybe |perhaps )?we (?:should|must|need to|have to|gotta|ought to|could)` +
				`|it(?:'d| would) be (?:nice|great|good|cool|better|awesome|helpful|ideal|useful)|make sure){b}`},
		{"wh-question", Inquiry, always, body, `^{whs}{b}`},
		{"aux-question", Inquiry, always, body, `^{auxes}{b}`},
		{"workspace-command", Action, always, body,
			`^(?:workspace|ws|project)s? (?:create|new|add|delete|remove|rm|del|switch|use|select|rename|clone|init){b}`},
		{"workspace-select", Action, always, shortBody,
			`^(?:(?:select|pick|choose|switch to|change to|move to|go to|jump to|work in|work on|use|open) (?:the |my |our )?(?:(?:workspace|ws|project|repo) [\pL\pN_][\pL\pN._-]*|[\pL\pN_][\pL\pN._-]* (?:workspace|ws|project|repo))` +
				`|(?:select|pick|choose) [\pL\pN_][\pL\pN._-]*{sep}*$)`},
		{"workspace-read", Inquiry, always, shortBody, `^(?:workspace|ws)s?(?: (?:list|ls|status|info|show))?{sep}*$`},
		{"vcs-read", Inquiry, always, body, `^git (?:status|log|diff|show|blame|branch(?:es)?|remote|shortlog|reflog){b}`},
		{"command-line", Action, always, body,
			`^(?:git|go|npm|npx|yarn|pnpm|bun|cargo|docker|kubectl|pip|pip3|poetry|uv|bundle|mvn|gradle|python|python3|node) \S`},
		{"read-command", Inquiry, always, body,
			`^(?:{reads}{b}|(?:(?:current|task|tasks|workspace|project|build|ci|test|git) )?(?:status|state|logs?|diff|history|progress|costs?|usage|tasks|workspaces|branches|summary|info)(?:{sep}|$))`},
		{"imperative", Action, always, body, `^{acts}{b}`},
		{"ja-request", Action, always, tail, `(?:して|てください|て下さい|してくれ|お願いします|お願い)[\s。！!]*$`},
		{"desired-state", Action, always, body,
			`(?:^|[\s,])(?:(?:should|must|needs? to|has to|have to|ought to) (?:(?:always|never|only|also|just|not) )?` +
				`(?:be|use|have|return|show|support|handle|accept|work|run|look|stay|include|retry|log|display|print|fail|pass|respond|reply|send|ignore|skip|wait|live|go|point|default|read|write|call|throw|raise|exit|stop|start|validate|check|render|open|close)` +
				`|needs? (?:a|an|some|more|tests?|docs?|better|proper|to be)){b}`},
		{"question-mark", Inquiry, always, tail, `[?？][\s\p{So}\p{Sk}\x{FE0F}]*$`},
		{"problem-report", Inquiry, always, body,
			`(?:^|[^\pL])(?:broken|breaks|crash(?:es|ed|ing)?|panic(?:s|ked|king)?|fail(?:s|ed|ing|ure)?|errors?|exceptions?|500|timeouts?|times out|timing out` +
				`|slow|flaky|hangs?|hanging|stuck|regress(?:ed|ion)?|doesn't work|not working|isn't working|won't|can't|cannot|wrong|bug(?:gy)?)(?:[^\pL]|$)`},
		{"answer", Action, awaiting, shortBody, `^[^\s?？]+(?:\s+[^\s?？]+){0,5}$`},
		{"fragment", Clarify, always, shortBody, `^\S+(?:\s+\S+)?$`},
	}
}

// leadPattern matches the opening greetings, acknowledgements and discourse
// markers that Classifier.body strips.
const leadPattern = `^[\s¿¡\p{So}]*(?:{lead}(?:{lsep}+|$))*`

// coreacts are the imperative verbs that start a new sentence of a request
// ("why does it fail? fix it"). It leaves out the verbs that are also
// common nouns at the start of a sentence ("Test output below.").
const coreacts = `
add|fix|change|update|remove|delete|rename|refactor|implement|write|rewrite|create|make|run|rerun|retry|revert|undo|merge|push|commit|deploy
install|upgrade|bump|replace|move|use|switch|clean up|open a pr|open a pull request|try|debug|patch|convert|migrate|split|extract|drop|add
`

// expander returns a function that prepares a rule pattern for compilation:
// spaces become \s+, apostrophes match ' and ’, and {name} fragments are
// substituted. Patterns are matched against lower-cased text, so they must
// not contain upper-case letters (TestPatternsLowerCase).
func expander() func(string) string {
	r := strings.NewReplacer(
		"{b}", `(?:[^\pL\pN_]|$)`,
		"{pronounact}", alt(acts)+`\s+(?:it|that|this|them|those|both|all|all\s+of\s+(?:it|them)|the\s+(?:first|second|third|last|other)\s+one)`,
		"{e}", `(?:{sepc}+|$)`,
		"{sep}", `{sepc}`,
		"{lsep}", `[\s,.!;:…~\-–—]`,
		"{social}", alt(social),
		"{lead}", alt(lead),
		"{vague}", alt(vague),
		"{affirm}", alt(affirm),
		"{agree}", alt(agree),
		"{decline}", alt(decline),
		"{fillers}", alt(fillers),
		"{polite}", alt(polite),
		"{adverbs}", alt(adverbs),
		"{reads}", alt(reads),
		"{acts}", alt(acts),
		"{coreacts}", alt(coreacts),
		"{vagueq}", alt(vagueQuestions),
		"{referents}", alt(referents),
		"{whs}", alt(whs),
		"{auxes}", alt(auxes),
	)
	// Separators between chat tokens: spaces, punctuation and emoji.
	sepc := strings.NewReplacer("{sepc}", `[\s,.!?;:¿¡…~*"()\[\]\-–—、。！？，\p{So}\p{Sk}\x{FE0F}\x{200D}\x{20E3}]`)
	return func(pattern string) string {
		p := strings.ReplaceAll(pattern, " ", `\s+`)
		p = strings.ReplaceAll(p, "'", `['’]`)
		return sepc.Replace(r.Replace(p))
	}
}
