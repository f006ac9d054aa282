// Reads {secret, messages: [{headers, body}]} on stdin and verifies each
// message with the standardwebhooks package, an implementation of the
// Standard Webhooks scheme independent of ours. Prints {verified, failures}.
const { Webhook } = require("standardwebhooks");

let input = "";
process.stdin.on("data", (chunk) => (input += chunk));
process.stdin.on("end", () => {
  const { secret, messages } = JSON.parse(input);
  const hook = new Webhook(secret);
  let verified = 0;
  const failures = [];
  for (const m of messages) {
    try {
      hook.verify(m.body, m.headers);
      verified++;
    } catch (e) {
      failures.push(`${m.headers["webhook-id"]}: ${e.message}`);
    }
  }
  process.stdout.write(JSON.stringify({ verified, failures }));
});
