"""Verifies webhook deliveries of agent-server by hand, with Python's
standard library alone, as docs/webhooks.md shows, for
tests/webhooks_test.go: the recipe written again, not agentcore's code.

stdin and stdout: as verify.mjs (a JSON object with secret, now and
messages; a JSON list of verdicts).
"""

import base64
import hashlib
import hmac
import json
import sys
import time

TOLERANCE = 5 * 60  # seconds


def verify(secret: str, headers: dict, body: bytes, now: float) -> dict:
    """Returns the payload of a genuine, fresh message; raises otherwise."""
    h = {k.lower(): v for k, v in headers.items()}
    msg_id, ts, sigs = h.get("webhook-id"), h.get("webhook-timestamp"), h.get("webhook-signature")
    if not (msg_id and ts and sigs):
        raise ValueError("missing webhook headers")
    if abs(now - int(ts)) > TOLERANCE:
        raise ValueError("timestamp out of tolerance: a replay?")
    key = base64.b64decode(secret.removeprefix("whsec_"))
    signed = msg_id.encode() + b"." + ts.encode() + b"." + body
    expected = base64.b64encode(hmac.new(key, signed, hashlib.sha256).digest()).decode()
    for sig in sigs.split(" "):
        version, _, value = sig.partition(",")
        if version == "v1" and hmac.compare_digest(value, expected):
            return json.loads(body)
    raise ValueError("no matching signature")


def main() -> None:
    req = json.load(sys.stdin)
    now = req.get("now") or time.time()
    verdicts = []
    for m in req["messages"]:
        try:
            verdicts.append({"ok": True, "payload": verify(req["secret"], m["headers"], m["body"].encode(), now)})
        except (ValueError, KeyError) as e:
            verdicts.append({"ok": False, "error": str(e)})
    json.dump(verdicts, sys.stdout)


if __name__ == "__main__":
    main()
