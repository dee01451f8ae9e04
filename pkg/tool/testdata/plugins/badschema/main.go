// Command badschema is a broken plugin: its tool's schema is not an object schema.
package main

import (
	"context"
	"encoding/json"

	"github.com/agentcore/agentcore/sdk/tool"
)

func main() {
	tool.Serve(tool.Raw("broken", "Has a bad schema.", json.RawMessage(`{"type":"string"}`),
		func(context.Context, json.RawMessage, tool.Emit) (any, error) { return nil, nil }))
}
