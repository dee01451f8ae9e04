package main

import (
	"encoding/json"
	"strings"
	"testing"
)

// generated is the shape of protoc-gen-openapiv2's output for one unary
// route, one streaming route and Send unbound.
const generated = `{
  "swagger": "2.0", "info": {"title": "agentcore/v1/config.proto"},
  "paths": {
    "/v1/agents/{agentId}": {"get": {"responses": {"200": {"schema": {"$ref": "#/definitions/v1GetAgentResponse"}},
      "default": {"schema": {"$ref": "#/definitions/rpcStatus"}}}}},
    "/v1/agents/{agentId}:compact": {"post": {"responses": {"200": {"description": "A successful response.(streaming responses)",
      "schema": {"type": "object", "title": "Stream result of v1CompactResponse",
        "properties": {"result": {"$ref": "#/definitions/v1CompactResponse"}, "error": {"$ref": "#/definitions/rpcStatus"}}}}}}},
    "/agentcore.v1.AgentService/Send": {"post": {"operationId": "AgentService_Send",
      "parameters": [{"name": "body", "in": "body", "schema": {"$ref": "#/definitions/v1SendRequest"}}],
      "responses": {"200": {"schema": {"type": "object", "title": "Stream result of v1SendResponse",
        "properties": {"result": {"$ref": "#/definitions/v1SendResponse"}}}}}}}
  },
  "definitions": {
    "rpcStatus": {"type": "object"},
    "v1GetAgentResponse": {"type": "object"},
    "v1CompactResponse": {"type": "object", "properties": {"event": {"$ref": "#/definitions/v1Event"}}},
    "v1SendRequest": {"type": "object", "properties": {"start": {"$ref": "#/definitions/v1StartRun"}}},
    "v1SendResponse": {"type": "object", "properties": {"event": {"$ref": "#/definitions/v1Event"}}},
    "v1StartRun": {"type": "object", "properties": {"agentId": {"type": "string"}, "input": {"type": "array"}}},
    "v1Event": {"type": "object"},
    "v1Unused": {"type": "object"}
  }
}`

func TestFinish(t *testing.T) {
	out, err := finish([]byte(generated))
	if err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Info        map[string]any
		Paths       map[string]map[string]map[string]any
		Definitions map[string]map[string]any
		Security    []any
	}
	if err := json.Unmarshal(out, &doc); err != nil {
		t.Fatal(err)
	}
	if doc.Info["title"] != "agentcore HTTP API" || len(doc.Security) != 1 {
		t.Errorf("info %v, security %v", doc.Info, doc.Security)
	}
	if _, ok := doc.Paths[unboundSend]; ok {
		t.Error("Send is still at its unbound path")
	}
	send := doc.Paths["/v1/agents/{agentId}:send"]["post"]
	if send == nil || !strings.Contains(string(out), `"$ref": "#/definitions/AgentServiceSendBody"`) {
		t.Fatalf("no send route: %s", out)
	}
	if props := doc.Definitions["AgentServiceSendBody"]["properties"].(map[string]any); props["agentId"] != nil || props["input"] == nil {
		t.Errorf("send body %v: want the StartRun without agentId", props)
	}
	for _, path := range []string{"/v1/agents/{agentId}:send", "/v1/agents/{agentId}:compact"} {
		op := doc.Paths[path]["post"]
		schema := op["responses"].(map[string]any)["200"].(map[string]any)["schema"].(map[string]any)
		if schema["$ref"] != "#/definitions/v1Event" || op["produces"].([]any)[0] != "text/event-stream" {
			t.Errorf("%s answers %v %v, want text/event-stream of v1Event", path, op["produces"], schema)
		}
	}
	for _, gone := range []string{"v1Unused", "v1SendRequest", "v1SendResponse", "v1CompactResponse"} {
		if _, ok := doc.Definitions[gone]; ok {
			t.Errorf("unreferenced definition %s kept", gone)
		}
	}
	for _, kept := range []string{"v1Event", "rpcStatus", "v1GetAgentResponse"} {
		if _, ok := doc.Definitions[kept]; !ok {
			t.Errorf("definition %s dropped", kept)
		}
	}
	if _, err := finish([]byte(`{"paths": {}, "definitions": {}}`)); err == nil {
		t.Error("a document without Send was finished")
	}
}
