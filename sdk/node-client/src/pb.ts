// The messages, enums and service of agentcore's API, generated from
// proto/agentcore/v1 by protoc-gen-es (src/gen, make proto): import { pb }
// from "@agentcore/client", then pb.Event, pb.AgentConfigSchema, pb.RunState…
export * from "./gen/agentcore/v1/agent_service_pb";
export * from "./gen/agentcore/v1/config_pb";
export * from "./gen/agentcore/v1/errors_pb";
export * from "./gen/agentcore/v1/event_pb";
export * from "./gen/agentcore/v1/message_pb";
export * from "./gen/agentcore/v1/run_pb";
export * from "./gen/google/rpc/error_details_pb";
