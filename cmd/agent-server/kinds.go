package main

import (
	"os"
	"path/filepath"

	"github.com/agentcore/agentcore/pkg/a2atool"
	"github.com/agentcore/agentcore/pkg/mcp"
	"github.com/agentcore/agentcore/pkg/tool"
)

// kinds are the extra kinds of tool files the server's scan recognises: MCP
// server definitions (NAME.mcp.json, .yaml, .yml) and remote A2A agents
// (NAME.a2a.json), each served by a toolhost process. toolhost is looked
// for beside agent-server, then on PATH. An MCP definition's sampling
// block must name one of profiles, the server's model profiles.
func kinds(profiles []string) []tool.Kind {
	th := toolhostPath()
	return []tool.Kind{mcp.KindWithProfiles(th, profiles), a2atool.Kind(th)}
}

func toolhostPath() string {
	if exe, err := os.Executable(); err == nil {
		p := filepath.Join(filepath.Dir(exe), "toolhost")
		if fi, err := os.Stat(p); err == nil && fi.Mode().IsRegular() {
			return p
		}
	}
	return "toolhost"
}
