// Command openapigen finishes the gateway's OpenAPI document: it reads what
// protoc-gen-openapiv2 made of agent_service.proto and writes
// pkg/gateway/openapi.json with what the generator cannot express:
//
//   - Send as POST /v1/agents/{agentId}:send with a StartRun body
//     (grpc-gateway cannot bind path fields of a client stream, so the
//     generator sees Send unbound, at /agentcore.v1.AgentService/Send);
//   - the streaming routes answering text/event-stream, each data line one
//     message (a run's Event, unwrapped from its response) instead of
//     grpc-gateway's newline-delimited {"result": …} objects;
//   - the title, the bearer token, and no definition left unreferenced.
//
// `make proto` runs it; `make proto-check` (in `make lint`) runs it again
// into a temporary directory and fails when the committed document differs.
//
// Usage: openapigen -in openapi.swagger.json -out pkg/gateway/openapi.json
package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"os"
	"strings"
)

func main() {
	in := flag.String("in", "", "protoc-gen-openapiv2's merged output")
	out := flag.String("out", "", "the document to write")
	flag.Parse()
	if *in == "" || *out == "" {
		fmt.Fprintln(os.Stderr, "usage: openapigen -in openapi.swagger.json -out openapi.json")
		os.Exit(2)
	}
	if err := run(*in, *out); err != nil {
		fmt.Fprintln(os.Stderr, "openapigen:", err)
		os.Exit(1)
	}
}

func run(in, out string) error {
	b, err := os.ReadFile(in)
	if err != nil {
		return err
	}
	doc, err := finish(b)
	if err != nil {
		return err
	}
	return os.WriteFile(out, doc, 0o644)
}

// obj is a JSON object of the document.
type obj = map[string]any

const description = `AgentService of agentcore over HTTP/JSON (grpc-gateway), the same calls as over gRPC ` +
	`(proto/agentcore/v1/agent_service.proto): the same authentication, limits, validation and errors.

Bodies are proto3 JSON: lowerCamelCase names (snake_case accepted), 64-bit integers as strings, ` +
	`enums by name; an unknown field is an error.

Streaming routes (send, attach, compact, execute) answer text/event-stream: one event per message, its ` +
	"`data:` line the message as JSON and, for a run's events, its `id:` the event's seq. A stream that " +
	"ends in an error sends a last event `event: error` whose data is the google.rpc.Status. An error " +
	`found before the first event is a plain HTTP error.

Every error body is a google.rpc.Status: code, message, and details holding a google.rpc.ErrorInfo ` +
	`(domain agentcore, a stable reason such as AGENT_NOT_FOUND) and, for a bad request, a ` +
	`google.rpc.BadRequest naming each bad field by its path in the request.`

