package intent

import "strings"

// The vocabulary the rules are built from. Each list holds one regular
// expression alternative per line; alt turns a list into a group, with a
// space meaning "one or more spaces" and an apostrophe matching both ' and ’.
// Text is lower-cased before matching, so the lists are lower case.
//
// Go's \b only knows ASCII word characters, so patterns end words with {b}
// (a non-letter or the end) instead, which also works after "ñ" or "é".

// social are whole-message chat tokens: greetings, thanks, farewells,
// acknowledgements, laughter, compliments and small talk, in several
// languages. A message made only of these is Conversation.
const social = `
hi+|hii+|hey+|heya|hiya|hello+|helo|howdy|yo+|greetings|ping
good (morning|afternoon|evening|night|day|nite)|g'?morning|g'?night|g'?nite|morning|evening|night|nite|nighty night|gm|gn
sup|wass?up|wh?at's up|whats up|what up|what's good
how (are|r) (you|u|ya|things)( doing| going)?( today| tonight)?
how('s| is) (it|everything|life) going|how('s| is) life|how are things|how have you been|how do you do
how('s| was| is) (your|ur) (day|weekend|morning|evening|night|week)( going)?
hbu|wbu|and you|you\?
are (you|u) (there|alive|awake|online|up|ok|okay|around|a bot|real|an ai|human)|(you|u) there|still (there|alive|awake|up|around)|anyone (there|home)
who are (you|u)|what are (you|u)|what's your name|whats your name|what can (you|u) do|what do (you|u) do|can (you|u) hear me
thanks?|thx|thnx|thanx|tks|ty|tyvm|tysm|thank (you|u|ya)|thankyou|cheers|much appreciated|appreciate (it|that|you|this)|really appreciate it|many thanks
(thanks|thank (you|u)|thx|ty|cheers)( so much| very much| a lot| a ton| again)? for [^.!?,;]+
(thanks|thank (you|u)|thx|ty) again
ok|okay|okey|okie|k|kk|alright|allright|all right|aight|cool|nice|neat|great|awesome|perfect|amazing|excellent|brilliant|sweet|fantastic|wonderful|lovely|good|very good|all good|fine|sure
got it|gotcha|noted|understood|makes sense|fair enough|sounds good|sounds great|sgtm|i see|ah+|oh+|oh ok|right|word|wow|whoa|omg|yay|woo+|nice one|good one|well done
(great|nice|good|awesome|amazing) (job|work|stuff|bot)|good bot
you('re| are) (the best|awesome|great|amazing|a star|a legend|a lifesaver|brilliant|so helpful|very helpful|helpful)|you rock|love (it|this|you)|i love (this|it|you)( bot)?
(this|that)( is|'s)( so| really| pretty| super| very)? (cool|awesome|great|amazing|neat|nice|sick|impressive|helpful|fun|funny|hilarious)|impressive
that's (all|it)( for (today|now|tonight))?|sorry( for| about) [^.!?,;]+
that was (quick|fast|easy|nice|great)
lol|lmao|rofl|ha(ha)+|he(he)+|hah|heh|xd|:-?\)|:-?d|:-?p|<3|\^\^
no worries|no problem|np|never ?mind|nvm|nevermind|forget it|sorry|my bad|oops|whoops|wrong (chat|window|person|channel)
bye+|bye bye|goodbye|good bye|cya|see (you|ya|u)( later| tomorrow| soon| around)?|later|laters|ttyl
talk (to you )?(later|tomorrow|soon)|talk to you|have a (good|nice|great) (day|night|weekend|evening|one)|take care|gotta go|g2g|brb|back
(i'm|im|i am) (back|here|off|out|heading out|done for (today|the day)|going to (bed|sleep)|tired|bored|exhausted)|heading out|signing off|long day
happy (friday|monday|weekend|holidays|new year|birthday)|merry christmas
let me (think|check|see|look|get back to you)( about it| first)?|hmm+ let me (think|see)
fetch|buddy|bro|dude|man|mate|friend|pal|amigo|amiga|there|everyone|all|y'all|guys|folks|team|so much|very much|a lot|a ton|really|sir|boss|as always
hola|buen(os|as) (días|dias|tardes|noches)|buenas|qué tal|que tal|cómo estás|como estas|cómo va|hasta (luego|mañana|pronto)|adiós|adios|chao|gracias|muchas gracias|mil gracias|de nada
bonjour|bonsoir|salut|coucou|bonne (nuit|journée|journee|soirée|soiree)|ça va|ca va|comment ça va|comment ca va|au revoir|à (plus|demain|bientôt|bientot)|merci( beaucoup| bien)?
hallo|servus|moin|guten (morgen|tag|abend)|gute nacht|tschüss|tschüs|tschau|bis (später|morgen|bald)|wie geht('s| es)( dir| ihnen)?|danke( schön| sehr)?|vielen dank
olá|ola|oi|bom dia|boa (tarde|noite)|tudo (bem|bom)|como vai|tchau|até (logo|mais|amanhã)|obrigad[oa]|valeu
ciao|buongiorno|buonasera|buonanotte|salve|grazie( mille)?
hoi|hej|goedemorgen|dank (je|u)( wel)?|bedankt|tack|kiitos|cześć|dzięki|dziękuję|ahoj|díky
こんにちは|こんばんは|おはよう(ございます)?|おやすみ(なさい)?|よろしく(お願いします)?|ありがとう(ございます)?|どうも|さようなら|またね|お疲れ様(です)?
你好|您好|早上好|早安|晚上好|晚安|谢谢(你)?|多谢|再见|안녕(하세요)?|감사합니다|고마워(요)?|잘\s*자
привет|здравствуйте|доброе утро|добрый (день|вечер)|спокойной ночи|спасибо|пока
merhaba|selam|teşekkürler|sağol|namaste|नमस्ते|धन्यवाद|مرحبا|شكرا|shalom|שלום|xin chào|cảm ơn|สวัสดี|ขอบคุณ|terima kasih|halo|selamat pagi|arigato|gracie
`

