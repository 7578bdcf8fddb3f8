package harness

import (
	"bytes"
	"encoding/json"
)

// JSON-RPC as the two-way CLIs speak it: ACP with "jsonrpc":"2.0" on every
// line, Codex's app-server without it. One message per line either way.

// rpcMethodNotFound is JSON-RPC's error code for an unknown method.
const rpcMethodNotFound = -32601

// rpcMessage is any JSON-RPC message, as far as Fetch reads it.
type rpcMessage struct {
	JSONRPC string          `json:"jsonrpc"`
	ID      json.RawMessage `json:"id"`
	Method  string          `json:"method"`
	Params  json.RawMessage `json:"params"`
	Result  json.RawMessage `json:"result"`
	Error   *struct {
		Code    int             `json:"code"`
		Message string          `json:"message"`
		Data    json.RawMessage `json:"data"`
	} `json:"error"`
}

// rpcID is a JSON-RPC id as Fetch keeps it: its JSON text (a number or a
// string), or "" when it is missing or of another type.
func rpcID(raw json.RawMessage) string {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 {
		return ""
	}
	var v any
	if json.Unmarshal(raw, &v) != nil {
		return ""
	}
	switch v.(type) {
	case float64, string:
		return string(raw)
	}
	return ""
}

// rpcOut is a request (with an ID) or notification line Fetch writes;
// JSONRPC is "2.0" for ACP, empty for Codex.
type rpcOut struct {
	JSONRPC string `json:"jsonrpc,omitempty"`
	ID      any    `json:"id,omitempty"`
	Method  string `json:"method"`
	Params  any    `json:"params,omitempty"`
}

// rpcResult is a response line; ID is the request's id as it came.
type rpcResult struct {
	JSONRPC string          `json:"jsonrpc,omitempty"`
	ID      json.RawMessage `json:"id"`
	Result  any             `json:"result"`
}

// rpcError is an error response line.
type rpcError struct {
	JSONRPC string          `json:"jsonrpc,omitempty"`
	ID      json.RawMessage `json:"id"`
	Error   rpcErrorBody    `json:"error"`
}

type rpcErrorBody struct {
	Code    int    `json:"code"`
	Message string `json:"message"`
	Data    any    `json:"data,omitempty"`
}

// formatOr is the parser of a CLI that writes its one-shot format or, in
// a two-way run, a JSON-RPC one: each line goes to the parser of its
// format. A run followed again after a restart is parsed by the same
// parser, whichever way it ran.
type formatOr struct {
	// rpc tells the two-way format's lines.
	rpc       func(line []byte) bool
	twoWay    Parser
	otherwise Parser
}

func (p *formatOr) Parse(line []byte, emit func(Event)) {
	if p.rpc(line) {
		p.twoWay.Parse(line, emit)
		return
	}
	p.otherwise.Parse(line, emit)
}

func (p *formatOr) Flush(emit func(Event)) {
	p.twoWay.Flush(emit)
	p.otherwise.Flush(emit)
}