// finish turns the generator's document into the gateway's.
func finish(generated []byte) ([]byte, error) {
	var doc obj
	if err := json.Unmarshal(generated, &doc); err != nil {
		return nil, fmt.Errorf("the generator's output: %w", err)
	}
	doc["info"] = obj{"title": "agentcore HTTP API", "version": "v1", "description": description}
	doc["securityDefinitions"] = obj{"bearer": obj{
		"type": "apiKey", "in": "header", "name": "Authorization",
		"description": "`Bearer TOKEN`, when the server has a bearer token (-auth-token-env, -auth-token-file).",
	}}
	doc["security"] = []any{obj{"bearer": []any{}}}
	paths, _ := doc["paths"].(obj)
	defs, _ := doc["definitions"].(obj)
	if paths == nil || defs == nil {
		return nil, errors.New("the generator's output has no paths or definitions")
	}
	if err := bindSend(paths, defs); err != nil {
		return nil, err
	}
	for path, item := range paths {
		for method, op := range item.(obj) {
			if err := eventStream(path, op.(obj), defs); err != nil {
				return nil, fmt.Errorf("%s %s: %w", strings.ToUpper(method), path, err)
			}
		}
	}
	prune(doc, defs)
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetIndent("", "  ")
	enc.SetEscapeHTML(false)
	if err := enc.Encode(doc); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// unboundSend is where the generator puts Send, which has no HTTP rule.
const unboundSend = "/agentcore.v1.AgentService/Send"

// bindSend moves Send to its route: the agent in the path, the rest of the
// StartRun in the body.
func bindSend(paths, defs obj) error {
	item, ok := paths[unboundSend].(obj)
	if !ok {
		return fmt.Errorf("no %s in the generator's output (is generate_unbound_methods set?)", unboundSend)
	}
	op, ok := item["post"].(obj)
	if !ok {
		return fmt.Errorf("%s has no post operation", unboundSend)
	}
	delete(paths, unboundSend)
	start, ok := defs["v1StartRun"].(obj)
	if !ok {
		return errors.New("no v1StartRun definition")
	}
	body := obj{}
	for k, v := range start {
		body[k] = v
	}
	props := obj{}
	for k, v := range start["properties"].(obj) {
		if k != "agentId" {
			props[k] = v
		}
	}
	body["properties"] = props
	body["title"] = "StartRun without the agent, which the path names."
	defs["AgentServiceSendBody"] = body
	op["summary"] = "Send starts a run on the agent and answers with its events as server-sent events."
	op["description"] = "Each event's id is its seq. Permission requests wait for an answer from " +
		"POST /v1/runs/{runId}/permissions/{toolCallId}; POST /v1/agents/{agentId}:stop stops the run. " +
		"The client going away stops the run too, unless onDisconnect is ON_DISCONNECT_CONTINUE: then " +
		"GET /v1/runs/{runId}:attach with Last-Event-ID (or afterSeq) follows it again from the next event. " +
		"Events: runStarted, modelRequest, modelDelta…, toolCall, toolOutput, toolResult, step, retry, " +
		"compact*, and result last."
	op["parameters"] = []any{
		obj{"name": "agentId", "in": "path", "required": true, "type": "string"},
		obj{"name": "body", "in": "body", "required": true, "schema": obj{"$ref": "#/definitions/AgentServiceSendBody"}},
	}
	paths["/v1/agents/{agentId}:send"] = obj{"post": op}
	return nil
}

// streamTitle starts the title grpc-gateway gives a streaming response.
const streamTitle = "Stream result of "

// eventStream describes a streaming operation's answer as server-sent
// events whose data is the call's message, or the Event a message only
// wraps; an attach route also takes Last-Event-ID and may answer 204.
func eventStream(path string, op, defs obj) error {
	responses, _ := op["responses"].(obj)
	ok, _ := responses["200"].(obj)
	schema, _ := ok["schema"].(obj)
	if title, _ := schema["title"].(string); !strings.HasPrefix(title, streamTitle) {
		return nil
	}
	result, _ := schema["properties"].(obj)["result"].(obj)
	ref, _ := result["$ref"].(string)
	if ref == "" {
		return errors.New("a streaming response without a result reference")
	}
	if def, ok := defs[strings.TrimPrefix(ref, "#/definitions/")].(obj); ok {
		if props, _ := def["properties"].(obj); len(props) == 1 {
			if ev, _ := props["event"].(obj); ev != nil {
				ref, _ = ev["$ref"].(string)
			}
		}
	}
	op["produces"] = []any{"text/event-stream"}
	responses["200"] = obj{
		"description": "Server-sent events: each `data:` line one of these as JSON (`id:` its seq for a run's " +
			"events); a last `event: error` carries the google.rpc.Status when the stream ends in an error.",
		"schema": obj{"$ref": ref},
	}
	if strings.HasSuffix(path, ":attach") {
		params, _ := op["parameters"].([]any)
		op["parameters"] = append(params, obj{"name": "Last-Event-ID", "in": "header", "required": false, "type": "string",
			"description": "The seq of the last event received (a reconnecting EventSource sends it): counts as afterSeq when later."})
		responses["204"] = obj{"description": "The run has no event after afterSeq and has ended: nothing to follow (an EventSource stops reconnecting)."}
	}
	return nil
}

// prune removes the definitions nothing refers to, from the paths on.
func prune(doc, defs obj) {
	used := map[string]bool{}
	var walk func(v any)
	walk = func(v any) {
		switch v := v.(type) {
		case obj:
			if ref, ok := v["$ref"].(string); ok {
				name := strings.TrimPrefix(ref, "#/definitions/")
				if !used[name] {
					used[name] = true
					walk(defs[name])
				}
			}
			for _, e := range v {
				walk(e)
			}
		case []any:
			for _, e := range v {
				walk(e)
			}
		}
	}
	walk(doc["paths"])
	for name := range defs {
		if !used[name] {
			delete(defs, name)
		}
	}
}
