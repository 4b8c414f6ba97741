// The official MCP TypeScript client (npm @modelcontextprotocol/client) with the official tasks
// extension package (@modelcontextprotocol/ext-tasks) runs a toolhost tool as a task (SEP-2663).
// Usage: node mcp_ts_task_client.mjs URL TOOL ARGUMENTS_JSON EXPECTED_JSON [ANSWER_JSON]   (NODE_PATH=PEER/node_modules)
// With ANSWER_JSON the client also declares form elicitation, and answers each elicitation the
// task asks mid-task (status input_required, through the package's onInputRequest and
// tasks/update) with it.
// ext-tasks needs a raw request path for 2026-07-28 task traffic (the SDK's codecs do not carry
// it): here a plain fetch of the same endpoint, with the 2026-07-28 framing the package adds.
// Prints one line per check and a closing "N passed, M failed" line; exits 1 on any failure.
import { check, finish } from "./checks.mjs";

const modules = process.env.NODE_PATH;
const { Client, StreamableHTTPClientTransport } = await import(`${modules}/@modelcontextprotocol/client/dist/index.mjs`);
const { createTaskSessionFromClient, resultFromTaskOutcome } = await import(`${modules}/@modelcontextprotocol/ext-tasks/dist/client/index.js`);

const [url, tool, argumentsJson, expectedJson, answerJson] = process.argv.slice(2);
const TASKS = "io.modelcontextprotocol/tasks";
const asked = [];
const capabilities = answerJson === undefined
  ? { extensions: { [TASKS]: {} } }
  : { extensions: { [TASKS]: {} }, elicitation: { form: {} } };
const VERSION = "2026-07-28";

let nextId = 1;

// The host's request coordinator: frames each request as JSON-RPC and posts it.
async function rawDispatch(request) {
  request = { jsonrpc: "2.0", id: nextId++, ...request };
  const params = request.params ?? {};
  const headers = {
    "content-type": "application/json",
    accept: "application/json, text/event-stream",
    "mcp-protocol-version": VERSION,
    "mcp-method": request.method,
  };
  const name = params.name ?? params.taskId;
  if (typeof name === "string") headers["mcp-name"] = name;
  const reply = await fetch(url, { method: "POST", headers, body: JSON.stringify(request) });
  return await reply.json();
}

const client = new Client(
  { name: "toolhost-peer-test", version: "1.0.0" },
  { capabilities, versionNegotiation: { mode: { pin: VERSION } } },
);
await client.connect(new StreamableHTTPClientTransport(new URL(url)));
const session = createTaskSessionFromClient(client, {
  endpointId: "toolhost",
  rawDispatch,
  v2RequestFraming: {
    protocolVersion: VERSION,
    clientInfo: { name: "toolhost-peer-test", version: "1.0.0" },
    clientCapabilities: capabilities,
  },
  ...(answerJson === undefined
    ? {}
    : {
        onInputRequest: async (request, context) => {
          asked.push({ kind: request.kind, message: request.params?.message, scope: context.scope });
          return JSON.parse(answerJson);
        },
      }),
});
try {
  const execution = await session.callTool(tool, JSON.parse(argumentsJson));
  check("the server made a task of the call", execution.kind === "task", execution.kind);
  const { outcome } = await execution.settle();
  check("the call ran as a task to its end", outcome !== undefined, outcome);
  const result = resultFromTaskOutcome(outcome);
  check("the result is the tool's output", JSON.stringify(result.structuredContent) === JSON.stringify(JSON.parse(expectedJson)), result);
  check("the result is not an error", !result.isError, result);
  if (answerJson !== undefined) {
    check("the task asked an elicitation mid-task, answered once", asked.length === 1 && asked[0].kind === "elicitation", asked);
  }
} finally {
  await session.close();
  await client.close();
}
finish();
