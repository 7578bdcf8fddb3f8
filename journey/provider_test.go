package journey

import (
	"regexp"
	"testing"
	"time"

	"github.com/fetch-dev/fetch/internal/testkit"
)

// J10: the model provider hangs. With a short FETCH_TURN_TIMEOUT the
// owner gets one reply, in about that time plus the final answer's grace
// (not minutes), saying it is the provider that did not answer — not
// "something went wrong on my side" — and the conversation answers
// afterwards. On the base commit the final-answer request had its own
// two minutes, so the owner waited 140 s for a 20 s timeout.
func TestJourneyHungProvider(t *testing.T) {
	t.Parallel()
	w := newWorld(t, "app")
	w.env["FETCH_TURN_TIMEOUT"] = "3s"
	w.start()
	// Every request hangs far longer than the turn may take.
	for range 4 {
		w.llm.Script(testkit.Step{Delay: 10 * time.Minute, Text: "too late"})
	}
	m := w.send(ownerID, "add a health endpoint to the app workspace")
	// 3 s of turn, at most 20 s of grace for the final answer, and slack
	// for a loaded machine: far below the two minutes of the base commit.
	got := w.awaitWithin(45*time.Second, m, regexp.MustCompile(`(?s)The LLM provider.*did not answer in time`), func(s seen) bool { return s.New }, "the provider's fault, reported")
	if regexp.MustCompile(`on my side`).MatchString(got.Text) {
		t.Errorf("reply blames Fetch: %q", got.Text)
	}
	w.ask(ownerID, "/status", statusRe)
}
