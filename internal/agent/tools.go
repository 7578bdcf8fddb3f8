package agent

import (
	"bytes"
	"context"
	"embed"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"reflect"
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/fetch-dev/fetch/intent"
	"github.com/fetch-dev/fetch/internal/chat"
	"github.com/fetch-dev/fetch/internal/llm"
	"github.com/revrost/go-openrouter/jsonschema"
)

//go:embed tools/*.md
var toolDocs embed.FS

// access is what a tool may do, which decides the intents offering it.
type access string

const (
	// readOnly tools look at the session (workspaces, tasks); every
	// intent offers them.
	readOnly access = "read"
	// reading tools read code (code_*): an inquiry and an action offer
	// them; a conversation, which answers in a line, does not.
	reading access = "code"
	// mutating tools change something; only an action offers them.
	mutating access = "write"
	// asking tools hand a question to a harness that runs read-only
	// (task_ask): they change nothing, but start a run that takes minutes
	// and costs, so only an inquiry offers them; an action that needs
	// the code understood hands the whole job to task_create.
	asking access = "ask"
)

// need is what the conversation must have, as a turn starts, for a tool
// to be offered (see run.has): a tool that cannot apply costs its
// definition in every call and tempts the model for nothing.
type need string

const (
	// always: offered whenever the intent allows it.
	always need = ""
	// aTask: the conversation knows of a task (run.knowsTasks).
	aTask need = "task"
	// anActiveTask: a task of the conversation runs or waits for an answer.
	anActiveTask need = "active task"
	// aWaitingTask: a task of the conversation waits for an answer.
	aWaitingTask need = "waiting task"
	// anotherWorkspace: a workspace exists besides the selected one (to
	// select or delete).
	anotherWorkspace need = "other workspace"
)

// tool is one orchestrator tool. Its schema is generated from the Go type
// of its arguments; its description is the embedded tools/NAME.md.
type tool struct {
	name   string
	access access
	// needs is what the conversation must have for the tool to be
	// offered.
	needs need
	// survey: it gives more of what the system prompt already carries
	// for the selected workspace (its map, its git state). An action,
	// which hands the reading to a harness, makes do with the prompt: it
	// is not offered the tool (but may call it).
	survey bool
	// ownerOnly, when not empty, is what the tool does that only the
	// owner may (see run.refuse): an allowed user is neither offered it
	// nor served when the model calls it.
	ownerOnly string
	// changesContext: after it succeeds the system prompt is rebuilt.
	changesContext bool
	// maxResult bounds its result (maxResult of the loop when 0).
	maxResult int
	desc      string
	schema    *jsonschema.Definition
	// call decodes raw arguments and returns the prepared call, or an
	// error the model reads.
	decode func(raw string) (prepared, error)
}

// prepared is a call with decoded, validated arguments.
type prepared struct {
	// args is the canonical JSON of the arguments.
	args string
	// check tells, before anything is asked or done, whether the call
	// can work at all (the workspace exists, one is selected).
	check func(ctx context.Context, r *run) error
	// run carries the call out.
	run func(ctx context.Context, r *run) (string, error)
	// bind, when set, returns the arguments with what the conversation
	// supplies filled in (the selected workspace) and their description,
	// for an approval that runs later.
	bind func(r *run) (args, describe string)
	// danger, when not empty, is why the call needs the owner's approval.
	danger string
	// describe is the call in words, for the owner.
	describe string
}

// spec is a tool's behaviour over its argument type A.
type spec[A any] struct {
	access access
	// needs: offered only when the conversation has it.
	needs need
	// survey: not offered to an action (see tool.survey).
	survey bool
	// ownerOnly: what only the owner may do (see tool.ownerOnly).
	ownerOnly string
	// changesContext: the system prompt is rebuilt after a success.
	changesContext bool
	// maxResult bounds its result (maxResult of the loop when 0).
	maxResult int
	// validate normalises and checks the arguments alone.
	validate func(*A) error
	// check is a precondition against the world, before approval.
	check func(ctx context.Context, r *run, args A) error
	// bind fills in what the conversation supplies before an approval.
	bind func(r *run, args *A)
	run  func(ctx context.Context, r *run, args A) (string, error)
	// policy says why a call is dangerous ("" when it is not) and
	// describes it for the owner.
	policy func(args *A) (danger, describe string)
}

