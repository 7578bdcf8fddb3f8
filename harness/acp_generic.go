package harness

import (
	"fmt"
	"regexp"
	"slices"
	"strings"
	"time"
)

// ACPPrefix starts the name of a generic ACP harness: "acp:COMMAND [ARGS…]"
// runs COMMAND with ARGS in the kennel and speaks the Agent Client Protocol
// with it on its stdin and stdout (acp.go), like Gemini CLI's --acp. Any
// ACP agent installed in the kennel image can be used this way, with no
// code: "acp:goose acp", "acp:kimi --acp", "acp:/opt/pi/bin/pi-agent".
const ACPPrefix = "acp:"

// Limits and character sets of a generic ACP harness's name. The command
// is a program name or an absolute path and never starts with '-'; an
// argument may be a flag. Words are separated by one space: no quoting,
// no shell; the name is the argv.
var (
	acpCommandWord = regexp.MustCompile(`^[A-Za-z0-9_./][A-Za-z0-9_.+/-]*$`)
	acpArgWord     = regexp.MustCompile(`^[A-Za-z0-9_./=:@+,-]+$`)
)

const (
	maxACPNameBytes = 256
	maxACPWords     = 16
)

// ACPHandshake is how long a generic ACP agent has to answer initialize
// once it started; a run whose agent has not answered by then is stopped
// and fails, naming the command.
const ACPHandshake = 30 * time.Second

// IsACPName tells whether name is that of a generic ACP harness (valid or
// not: ParseACP says).
func IsACPName(name Name) bool { return strings.HasPrefix(string(name), ACPPrefix) }

// ACPAdapter drives any ACP agent: the generic harness "acp:COMMAND
// [ARGS…]". It has no one-shot mode (ACP has no headless prompt flag):
// Invocation fails with ErrNoOneShot, and Traits says TwoWayOnly, so a task
// on it must run two-way.
//
// Credentials: none. Fetch knows nothing of the agent, so it passes none of
// its configured keys into the kennel for it (the kennel holds no key by
// default); the agent authenticates with what its own configuration in the
// kennel image holds, and reaches the network through the kennel's way
// out only where the owner allowed it (HostsOf names no host for it).
//
// Models: ACP has no standard way to choose one, so a task that names a
// model is refused; the agent uses the model of its own configuration.
type ACPAdapter struct {
	acpTwoWay
	name Name
	argv []string
	// handshake bounds the wait for initialize's answer (ACPHandshake).
	handshake time.Duration
}

// ParseACP reads a generic ACP harness's name. A name that is not of the
// form "acp:COMMAND [ARGS…]" with words of the allowed characters is an
// error wrapping ErrUnknownHarness that says what is wrong.
func ParseACP(name Name) (ACPAdapter, error) {
	bad := func(why string) (ACPAdapter, error) {
		return ACPAdapter{}, fmt.Errorf("harness: %q: %w: a generic ACP harness is %sCOMMAND [ARGS…]: %s", capString(string(name), 80), ErrUnknownHarness, ACPPrefix, why)
	}
	s, ok := strings.CutPrefix(string(name), ACPPrefix)
	switch {
	case !ok:
		return bad("the name does not start with " + ACPPrefix)
	case len(name) > maxACPNameBytes:
		return bad(fmt.Sprintf("longer than %d bytes", maxACPNameBytes))
	case s == "":
		return bad("no command")
	case strings.TrimSpace(s) != s || strings.Contains(s, "  "):
		return bad("separate the words with one space, with none before or after")
	}
	words := strings.Split(s, " ")
	if len(words) > maxACPWords {
		return bad(fmt.Sprintf("more than %d words", maxACPWords))
	}
	if !acpCommandWord.MatchString(words[0]) {
		return bad(fmt.Sprintf("the command %q may hold only letters, digits and . _ + / - and may not start with '-'", capString(words[0], 80)))
	}
	for _, w := range words[1:] {
		if !acpArgWord.MatchString(w) {
			return bad(fmt.Sprintf("the argument %q may hold only letters, digits and . _ / = : @ + , -", capString(w, 80)))
		}
	}
	return ACPAdapter{name: name, argv: words, handshake: ACPHandshake}, nil
}

// Name implements Adapter: the name it was parsed from.
func (a ACPAdapter) Name() Name { return a.name }

// Version implements Adapter: the protocol version, since the agent is
// not known.
func (ACPAdapter) Version() string { return fmt.Sprintf("ACP v%d", acpProtocolVersion) }

// Keys implements Adapter: none (see ACPAdapter).
func (ACPAdapter) Keys() []Key { return nil }

// Program is the command the harness runs in the kennel.
func (a ACPAdapter) Program() string { return a.argv[0] }

// Invocation implements Adapter: a generic ACP agent has no one-shot
// mode.
func (a ACPAdapter) Invocation(Task, Credentials) (Invocation, error) {
	return Invocation{}, fmt.Errorf("harness: %s invocation: %w", a.name, ErrNoOneShot)
}

// TwoWayInvocation implements TwoWay: the command and its arguments, with
// no credentials.
func (a ACPAdapter) TwoWayInvocation(task Task, mode TwoWayMode, _ Credentials) (Invocation, error) {
	if err := a.checkMode(task, mode); err != nil {
		return Invocation{}, fmt.Errorf("harness: %s two-way invocation: %w", a.name, err)
	}
	if task.Model != "" {
		return Invocation{}, fmt.Errorf("harness: %s two-way invocation: %w: model %q: a generic ACP agent takes no model from Fetch; set it in the agent's own configuration", a.name, ErrInvalidTask, task.Model)
	}
	return Invocation{Argv: slices.Clone(a.argv), Env: buildEnv(nil, nil)}, nil
}

// NewParser implements Adapter.
func (ACPAdapter) NewParser(task Task) Parser { return newACPParser(task) }

// Traits implements Adapter.
func (ACPAdapter) Traits() Traits {
	return acpTraits(Traits{ResumeUsage: UsagePerRun, TwoWayOnly: true})
}

// handshake implements handshaker: initialize must be answered within
// a.handshake.
func (a ACPAdapter) handshakeBound() (time.Duration, func([]byte) bool, string) {
	return a.handshake, acpInitAnswered, fmt.Sprintf("%s: %s did not answer initialize in %s", a.name, a.argv[0], a.handshake)
}

// notInKennel implements missingCLI.
func (a ACPAdapter) notInKennel() (string, string) {
	return a.argv[0], fmt.Sprintf("%s: %s is not in the kennel: install it in the kennel image", a.name, a.argv[0])
}
