// Drives `lmsctl mcp` with the official MCP client SDK, as an agent's
// client does: argv is the server's command line; standard input is a
// JSON list of calls {tool, args}. A string argument "$N.path" stands for
// the value at path (dotted) of call N's structured answer. Standard
// output is {tools: [names], results: [{isError, structuredContent}]}.
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";

const chunks = [];
for await (const c of process.stdin) chunks.push(c);
const calls = JSON.parse(Buffer.concat(chunks).toString("utf8"));

const [command, ...args] = process.argv.slice(2);
const transport = new StdioClientTransport({ command, args, env: process.env, stderr: "inherit" });
const client = new Client({ name: "lms-test-agent", version: "1.0.0" });
await client.connect(transport);

const results = [];
const lookup = (n, path) =>
  path.split(".").reduce((v, k) => (v == null ? undefined : v[k]), results[n].structuredContent);
const resolve = (v) => {
  if (typeof v === "string") {
    const m = /^\$(\d+)\.(.+)$/.exec(v);
    return m ? lookup(Number(m[1]), m[2]) : v;
  }
  if (Array.isArray(v)) return v.map(resolve);
  if (v && typeof v === "object") return Object.fromEntries(Object.entries(v).map(([k, x]) => [k, resolve(x)]));
  return v;
};

const { tools } = await client.listTools();
for (const call of calls) {
  const res = await client.callTool({ name: call.tool, arguments: resolve(call.args) });
  results.push({ isError: res.isError === true, structuredContent: res.structuredContent });
}
await client.close();
process.stdout.write(JSON.stringify({ tools: tools.map((t) => t.name), results }));