// lead are tokens that may open any message without changing what it asks:
// greetings, thanks, acknowledgements, discourse markers and politeness.
// "fetch" counts only as a vocative ("fetch," or "hey fetch"): "fetch the
// latest changes" is a command.
const lead = `
hi+|hey+|hello+|heya|hiya|yo|howdy|greetings|good (morning|afternoon|evening|day)|morning|gm
hola|bonjour|salut|hallo|ciao|olá|ola|oi|buenos días|buenos dias|buenas|bom dia|guten (morgen|tag|abend)|moin|servus|coucou
(hey|hi|hello|yo|ok|okay|thanks|morning) (fetch|buddy|bro|dude|man|mate|there|team)
fetch[,:!]|@fetch|<@!?\d+>
thanks|thank (you|u)|thx|ty|tysm|cheers|merci|gracias|danke|obrigad[oa]|grazie
(thanks|thank (you|u)|thx|ty|cheers)( so much| a lot)? for [^.!?,;\n]*[.!,;]
ok|okay|k|kk|alright|cool|great|perfect|nice|awesome|got it|gotcha|sounds good|understood|noted|good|sure|yes+|yeah|yep|yup|ya
no[,.!]|nope|nah
but|so|also|and|then|now|btw|oh|ah|hmm+|um+|uh+|well|anyway|anyways|actually|ps|p\.s\.|ok so
wait[,.!:]|hold on[,.!:]|next[,:]|plus[,:]
one more thing|another thing|one last thing|last thing|real quick
(great|nice|good|awesome|amazing) (job|work|stuff|one|catch)|well done|that was (quick|fast|easy)|that works|looks good|lgtm|love it
(quick|random|small|silly|dumb|another|one|a) question[:,]?|question:
please|pls|plz|kindly|just|por favor|bitte|s'il (te|vous) pla[iî]t|stp|svp
`

