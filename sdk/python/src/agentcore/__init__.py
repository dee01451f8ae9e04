"""agentcore: Python SDKs for agentcore, the AI-agent engine served over gRPC.

- agentcore.client: the client of agent-server (Client, AsyncClient).
- agentcore.v1: the messages and enums of its API (v1.AgentConfig, v1.Event...).

Tool plugins are written with the agentcore_tool package.
"""
