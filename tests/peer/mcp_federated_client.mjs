// The official MCP TypeScript SDK (npm @modelcontextprotocol/sdk) as a client of a toolhost that
// federates the reference MCP servers (everything, memory, filesystem).
// Usage: node mcp_federated_client.mjs MCP_URL FILE_IN_THE_SERVED_FOLDER   (NODE_PATH=PEER/node_modules)
// Prints one line per check and a closing "N passed, M failed" line; exits 1 on any failure.
import { check, finish, require } from "./checks.mjs";
const { Client } = require("@modelcontextprotocol/sdk/client/index.js");
const { StreamableHTTPClientTransport } = require("@modelcontextprotocol/sdk/client/streamableHttp.js");

const [url, path] = process.argv.slice(2);
const client = new Client({ name: "toolhost-federation-test", version: "1.0.0" });
await client.connect(new StreamableHTTPClientTransport(new URL(url)));
const { tools } = await client.listTools();
const names = tools.map((t) => t.name);
check("tools of all three servers are listed", ["get_sum", "read_graph", "list_directory"].every((n) => names.includes(n)), names);

const sum = await client.callTool({ name: "get_sum", arguments: { a: 20, b: 22 } });
check("everything: get_sum", !sum.isError && JSON.stringify(sum.structuredContent).includes("42"), sum);
const weather = await client.callTool({ name: "get_structured_content", arguments: { location: "Chicago" } }); // as the upstream spells it on MCP (issue #38.2); N-ACT names it CHICAGO
check("everything: structured content maps to the outputs", !weather.isError && typeof weather.structuredContent?.temperature === "number", weather);

const made = await client.callTool({
  name: "create_entities",
  arguments: { entities: [{ name: "Alan", entityType: "person", observations: ["asked if machines can think"] }] },
});
check("memory: create_entities", !made.isError, made);
const graph = await client.callTool({ name: "read_graph", arguments: {} });
check("memory: read_graph has it", (graph.structuredContent?.entities ?? []).some((e) => e.name === "Alan"), graph);

const listing = await client.callTool({ name: "list_directory", arguments: { path: path.replace(/\/[^/]*$/, "") } });
check("filesystem: list_directory", !listing.isError && JSON.stringify(listing.structuredContent).includes("a.txt"), listing);

await client.close();
finish();