// vague are the words of a message that names nothing specific: pronouns,
// generic verbs, complaints and fillers. A statement made only of these
// ("fix it", "it doesn't work", "help") is Clarify. A question made only of
// these is Clarify when it has a dangling referent ("why is it broken?");
// without one it asks about Fetch's state ("is anything running?").
const vague = `
it|its|it's|it'll|that|that's|this|these|those|thing|things|stuff|something|something's|everything|anything|whatever
the|a|an|some|same|usual|before|earlier|last|time|again|still|anymore|now|just|really|so|too|very|totally|completely|all|one|more
keep|keeps|kept|fix|fixed|fixing|do|does|doing|did|don't|doesn't|didn't|isn't|aren't|won't|can't|cannot|wasn't|not|no|nothing
make|makes|making|get|gets|got|go|goes|going|ahead|yes|yeah|yep|yup|y
help|helps|helping|need|needs|want|me|my|i|i'm|im|am|us|we|you|u|your|yours|please|pls|plz|asap
work|works|working|worked|run|runs|running|broken|broke|breaks|break|breaking|wrong|right|better|worse|faster|slower|prettier|nicer|cleaner|pretty
improve|change|update|clean|up|redo|ship|merge|push|deploy|try|look|sort|out|handle|finish|happen
be|been|being|huh|eh|hm+|h+m+|idk|dunno|know|seems?|seemed|like
error|errors|bug|bugs|buggy|problem|problems|issue|issues|there|there's|theres|here|happening|happened|happens
crash|crashed|crashes|crashing|fail|fails|failed|failing|slow|weird|strange|off|bad|ugly|messed|mess|stuck|sure|idea
with|of|in|on|to|and|or|but|for|at|from|as|everywhere|anywhere|ugh+|argh+|damn|wtf|ffs|sos
ayuda|ayúdame|socorro|funciona|anda|roto|aide|aidez-moi|ça|ca|marche|pas|fonctionne|cassé|hilfe|geht|nicht|kaputt|funktioniert
não|nao|quebrado|ajuda|está|esta|es|動かない|助けて|壊れた|エラー|不行|坏了|帮忙|帮我|出错了
`

// vagueQuestions are the vague words that open a question.
const vagueQuestions = `
what|what's|whats|wat|why|how|is|are|was|were|can|could|would|will|should
`

// referents are the vague words that point at something the message does
// not name; "help" is among them because it needs an object too.
const referents = `
it|its|it's|it'll|that|that's|this|these|those|thing|things|stuff|something|something's|help
`

// affirm are strong confirmations of something Fetch proposed.
const affirm = `
yes+|yess+|yeah|yea|ya|yah|yep|yup|y|sure|please|pls|plz|go|go ahead|go for it|go on|do it|please do|do so|continue|keep going|carry on
let's (do it|go|do this)|lets (do it|go|do this)|why not|proceed|approved?|confirm(ed)?|make it so|absolutely|definitely|of course|ofc|sounds like a plan|yes sir|yessir
sí|si|claro|dale|vale|hazlo|adelante|oui|ouais|d'accord|vas-y|vas y|allez-y|ja|jawohl|klar|mach das|mach es|mach schon|los|sim|pode|manda ver|bora|はい|お願いします|お願い|好的|好|行|да|давай|evet|tak
`

// agree are weak confirmations: alone they accept a proposal, next to
// thanks they only acknowledge it ("ok thanks").
const agree = `
ok|okay|okey|okie|k|kk|alright|all right|fine|cool|great|perfect|nice|awesome|good|sounds (good|great|perfect|fine)|sgtm|lgtm|looks good( to me)?
works for me|that works|agreed|agree|exactly|correct|right|that's right|that's it|👍|👌|✅|💯|🚀|🙌|✔️?
`

