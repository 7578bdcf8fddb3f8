package harness

import (
	"slices"
	"strings"
	"testing"
)

// TestKeysDeclareWhatReachesTheKennel: every credential an adapter passes
// into the kennel, for any model, is among its declared Keys, and every
// declared key that carries an API key, a token or a configuration is
// marked secret (so that Fetch redacts it).
func TestKeysDeclareWhatReachesTheKennel(t *testing.T) {
	models := []string{""}
	for p := range providerEnv {
		models = append(models, p+"/some-model")
	}
	for alias := range modelAliases {
		models = append(models, alias)
	}
	for _, n := range NewRegistry().Names() {
		a, _ := NewRegistry().Get(n)
		declared := a.Keys()
		t.Run(string(n), func(t *testing.T) {
			for _, k := range declared {
				looksSecret := strings.HasSuffix(k.Name, "_KEY") || strings.HasSuffix(k.Name, "_TOKEN") || strings.HasSuffix(k.Name, "_CONTENT")
				if looksSecret && !k.Secret {
					t.Errorf("%s is declared but not secret", k.Name)
				}
			}
			for _, model := range models {
				task := baseTask()
				task.Model = model
				inv, err := a.Invocation(task, allCredentials)
				if err != nil {
					t.Fatal(err)
				}
				for _, kv := range inv.Env {
					k, _, _ := strings.Cut(kv, "=")
					if _, isCred := allCredentials[k]; !isCred {
						continue
					}
					if !slices.ContainsFunc(declared, func(d Key) bool { return d.Name == k }) {
						t.Errorf("model %q: %s reaches the kennel but is not among Keys()", model, k)
					}
				}
			}
		})
	}
}
