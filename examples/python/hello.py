#!/usr/bin/env python3
"""The five-minute task from Python: an agent greets Ming with the say_hello
tool, asking before the tool runs.

    pip install sdk/python          # once; offline: grpcio and protobuf come from the system
    python3 examples/python/hello.py [address] [task]

It creates an agent, sends the task, prints the model's text as it streams
and each tool call with its result, answers the permission request (on the
terminal with --ask, else allowing it), prints the result and the history,
and deletes the agent. Environment: AGENTCORE_ADDR (default
127.0.0.1:50051, or unix:/path/agent.sock), AGENTCORE_AUTH_TOKEN (when the
server wants a bearer token), AGENTCORE_SYSTEM (the agent's system prompt).
"""

from __future__ import annotations

import argparse
import os
import sys

from agentcore import v1
from agentcore.client import AgentcoreError, Callbacks, Client, Decision, allow, deny, output_text


def main() -> int:
    ap = argparse.ArgumentParser(description="Send agentcore a task and answer its permission requests.")
    ap.add_argument("address", nargs="?", default=os.environ.get("AGENTCORE_ADDR", "127.0.0.1:50051"))
    ap.add_argument("task", nargs="?", default="Say hello to Ming.")
    ap.add_argument("--ask", action="store_true", help="ask on the terminal before each tool call")
    args = ap.parse_args()

    def permission(req: v1.PermissionRequestEvent) -> Decision:
        if args.ask:
            answer = input(f"\nallow {req.tool_name} {req.arguments}? [y/N] ")
            decision = allow() if answer.strip().lower() == "y" else deny("the user said no")
        else:
            decision = allow()
        print(f"\n  permission asked: {req.tool_name} {req.arguments} -> {'allow' if decision.allow else 'deny'}")
        return decision

    callbacks = Callbacks(
        on_start=lambda run_id: print(f"[run started] {run_id}"),
        on_text=lambda text: print(text, end="", flush=True),
        on_permission=permission,
        on_tool_call=lambda e: print(f"  -> {e.tool_name} {e.arguments}"),
        on_tool_output=lambda e: print(f"     | {e.data}", end=""),
        on_tool_result=lambda e: print(f"  <- {e.tool_name} = {output_text(e.output)}{' (error)' if e.error else ''}"),
        on_retry=lambda e: print(f"  (retrying the model: {e.message})"),
    )
    system = os.environ.get("AGENTCORE_SYSTEM", "Use the tools to do the task.")
    with Client(args.address, token=os.environ.get("AGENTCORE_AUTH_TOKEN") or None) as client:
        agent = client.create_agent(config=v1.AgentConfig(system=system))
        try:
            res = agent.send(args.task, callbacks)
            print(f"\nresult: reason={res.reason_name} steps={res.steps} text={res.text!r}")
            print("history:\n" + agent.render())
        except AgentcoreError as e:
            print(f"\nthe send failed: {e} (reason {e.reason or '-'}, kind {e.kind or '-'})", file=sys.stderr)
            return 1
        finally:
            agent.delete()  # the server keeps agents (and their history) until deleted
    return 0


if __name__ == "__main__":
    sys.exit(main())