// decline are refusals of a proposal.
const decline = `
no+|nope|nah|not (now|yet|today|right now|really|needed|necessary)|maybe later|later|no thanks|no thank you|don't|do not|dont|don't bother
cancel( it| that)?|skip( it| that)?|never ?mind|nvm|leave it( as is| alone| like that)?|forget (it|about it)|hold off|hold on|wait|stop
not sure|unsure|i'm not sure|i don't know|idk|dunno|let me think( about it)?|no need|not needed|that's fine|it's fine|i'm good|im good|we're good|pass|let's not|negative|nein|non|não|nao|いいえ|不要|нет|hayır
`

// fillers may accompany a confirmation or a refusal without changing it.
const fillers = `
fetch|then|now|for now|man|mate|buddy|dude|bro|as is|thanks|thank you|thx|ty|cheers|ok|okay|sure|just|hmm+|um+|well
`

// polite are the openings that turn a request into a question: "can you",
// "would you mind", "peux-tu", "kannst du".
const polite = `
(can|could|would|will|can't|cant|won't|wont|cn|cud|wud) (you|u|ya|we|y'all)
(would|do) (you|u) mind|mind
are (you|u) able to|any chance (you|u|we) (could|can)|is there any (way|chance) (you|u) (could|can)
would it be possible (for (you|u) )?to|(i was|i'm|im) wondering if (you|u) (could|can|would)|can i (get|ask) (you|u) to
puedes|podrías|podrias|podés|podéis|pueden|podrían|podrian
peux-tu|peux tu|pourrais-tu|pourrais tu|pouvez-vous|pouvez vous|pourriez-vous|pourriez vous|tu peux|tu pourrais
kannst du|könntest du|koenntest du|können sie|könnten sie|kannste
pode|podes|poderia|você pode|voce pode|vc pode|consegue
`

// adverbs may sit between a polite opening and its verb.
const adverbs = `
please|pls|plz|kindly|just|also|maybe|possibly|quickly|real quick|now|then|go|try and|try to|help me|por favor|bitte|s'il te plaît|stp
`

// reads are verbs that ask to see or understand something without changing
// it: the request behind "explain", "show me", "find".
const reads = `
explain|describe|summari[sz]e|sum up|recap|outline|tell|show|list|ls|let me know|remind me|update me|keep me (posted|updated)
give me( a| an| the| some)? (summary|overview|rundown|breakdown|explanation|list|status|update|idea|hint|tour)|get me
double[- ]?check|find|search|grep|look up|lookup|locate|look (at|into|over|through)|take a look|have a look|peek at|go (over|through)
check|verify|review|compare|diff|inspect|investigate|analy[sz]e|audit|trace|examine|read|cat|print|display|view|count|scan|skim
walk me through|help me (understand|figure out|see)|understand|figure out
explica|explícame|explicame|explicar|muestra|muéstrame|muestrame|dime|lista|busca|explique|expliquer|montre|montre-moi|montrer|dis-moi|liste|cherche
erkläre|erklär|erklären|zeig|zeige|zeigen|sag mir|liste|suche|mostre|mostrar|me diga|diga|explica-me|me mostra|procure
`

