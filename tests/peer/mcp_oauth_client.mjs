// The official MCP TypeScript SDK's OAuth client (an `OAuthClientProvider` on the streamable
// HTTP transport) against a toolhost that requires JWTs from a real authorization server
// (tests/peer/oauth_server.py): discovery from toolhost's 401 and protected-resource metadata,
// registration, authorization code + PKCE with a resource indicator, then calls.
// Usage: node mcp_oauth_client.mjs MCP_URL AUTHORIZATION_SERVER_URL   (NODE_PATH=PEER/node_modules)
// Prints one line per check and a closing "N passed, M failed" line; exits 1 on any failure.
import { check, finish, require } from "./checks.mjs";
const { Client } = require("@modelcontextprotocol/sdk/client/index.js");
const { StreamableHTTPClientTransport } = require("@modelcontextprotocol/sdk/client/streamableHttp.js");
const { UnauthorizedError } = require("@modelcontextprotocol/sdk/client/auth.js");

const [url, issuer] = process.argv.slice(2);
const seen = {};
const provider = {
  get redirectUrl() {
    return "http://127.0.0.1:9/callback";
  },
  get clientMetadata() {
    return {
      client_name: "toolhost-oauth-test-ts",
      redirect_uris: ["http://127.0.0.1:9/callback"],
      grant_types: ["authorization_code"],
      response_types: ["code"],
    };
  },
  clientInformation: () => seen.client,
  saveClientInformation: (client) => (seen.client = client),
  tokens: () => seen.tokens,
  saveTokens: (tokens) => (seen.tokens = tokens),
  saveCodeVerifier: (verifier) => (seen.verifier = verifier),
  codeVerifier: () => seen.verifier,
  // The user's browser: the server grants at once and redirects with the code.
  async redirectToAuthorization(authorizationUrl) {
    seen.resource = authorizationUrl.searchParams.get("resource");
    const answer = await fetch(authorizationUrl, { redirect: "manual" });
    seen.code = new URL(answer.headers.get("location")).searchParams.get("code");
  },
};

const client = new Client({ name: "toolhost-oauth-test-ts", version: "1.0.0" });
let transport = new StreamableHTTPClientTransport(new URL(url), { authProvider: provider });
try {
  await client.connect(transport);
} catch (error) {
  if (!(error instanceof UnauthorizedError)) throw error;
  await transport.finishAuth(seen.code);
  transport = new StreamableHTTPClientTransport(new URL(url), { authProvider: provider });
  await client.connect(transport);
}
const { tools } = await client.listTools();
check("the SDK's OAuth flow ends in a session that lists the tools", tools.some((t) => t.name === "add_numbers"), tools.map((t) => t.name));
const sum = await client.callTool({ name: "add_numbers", arguments: { a: 2, b: 40 } });
check("and calls them", !sum.isError && sum.structuredContent?.sum === 42, sum);
check("the authorization request named toolhost's MCP URL as the resource (RFC 8707)", seen.resource === url, seen.resource);
const claims = JSON.parse(Buffer.from(seen.tokens.access_token.split(".")[1], "base64url").toString());
check("the token is for that resource, from that issuer", claims.aud === url && claims.iss === issuer, claims);
await client.close();
finish();