// define registers a tool whose arguments are A.
func define[A any](a *Agent, name string, s spec[A]) error {
	doc, err := toolDocs.ReadFile("tools/" + name + ".md")
	if err != nil {
		return fmt.Errorf("agent: tool %s: %w", name, err)
	}
	var zero A
	schema, err := jsonschema.GenerateSchemaForType(zero)
	if err != nil {
		return fmt.Errorf("agent: tool %s schema: %w", name, err)
	}
	// The generator adds "additionalProperties": false, which only
	// strict mode (every field required) needs; decodeArgs refuses
	// unknown fields anyway, so every call would pay for it in vain.
	schema.AdditionalProperties = nil
	t := &tool{name: name, access: s.access, needs: s.needs, survey: s.survey, ownerOnly: s.ownerOnly, changesContext: s.changesContext, maxResult: s.maxResult, desc: strings.TrimSpace(string(doc)), schema: schema}
	t.decode = func(raw string) (prepared, error) {
		var args A
		if err := decodeArgs(raw, schema, &args); err != nil {
			return prepared{}, err
		}
		if s.validate != nil {
			if err := s.validate(&args); err != nil {
				return prepared{}, err
			}
		}
		canon, _ := json.Marshal(args)
		p := prepared{args: string(canon), run: func(ctx context.Context, r *run) (string, error) { return s.run(ctx, r, args) }}
		p.describe = name + " " + p.args
		if s.check != nil {
			p.check = func(ctx context.Context, r *run) error { return s.check(ctx, r, args) }
		}
		if s.bind != nil {
			p.bind = func(r *run) (string, string) {
				bound := args
				s.bind(r, &bound)
				b, _ := json.Marshal(bound)
				describe := name + " " + string(b)
				if s.policy != nil {
					_, describe = s.policy(&bound)
				}
				return string(b), describe
			}
		}
		if s.policy != nil {
			p.danger, p.describe = s.policy(&args)
		}
		return p, nil
	}
	a.tools[name] = t
	a.order = append(a.order, name)
	return nil
}

// decodeArgs reads a tool call's raw arguments into args, checked
// against the tool's schema. "" reads as {} (a tool without required
// fields needs none); anything else must be one JSON object with known
// fields and the required ones present. What is wrong names the field, so
// that the model can fix its call.
func decodeArgs(raw string, schema *jsonschema.Definition, args any) error {
	if raw == "" {
		raw = "{}"
	}
	if strings.TrimSpace(raw) == "" {
		return fmt.Errorf("the arguments are only whitespace; send a JSON object, e.g. %s", example(schema))
	}
	var fields map[string]json.RawMessage
	if err := json.Unmarshal([]byte(raw), &fields); err != nil || fields == nil {
		return fmt.Errorf("the arguments are not a JSON object (%s); send one, e.g. %s", shortErr(err), example(schema))
	}
	var unknown []string
	for k := range fields {
		if _, ok := schema.Properties[k]; !ok {
			unknown = append(unknown, k)
		}
	}
	if len(unknown) > 0 {
		sort.Strings(unknown)
		known := "it takes no fields"
		if len(schema.Properties) > 0 {
			known = "the fields are " + quoted(slices.Sorted(maps.Keys(schema.Properties)))
		}
		return fmt.Errorf("unknown %s %s; %s", plural(len(unknown), "field"), quoted(unknown), known)
	}
	var missing []string
	for _, k := range schema.Required {
		if v, ok := fields[k]; !ok || string(v) == "null" || string(v) == `""` {
			missing = append(missing, k)
		}
	}
	if len(missing) > 0 {
		return fmt.Errorf("missing required %s %s", plural(len(missing), "field"), quoted(missing))
	}
	for _, k := range slices.Sorted(maps.Keys(fields)) {
		if err := json.Unmarshal(fields[k], fieldOf(args, k)); err != nil {
			var te *json.UnmarshalTypeError
			if errors.As(err, &te) {
				return fmt.Errorf("field %q: want %s, got %s", k, typeName(schema.Properties[k]), te.Value)
			}
			return fmt.Errorf("field %q: %s", k, shortErr(err))
		}
	}
	dec := json.NewDecoder(bytes.NewReader([]byte(raw)))
	if err := dec.Decode(args); err != nil {
		return fmt.Errorf("the arguments do not fit the schema: %s", shortErr(err))
	}
	if _, err := dec.Token(); err != io.EOF {
		return errors.New("the arguments have trailing data after the JSON object")
	}
	return nil
}

