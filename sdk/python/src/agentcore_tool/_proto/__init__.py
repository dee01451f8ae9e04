"""Generated code of proto/agentcore/plugin/v1/plugin.proto: `make sdk-proto` regenerates it."""
