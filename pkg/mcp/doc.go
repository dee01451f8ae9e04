// Package mcp bridges an MCP server's tools, prompts and resources into tools
// of the plugin protocol (proto/agentcore/plugin/v1), as agent-core's
// Agent.tool.mcp does. toolhost uses it to serve one MCP server as a plugin,
// so MCP tools get the same process isolation as every other tool.
//
// A server is declared by a file in a tool directory, NAME.mcp.json or
// NAME.mcp.yaml (.yml), holding only data:
//
//	{
//	  "transport": {"type": "stdio", "command": "node", "args": ["server.js"], "env": {"TOKEN": "…"}, "cwd": "."},
//	  "prefix": "web_",
//	  "discoveryTimeout": "30s",
//	  "callTimeout": "2m",
//	  "reuse": false
//	}
//
// The transport is stdio {command, args, env, cwd}, http (streamable HTTP)
// {url, headers} or sse {url, headers}. A relative command (one with a slash)
// or cwd is resolved against the file's folder, which is also the default
// cwd; a bare command is looked up in PATH. A stdio server inherits only HOME,
// LOGNAME, PATH, SHELL, TERM and USER, plus env, as with the TypeScript MCP
// SDK that agent-core uses. discoveryTimeout (default 60s) bounds connecting and listing;
// callTimeout becomes every tool's declared timeout, which the plugin host
// enforces.
//
// A [Bridge] discovers and calls one server; a [Service] serves a Bridge as
// the plugin protocol's ToolPluginService, which is all a plugin process
// (toolhost) needs to offer the server's tools to the host. [Kind] makes a
// tool.Host find definitions in a scan and start `toolhost mcp-serve FILE`
// for each, so MCP tools are plugin tools: pooled, killed and merged (later
// tool sets win by name) like any other.
//
// Mapping: each server tool becomes a tool (schema and description as given,
// prefix applied; characters a tool name may not hold become _, and names
// are cut to 64 bytes; two that end up equal fail discovery); each prompt a tool taking its arguments as strings and
// returning its messages as text led by "user:" / "assistant:"; resources one
// read_resource tool taking a uri, its description listing the resources and
// URI templates. Prompts and resources are asked for only when the server
// declares them. Results: text, images, audio and embedded resources become
// content parts, structured content JSON, isError an error result, progress
// notifications output chunks of the running call.
//
// Every discovery and every call opens its own connection and closes it at
// the end: no MCP session is shared between calls. With "reuse": true the
// Bridge keeps one connection between calls (pinging it first and
// reconnecting when the server has gone), which saves starting a stdio server
// per call. Cancelling a call closes its connection at once; a stdio server
// is killed, and dies with the process that started it (parent-death signal,
// same process group).
package mcp
