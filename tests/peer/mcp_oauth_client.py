"""The official MCP Python SDK's OAuth client (`mcp.client.auth.OAuthClientProvider`) against a
toolhost that requires JWTs from a real authorization server (tests/peer/oauth_server.py): the
SDK finds the authorization server from toolhost's 401 and protected-resource metadata,
registers, runs authorization code + PKCE with a resource indicator, and calls tools with the
token. Then a token minted for another resource, and one that expires mid-session, are refused.

Usage: mcp_oauth_client.py MCP_URL AUTHORIZATION_SERVER_URL
Prints one line per check and a closing "N passed, M failed" line; exits 1 on any failure.
"""

import sys
from urllib.parse import parse_qs, urlparse

import anyio
import httpx2
import jwt
from checks import check, finish
from mcp import Client
from mcp.client.auth import OAuthClientProvider, TokenStorage
from mcp.client.streamable_http import streamable_http_client
from mcp.shared.auth import AuthorizationCodeResult, OAuthClientMetadata


class Memory(TokenStorage):
    def __init__(self):
        self.tokens = None
        self.client = None

    async def get_tokens(self):
        return self.tokens

    async def set_tokens(self, tokens):
        self.tokens = tokens

    async def get_client_info(self):
        return self.client

    async def set_client_info(self, client_info):
        self.client = client_info


async def main(url, issuer):
    storage = Memory()
    redirected = {}

    async def redirect_handler(authorization_url):
        # The user's browser: the server grants at once and redirects with the code.
        async with httpx2.AsyncClient() as browser:
            answer = await browser.get(authorization_url, follow_redirects=False)
        query = parse_qs(urlparse(answer.headers["location"]).query)
        redirected["code"], redirected["state"] = query["code"][0], query.get("state", [None])[0]
        redirected["resource"] = parse_qs(urlparse(authorization_url).query).get("resource", [None])[0]

    async def callback_handler():
        return AuthorizationCodeResult(code=redirected["code"], state=redirected["state"])

    provider = OAuthClientProvider(
        server_url=url,
        client_metadata=OAuthClientMetadata(
            client_name="toolhost-oauth-test",
            redirect_uris=["http://127.0.0.1:9/callback"],
            grant_types=["authorization_code"],
            response_types=["code"],
        ),
        storage=storage,
        redirect_handler=redirect_handler,
        callback_handler=callback_handler,
    )
    async with httpx2.AsyncClient(auth=provider) as http:
        async with Client(streamable_http_client(url, http_client=http)) as client:
            tools = {t.name for t in (await client.list_tools()).tools}
            check("the SDK's OAuth flow ends in a session that lists the tools", "add_numbers" in tools, tools)
            result = await client.call_tool("add_numbers", {"a": 2, "b": 40})
            check("and calls them", not result.is_error and result.structured_content == {"sum": 42.0}, result)
    check("the authorization request named toolhost's MCP URL as the resource (RFC 8707)", redirected.get("resource") == url, redirected)
    claims = jwt.decode(storage.tokens.access_token, options={"verify_signature": False}) if storage.tokens else {}
    check("the token is for that resource", claims.get("aud") == url and claims.get("iss") == issuer, claims)

    raw = {"accept": "application/json, text/event-stream", "mcp-protocol-version": "2025-06-18"}
    listing = {"jsonrpc": "2.0", "id": 1, "method": "tools/list", "params": {}}
    async with httpx2.AsyncClient() as http:
        other = (await http.get(f"{issuer}mint", params={"resource": "http://127.0.0.1:9/mcp"})).json()["access_token"]
        refused = await http.post(url, json=listing, headers={**raw, "authorization": f"Bearer {other}"})
        check(
            "a token minted for another resource is refused",
            refused.status_code == 401 and "invalid_token" in refused.headers.get("www-authenticate", ""),
            (refused.status_code, refused.headers.get("www-authenticate")),
        )
        # toolhost tolerates 30 s of clock skew on `exp`: a token that expired 28 s ago still
        # works, and 4 s later it no longer does.
        short = (await http.get(f"{issuer}mint", params={"resource": url, "ttl": "-28"})).json()["access_token"]
        first = await http.post(url, json=listing, headers={**raw, "authorization": f"Bearer {short}"})
        check("a token at the end of its life works while it lasts", first.status_code == 200, first.status_code)
        await anyio.sleep(4)
        later = await http.post(url, json=listing, headers={**raw, "authorization": f"Bearer {short}"})
        check(
            "and is refused once it has expired, mid-session",
            later.status_code == 401 and "expired" in later.text + later.headers.get("www-authenticate", ""),
            (later.status_code, later.text[:200]),
        )
    finish()


if __name__ == "__main__":
    anyio.run(main, sys.argv[1], sys.argv[2])
