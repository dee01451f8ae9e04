"""Finding an interpreter that has grpcio and protobuf.

A plugin script starts with ``#!/usr/bin/env python3``. Where that python3
lacks grpcio or protobuf (a pyenv or venv interpreter on a machine whose
packages come from Debian: python3-grpcio, python3-protobuf), a plugin
started by a host runs itself again, once, with $AGENTCORE_PYTHON or else
/usr/bin/python3, so that the same script works in both set-ups.
"""

from __future__ import annotations

import os
import sys

_REEXEC_MARK = "AGENTCORE_PYTHON_REEXEC"
_COOKIE = ("AGENTCORE_TOOL_PLUGIN", "tool-plugin-v1")


def ensure_runtime() -> None:
    try:
        import grpc  # noqa: F401
        import google.protobuf  # noqa: F401
        return
    except ImportError as e:
        missing = e
    if os.environ.get(_COOKIE[0]) == _COOKIE[1] and not os.environ.get(_REEXEC_MARK) and sys.argv and sys.argv[0]:
        here = os.path.realpath(sys.executable or "")
        for cand in (os.environ.get("AGENTCORE_PYTHON"), "/usr/bin/python3"):
            if cand and os.access(cand, os.X_OK) and os.path.realpath(cand) != here:
                os.environ[_REEXEC_MARK] = "1"
                os.execv(cand, [cand] + sys.argv)
    raise ImportError(
        f"agentcore_tool needs grpcio and protobuf, which {sys.executable} cannot import ({missing}). "
        "Install them (Debian: apt-get install python3-grpcio python3-protobuf; elsewhere: "
        "pip install grpcio protobuf) or set AGENTCORE_PYTHON to an interpreter that has them."
    ) from missing
