// Command mcpserver is the MCP server of toolhost's tests: mcptest's server
// over stdio. Usage: mcpserver [VARIANT] (default full).
package main

import (
	"os"

	"github.com/agentcore/agentcore/internal/mcptest"
)

func main() {
	variant := mcptest.VariantFull
	if len(os.Args) > 1 {
		variant = os.Args[1]
	}
	os.Exit(mcptest.RunStdio(variant))
}
