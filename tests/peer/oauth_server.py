"""A real OAuth 2.1 authorization server for toolhost's MCP authorization tests (issue #15),
built on the official MCP Python SDK's authorization-server routes (`mcp.server.auth`):
metadata (RFC 8414), dynamic client registration (RFC 7591), authorization code with PKCE,
resource indicators (RFC 8707). It issues RS256 JWT access tokens whose `aud` is the resource
the client asked for, and publishes its key at /jwks, so a resource server (toolhost) verifies
them itself. Consent is automatic: every authorization is granted to user SUBJECT.

For the tests there is also GET /mint?resource=R&sub=S&ttl=SECONDS: a token as the token
endpoint would issue it, for a chosen audience or lifetime (a token for another resource, one
that expires in a second).

Usage: oauth_server.py PORT [SUBJECT]
"""

import base64
import secrets
import sys
import time

import jwt
import uvicorn
from cryptography.hazmat.primitives.asymmetric import rsa
from mcp.server.auth.provider import AccessToken, AuthorizationCode, AuthorizationParams, construct_redirect_uri
from mcp.server.auth.routes import create_auth_routes
from mcp.server.auth.settings import ClientRegistrationOptions
from mcp.shared.auth import OAuthClientInformationFull, OAuthToken
from pydantic import AnyHttpUrl
from starlette.applications import Starlette
from starlette.responses import JSONResponse
from starlette.routing import Route

PORT = int(sys.argv[1])
SUBJECT = sys.argv[2] if len(sys.argv) > 2 else "alice"
ISSUER = f"http://127.0.0.1:{PORT}"
# The issuer identifier as the metadata spells it (a URL with its `/`), and as `iss` says it.
ISSUER_ID = str(AnyHttpUrl(ISSUER))
KEY = rsa.generate_private_key(public_exponent=65537, key_size=2048)
KID = "test-key-1"


def b64(number: int) -> str:
    raw = number.to_bytes((number.bit_length() + 7) // 8, "big")
    return base64.urlsafe_b64encode(raw).rstrip(b"=").decode()


def mint(resource: str | None, subject: str, client_id: str, scopes: list[str], ttl: int) -> str:
    now = int(time.time())
    claims = {"iss": ISSUER_ID, "sub": subject, "client_id": client_id, "iat": now, "exp": now + ttl}
    if resource:
        claims["aud"] = resource
    if scopes:
        claims["scope"] = " ".join(scopes)
    return jwt.encode(claims, KEY, algorithm="RS256", headers={"kid": KID})


class Provider:
    """In-memory clients and codes; tokens are self-contained JWTs."""

    def __init__(self):
        self.clients: dict[str, OAuthClientInformationFull] = {}
        self.codes: dict[str, AuthorizationCode] = {}

    async def get_client(self, client_id):
        return self.clients.get(client_id)

    async def register_client(self, client_info):
        self.clients[client_info.client_id] = client_info

    async def authorize(self, client, params: AuthorizationParams) -> str:
        code = secrets.token_urlsafe(24)
        self.codes[code] = AuthorizationCode(
            code=code,
            scopes=params.scopes or [],
            expires_at=time.time() + 300,
            client_id=client.client_id,
            code_challenge=params.code_challenge,
            redirect_uri=params.redirect_uri,
            redirect_uri_provided_explicitly=params.redirect_uri_provided_explicitly,
            resource=params.resource,
            subject=SUBJECT,
        )
        return construct_redirect_uri(str(params.redirect_uri), code=code, state=params.state)

    async def load_authorization_code(self, client, authorization_code):
        return self.codes.get(authorization_code)

    async def exchange_authorization_code(self, client, authorization_code) -> OAuthToken:
        self.codes.pop(authorization_code.code, None)
        token = mint(authorization_code.resource, SUBJECT, client.client_id, authorization_code.scopes, 600)
        return OAuthToken(access_token=token, token_type="Bearer", expires_in=600)

    async def load_refresh_token(self, client, refresh_token):
        return None

    async def exchange_refresh_token(self, client, refresh_token, scopes):
        raise NotImplementedError

    async def load_access_token(self, token):
        try:
            claims = jwt.decode(token, KEY.public_key(), algorithms=["RS256"], options={"verify_aud": False})
        except jwt.PyJWTError:
            return None
        return AccessToken(token=token, client_id=claims.get("client_id", ""), scopes=[], expires_at=claims["exp"])

    async def revoke_token(self, token):
        return None


async def jwks(_request):
    numbers = KEY.public_key().public_numbers()
    return JSONResponse({"keys": [{"kty": "RSA", "kid": KID, "use": "sig", "alg": "RS256", "n": b64(numbers.n), "e": b64(numbers.e)}]})


async def mint_route(request):
    query = request.query_params
    token = mint(query.get("resource"), query.get("sub", SUBJECT), "test", [], int(query.get("ttl", "600")))
    return JSONResponse({"access_token": token})


routes = create_auth_routes(
    Provider(),
    issuer_url=AnyHttpUrl(ISSUER),
    client_registration_options=ClientRegistrationOptions(enabled=True),
)
routes += [Route("/jwks", jwks), Route("/mint", mint_route)]
uvicorn.run(Starlette(routes=routes), host="127.0.0.1", port=PORT, log_level="warning")
