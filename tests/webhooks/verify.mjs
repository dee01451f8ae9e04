// Verifies webhook deliveries of agent-server with the Standard Webhooks
// reference library for TypeScript (standardwebhooks on npm), for
// tests/webhooks_test.go: an implementation of the recipe that is not
// agentcore's.
//
// stdin: {"secret": "whsec_…", "now": Unix seconds (0: the clock's),
//         "messages": [{"headers": {"webhook-id": …, …}, "body": "…"}]}
// stdout: one verdict per message, in order:
//         [{"ok": true, "payload": {…}} or {"ok": false, "error": "…"}]
import { Webhook } from "standardwebhooks";

let input = "";
for await (const chunk of process.stdin) input += chunk;
const { secret, now, messages } = JSON.parse(input);
if (now) Date.now = () => now * 1000; // to check that an old message is refused
const wh = new Webhook(secret);
const verdicts = messages.map(({ headers, body }) => {
  try {
    return { ok: true, payload: wh.verify(body, headers) };
  } catch (e) {
    return { ok: false, error: String(e.message) };
  }
});
process.stdout.write(JSON.stringify(verdicts));
