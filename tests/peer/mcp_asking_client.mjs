// The official MCP TypeScript SDK client (npm @modelcontextprotocol/client 2.x) answering what
// toolhost's tools ask mid-call (docs/asking.md): a sculpted tool's `elicit`, `sample` and
// `roots` steps, and a federated MCP server's own elicitation and sampling, relayed by toolhost.
// Usage: node mcp_asking_client.mjs MCP_URL MODE   (NODE_PATH=PEER/node_modules)
// MODE is `2026-07-28` (input-required results, stateless server) or `legacy` (the requests
// within a session, a server started with --mcp-sessions).
// Prints one line per check and a closing "N passed, M failed" line; exits 1 on any failure.
import { check, finish, require } from "./checks.mjs";
const { Client, StreamableHTTPClientTransport } = require("@modelcontextprotocol/client");

const [url, mode] = process.argv.slice(2);
const asked = [];
const client = new Client(
  { name: "toolhost-asking-test", version: "1.0.0" },
  {
    capabilities: { elicitation: { form: {} }, sampling: {}, roots: {} },
    versionNegotiation: { mode: mode === "legacy" ? "legacy" : { pin: "2026-07-28" } },
  },
);
client.setRequestHandler("elicitation/create", async (request) => {
  const message = request.params.message;
  asked.push(["elicit", message]);
  return /colou?r/.test(message)
    ? { action: "accept", content: { color: "teal" } }
    : { action: "accept", content: { name: "Ada" } };
});
client.setRequestHandler("sampling/createMessage", async () => {
  asked.push(["sample", ""]);
  return { role: "assistant", content: { type: "text", text: "Good day" }, model: "peer-model", stopReason: "endTurn" };
});
client.setRequestHandler("roots/list", async () => {
  asked.push(["roots", ""]);
  return { roots: [{ uri: "file:///work/project", name: "project" }] };
});
await client.connect(new StreamableHTTPClientTransport(new URL(url)));
const text = (result) => (result.content ?? []).filter((c) => c.type === "text").map((c) => c.text).join(" ");

let result = await client.callTool({ name: "ask_twice", arguments: {} });
check("sculpted: both answers reach the result", !result.isError && text(result).includes("Ada likes teal"), result);
check("sculpted: each question was asked once", asked.map((a) => a[0]).join() === "elicit,elicit", asked);

asked.length = 0;
result = await client.callTool({ name: "ask_all", arguments: {} });
check("sculpted: the user, the model and the roots in one call", !result.isError && text(result).includes("Good day Ada") && text(result).includes("file:///work/project"), result);

asked.length = 0;
result = await client.callTool({ name: "greet_after_asking", arguments: {} });
check("federated: the upstream's own questions are relayed and answered", !result.isError && text(result).includes("Good day [Ada]"), result);
check("federated: the user and the model were asked", ["elicit", "sample"].every((k) => asked.some((a) => a[0] === k)), asked);
await client.close();
finish();
