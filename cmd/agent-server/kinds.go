package main

import "github.com/agentcore/agentcore/pkg/tool"

// kinds are the extra kinds of tool files the server's scan recognises.
func kinds() []tool.Kind { return nil }