// fieldOf is a pointer to the field of the struct args points to whose
// JSON name is name, to decode one field alone and name it when it does
// not fit; a throwaway value when there is none.
func fieldOf(args any, name string) any {
	v := reflect.ValueOf(args).Elem()
	for i := range v.NumField() {
		tag, _, _ := strings.Cut(v.Type().Field(i).Tag.Get("json"), ",")
		if tag == name {
			return v.Field(i).Addr().Interface()
		}
	}
	return new(any)
}

// typeName is a schema type in words, for an error.
func typeName(d jsonschema.Definition) string {
	switch d.Type {
	case jsonschema.String:
		return "a string"
	case jsonschema.Boolean:
		return "true or false"
	case jsonschema.Integer:
		return "an integer"
	case jsonschema.Number:
		return "a number"
	case jsonschema.Array:
		if d.Items != nil {
			return "an array of " + strings.TrimPrefix(strings.TrimPrefix(typeName(*d.Items), "a "), "an ") + "s"
		}
		return "an array"
	case jsonschema.Object:
		return "an object"
	}
	return string(d.Type)
}

// example is a call's arguments with its required fields, for an error.
func example(schema *jsonschema.Definition) string {
	parts := make([]string, len(schema.Required))
	for i, k := range schema.Required {
		parts[i] = fmt.Sprintf("%q: …", k)
	}
	return "{" + strings.Join(parts, ", ") + "}"
}

func quoted(names []string) string {
	q := make([]string, len(names))
	for i, n := range names {
		q[i] = strconv.Quote(n)
	}
	return strings.Join(q, ", ")
}

func plural(n int, word string) string {
	if n == 1 {
		return word
	}
	return word + "s"
}

// fieldError is an invalid value of one field, for the model.
func fieldError(field, format string, a ...any) error {
	return fmt.Errorf("field %q: %s", field, fmt.Sprintf(format, a...))
}

func shortErr(err error) string {
	if err == nil {
		return "null or not an object"
	}
	s := err.Error()
	if len(s) > 120 {
		s = s[:120] + "…"
	}
	return s
}

// offered lists the tools the turn is offered, for the request: those its
// intent allows and whose need the conversation meets as the turn starts,
// less, in an action, the surveys. Every tool offered costs its definition
// in every call of the turn; a tool allowed but not offered still runs
// when the model calls it. The list is made once per turn (run.tools), so
// that every call of the turn sends the same tools and a provider's cache
// of them holds.
func (r *run) offered() []llm.Tool {
	var out []llm.Tool
	for _, name := range r.a.order {
		t := r.a.tools[name]
		if allowed(t, r.kind) && r.has(t.needs) && !(t.survey && r.kind == intent.Action) && r.refuse(t) == "" {
			out = append(out, llm.Tool{Name: t.name, Description: t.desc, Parameters: t.schema})
		}
	}
	return out
}

// offers tells whether the turn is offered the tool.
func (r *run) offers(name string) bool {
	for _, t := range r.tools {
		if t.Name == name {
			return true
		}
	}
	return false
}

// has tells whether the conversation meets a need as the turn started.
func (r *run) has(n need) bool {
	switch n {
	case always:
		return true
	case aTask:
		return r.knowsTasks
	case anActiveTask:
		return r.activeTask
	case aWaitingTask:
		return r.waitingTask
	case anotherWorkspace:
		return r.otherWorkspace
	}
	return false
}

// allowed tells whether an intent may use a tool at all.
func allowed(t *tool, kind intent.Kind) bool {
	switch t.access {
	case readOnly:
		return true
	case reading:
		return kind == intent.Inquiry || kind == intent.Action
	case asking:
		return kind == intent.Inquiry
	case mutating:
		return kind == intent.Action
	}
	return false
}

// refuse is the result the model reads when the sender may not use the
// tool: its ownerOnly part is the owner's alone, and the turn is an
// allowed user's (or of no known role). "" when the tool may run. The
// chat commands check the same role (instincts, conversation); this is
// that check for the agent's tools, which an allowed user's message can
// reach as well.
func (r *run) refuse(t *tool) string {
	if t.ownerOnly == "" || r.role == chat.Owner {
		return ""
	}
	return fmt.Sprintf("error: %s is not allowed: only the owner may %s, and this message is from an allowed user who is not the owner. Nothing was done; tell the user that only the owner can do this.", t.name, t.ownerOnly)
}

// toolNames lists the names of tools, sorted.
func toolNames(ts []llm.Tool) []string {
	out := make([]string, len(ts))
	for i, t := range ts {
		out[i] = t.Name
	}
	sort.Strings(out)
	return out
}