// acts are imperative verbs that change something, in English and a few
// other languages.
const acts = `
add|append|prepend|insert|include|introduce|inject|create|make|build|rebuild|compile|recompile|generate|gen|regenerate|scaffold|bootstrap|init|initiali[sz]e
set up|setup|set|unset|configure|write|rewrite|implement|code|fix|patch|repair|debug|resolve|address|handle|solve|correct|hotfix
refactor|restructure|reorgani[sz]e|organi[sz]e|rearrange|reorder|sort|clean|cleanup|clean up|tidy|simplify|split|extract|inline|dedupe|deduplicate|consolidate
merge|combine|unify|move|mv|rename|reword|rephrase|shorten|trim|wrap|unwrap|wire|hook|connect|disconnect|decouple|modulari[sz]e|migrate|port|convert|translate
transform|replace|swap|switch|use|change|modify|edit|alter|adjust|tweak|tune|update|upgrade|downgrade|bump|pin|unpin|vendor|install|uninstall|remove|rm|delete|del
drop|purge|prune|wipe|clear|reset|revert|undo|redo|rollback|roll back|restore|rerun|run|execute|exec|launch|start|restart|stop|kill|pause|resume|continue|retry
deploy|ship|release|publish|tag|push|pull|fetch|rebase|squash|cherry-pick|commit|stash|checkout|check out|clone|fork|branch|open|close|approve|reject|accept|apply
enable|disable|turn|toggle|increase|decrease|reduce|raise|lower|limit|cap|throttle|optimi[sz]e|speed up|improve|enhance|harden|secure|saniti[sz]e|validate|escape
cache|memoi[sz]e|log|format|fmt|gofmt|lint|vet|test|document|comment out|uncomment|annotate|mark|flag|deprecate|archive|ignore|skip|exclude|expose|export|import
mock|stub|benchmark|profile|bundle|minify|package|containeri[sz]e|dockeri[sz]e|provision|spin up|tear down|destroy|schedule|send|post|notify|upload|download|sync
hide|unhide|collapse|expand|refresh|reload|rotate|save|persist|store|allow|prevent|block|support|center|centre|align|resize|style|colou?r|theme|highlight|indent|put|let|get rid of|make sure
ensure|try|finish|complete|bring|keep|give|new|do|go with|stop
añade|añadir|agrega|agregar|crea|crear|arregla|arreglar|corrige|corregir|elimina|eliminar|borra|borrar|cambia|cambiar|haz|hacer|implementa|escribe|actualiza
mueve|renombra|ejecuta|usa|instala|quita|pon
ajoute|ajouter|crée|créer|corriger|supprime|supprimer|modifie|modifier|changer|fais|faire|écris|ecris|renomme|mets|lance|implémente|répare|repare|enlève|enleve
füge|fuege|erstelle|schreib|schreibe|lösche|loesche|ändere|aendere|behebe|repariere|mach|mache|implementiere|benenne|führe|fuehre|aktualisiere|entferne|baue|teste
adicione|adiciona|crie|cria|corrija|remova|altere|mude|muda|faça|faca|escreva|atualize|renomeie|implemente|apague|instale
`

// whs are the words that open a question.
const whs = `
what|what's|whats|wat|wut|which|where|where's|wheres|why|how|how's|hows|who|who's|whom|whose|when|when's
qué|que|cuál|cual|cuáles|cómo|como|dónde|donde|por qué|cuándo|cuando|quién|quien|cuánto|cuánta|cuántos
quoi|quel|quelle|quels|quelles|qu'est-ce|pourquoi|où|quand|combien|comment (ça|ca|est|sont|fonctionne|marche|faire|on|je|tu|il|elle|le|la|les|se|puis|ils|marchent|fonctionnent)
was|wie|warum|wieso|weshalb|wo|woher|welche|welcher|welches|wann|wer
o que|onde|qual|quais|quando|quem|quanto|por que
`

// auxes are the auxiliaries that open a yes/no question. "can you" and
// "could you" are not among them: those open polite requests.
const auxes = `
is|isn't|are|aren't|was|wasn't|were|weren't|am|does|doesn't|did|didn't|has|hasn't|have|haven't|had|should|shouldn't|shall|may|might|must
do (you|u|we|i|they|these|those)|don't (you|we|they)
can (i|it|this|that|these|those|the|my|our|one|anyone|someone|he|she|they)
could (it|this|that|these|those|the|i|there)|would (it|this|that|there|i)|will (it|this|that|there|i|the)
any|anything|anyone|anybody|is there|are there
`

// alt turns a vocabulary list into a non-capturing regular expression group.
func alt(list string) string {
	var parts []string
	for line := range strings.Lines(list) {
		line = strings.TrimSpace(line)
		if line == "" {
			continue
		}
		line = strings.ReplaceAll(line, " ", `\s+`)
		line = strings.ReplaceAll(line, "'", `['’]`)
		parts = append(parts, line)
	}
	return "(?:" + strings.Join(parts, "|") + ")"
}
