// The official MCP TypeScript SDK (npm @modelcontextprotocol/sdk) as a client of toolhost,
// over HTTP and over stdio.
// Usage: node mcp_ts_client.mjs TOOLHOST_BINARY HTTP_URL   (run with NODE_PATH=PEER/node_modules)
// Prints one line per check and a closing "N passed, M failed" line; exits 1 on any failure.
import { check, finish, require } from "./checks.mjs";
const { Client } = require("@modelcontextprotocol/sdk/client/index.js");
const { StreamableHTTPClientTransport } = require("@modelcontextprotocol/sdk/client/streamableHttp.js");
const { StdioClientTransport } = require("@modelcontextprotocol/sdk/client/stdio.js");

async function exercise(label, transport) {
  const client = new Client({ name: "toolhost-peer-test", version: "1.0.0" });
  await client.connect(transport);
  const { tools } = await client.listTools();
  const names = tools.map((t) => t.name);
  check(`${label}: tools/list has the bundled tools`, names.includes("add_numbers") && names.includes("convert_length"), names);
  const convert = tools.find((t) => t.name === "convert_length");
  check(`${label}: _meta carries toolkit and version`, convert._meta?.["toolhost/toolkit"] === "Units" && convert._meta?.["toolhost/version"] === "1.2.0", convert._meta);

  const ok = await client.callTool({ name: "add_numbers", arguments: { a: 2, b: 40 } });
  check(`${label}: call succeeds`, !ok.isError && ok.structuredContent?.sum === 42, ok);

  const pinned = await client.callTool({
    name: "convert_length",
    arguments: { value: 1, from: "KILOMETRE", to: "METRE" },
    _meta: { "toolhost/version": "1.0.0" },
  });
  check(`${label}: _meta toolhost/version pins 1.0.0`, !pinned.isError && pinned.structuredContent?.value === 1000, pinned);
  // 1.2.0 added the yard: a call pinned to 1.0.0 does not know it.
  const major = await client.callTool({
    name: "convert_length",
    arguments: { value: 1, from: "METRE", to: "YARD" },
    _meta: { "toolhost/version": "1" },
  });
  check(`${label}: _meta toolhost/version "1" pins 1.0.0, as OTC's @1 does (no YARD there)`, major.isError === true, major);
  const zero = await client.callTool({
    name: "convert_length",
    arguments: { value: 1, from: "KILOMETRE", to: "METRE" },
    _meta: { "toolhost/version": "01.0.0" },
  });
  check(`${label}: a version with a leading zero is refused with what a version looks like`, zero.isError === true && (zero.content?.[0]?.text ?? "").includes("leading zeros"), zero);
  const latest = await client.callTool({ name: "convert_length", arguments: { value: 1, from: "METRE", to: "YARD" } });
  check(`${label}: the latest version has the yard`, !latest.isError && latest.structuredContent?.value > 1.09 && latest.structuredContent?.value < 1.1, latest);

  const bad = await client.callTool({ name: "convert_length", arguments: { value: 1, from: "PARSEC" } });
  const text = bad.content?.[0]?.text ?? "";
  check(`${label}: bad arguments are an isError result naming the parameters`, bad.isError === true && text.includes("`from` expects one of") && text.includes("`to` is required"), bad);

  let rejected = false;
  try {
    await client.callTool({ name: "no_such_tool", arguments: {} });
  } catch (error) {
    rejected = String(error).includes("no_such_tool");
  }
  check(`${label}: an unknown tool is a JSON-RPC error`, rejected, "no error");
  // Resources (issue #39.5): each tool's definition; a missing one is -32602 with data.uri.
  const { resources } = await client.listResources();
  check(`${label}: resources/list has each tool's definition`, resources.some((r) => r.uri === "toolhost://tools/add_numbers"), resources.map((r) => r.uri));
  const read = await client.readResource({ uri: "toolhost://tools/add_numbers" });
  check(`${label}: a tool's resource is its MCP definition`, JSON.parse(read.contents[0].text).name === "add_numbers", read);
  let missing;
  try {
    await client.readResource({ uri: "toolhost://tools/no_such_tool" });
  } catch (error) {
    missing = error;
  }
  check(`${label}: a missing resource is -32602 with its uri`, missing?.code === -32602 && missing?.data?.uri === "toolhost://tools/no_such_tool", missing);
  await client.close();
}

const [binary, url] = process.argv.slice(2);
await exercise("http", new StreamableHTTPClientTransport(new URL(url)));
await exercise("stdio", new StdioClientTransport({ command: binary, args: ["serve", "--stdio", "--log", "warn"], stderr: "ignore" }));
finish();
