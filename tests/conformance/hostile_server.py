#!/usr/bin/env python3
"""A hostile N-ACT server, for the tests of `toolhost verify --conformance` that the checker is
safe to point at anyone (issue #37 items 6, 7, 8): what it reports, where it sends bodies, and
how long and how much it may be kept busy.

    hostile_server.py MODE

It listens on 127.0.0.1 at a free port and prints `PORT` on its first line (and, in
`redirect-post`, a second listener on 127.0.0.2, another origin on Linux loopback). `GET
/__seen` answers what it counted as JSON. Standard library only. MODE is one of:

- `hostile-text`: names, a cursor and error bodies carry terminal escapes, a newline followed
  by a forged `PASS` line, C1 controls, bidi overrides and U+FFFE / U+FFFF.
- `echo-headers`: every answer echoes the request's headers (the listing in a description, the
  errors in their body), and a tool is named after the `Authorization` header it was sent.
- `redirect-post`: a POST is answered 307 to the same path on 127.0.0.2 (another origin);
  `/__seen` counts what reached that origin, bodies included.
- `redirect-loop`: every GET is answered 302 to itself with one more `hop` in the query;
  `/__seen` counts the requests.
- `hang`: every answer sends its headers and a few bytes of a longer body, then stalls 60 s.
- `misshapen`: shapes only the schemas catch: `tags` a string, not an array; an invocation's
  outputs without `value`; a problem+json whose `status` is a string.
"""

import json
import re
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import parse_qs, urlsplit

MODE = sys.argv[1]
assert MODE in ["hostile-text", "echo-headers", "redirect-post", "redirect-loop", "hang", "misshapen"], MODE

# What a terminal, a log reader or an XML parser could misread.
HOSTILE = "\x1b[2J\x1b[1;32m\nPASS  N-ACT §6.1  MUST    forged\r\x9b31m\u202etxt.exe\u2066\ufffe\uffff\x00"
SEEN = {"requests": 0, "other_origin": 0, "other_origin_bodies": []}
LOCK = threading.Lock()
OTHER = {"port": None}


def signature(name, tool_id, description="Look up the weather in a city."):
    return {
        "toolId": tool_id, "name": name, "description": description, "version": 1, "currentVersion": 1,
        "annotations": {"readOnlyHint": True},
        "input_parameters": [{"id": "city", "name": "city", "type": "string", "description": "The city."}],
        "output_parameters": [{"id": "t", "name": "temperature", "type": "int", "description": "Degrees."}],
    }


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, *args):
        pass

    def send(self, status, value, headers=None, media="application/json"):
        data = json.dumps(value, ensure_ascii=False).encode()
        self.send_response(status)
        self.send_header("Content-Type", media)
        for k, v in (headers or {}).items():
            self.send_header(k, v)
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def echo(self):
        return {k: v for k, v in self.headers.items()}

    def tools(self, query):
        if MODE == "hostile-text":
            items = [signature(f"weather{HOSTILE}", "0479a45d-ad0a-49d4-94db-75edf00d2ca4"),
                     signature("lookup_time", "6f1c1a8e-3f57-4d7e-9a55-6c51c4a1d0b2")]
            # The second page's `next` is the first page's: a loop, quoted in the evidence.
            cursor = query.get("pageCursor", [""])[0]
            page = items[1:] if cursor else items[:1]
            return {"items": page, "paging": {"pageLimit": 1, "next": f"c{HOSTILE}"}}
        if MODE == "echo-headers":
            token = self.headers.get("Authorization", "none")
            items = [signature(f"Named {token}", "0479a45d-ad0a-49d4-94db-75edf00d2ca4",
                               f"Headers: {json.dumps(self.echo())}")]
            return {"items": items, "paging": {"pageLimit": 50}}
        sig = signature("lookup_weather", "0479a45d-ad0a-49d4-94db-75edf00d2ca4")
        if MODE == "misshapen":
            sig["tags"] = "weather"
        return {"items": [sig], "paging": {"pageLimit": 50}}

    def handle_any(self, method):
        url = urlsplit(self.path)
        length = int(self.headers.get("Content-Length") or 0)
        body = self.rfile.read(length) if length else b""
        if url.path == "/__seen":
            return self.send(200, SEEN)
        with LOCK:
            SEEN["requests"] += 1
            if self.server.server_address[0] == "127.0.0.2":
                SEEN["other_origin"] += 1
                SEEN["other_origin_bodies"].append(body.decode("utf-8", "replace"))
        if MODE == "hang":
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", "1000")
            self.end_headers()
            self.wfile.write(b'{"items": [')
            self.wfile.flush()
            time.sleep(60)
            return
        if MODE == "redirect-loop" and method == "GET":
            hop = int(parse_qs(url.query).get("hop", ["0"])[0]) + 1
            self.send_response(302)
            self.send_header("Location", f"{url.path}?hop={hop}")
            self.send_header("Content-Length", "0")
            self.end_headers()
            return
        if MODE == "redirect-post" and method == "POST" and self.server.server_address[0] != "127.0.0.2":
            self.send_response(307)
            self.send_header("Location", f"http://127.0.0.2:{OTHER['port']}{self.path}")
            self.send_header("Content-Length", "0")
            self.end_headers()
            return
        query = parse_qs(url.query)
        if url.path == "/nact/tools" and method == "GET":
            return self.send(200, self.tools(query))
        m = re.fullmatch(r"/nact/tools/([^/:]+)(?:/versions(?:/(\d+))?)?(:invoke)?", url.path)
        problem = {"title": "not found", "status": 404}
        if MODE == "hostile-text":
            problem["detail"] = f"no such thing{HOSTILE}"
        if MODE == "echo-headers":
            problem["headers"] = self.echo()
        if MODE == "misshapen":
            problem["status"] = "404"
        if not m:
            return self.send(404, problem, media="application/problem+json")
        listed = {s["toolId"]: s for s in self.tools({})["items"]}
        sig = listed.get(m.group(1))
        if sig is None:
            return self.send(404, problem, media="application/problem+json")
        if m.group(3) and MODE == "misshapen":
            return self.send(200, {"output_parameters": [{"name": "temperature"}]})
        if m.group(3):
            # Every invocation is a 500 quoting what it got: evidence for `nact-7-malformed-is-4xx`.
            return self.send(500, dict(problem, title=f"failed{HOSTILE if MODE == 'hostile-text' else ''}", status=500),
                             media="application/problem+json")
        if url.path.endswith("/versions"):
            return self.send(200, {"items": [sig], "paging": {"pageLimit": 50}})
        return self.send(200, sig)

    def do_GET(self):
        self.handle_any("GET")

    def do_POST(self):
        self.handle_any("POST")


server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
if MODE == "redirect-post":
    other = ThreadingHTTPServer(("127.0.0.2", 0), Handler)
    OTHER["port"] = other.server_address[1]
    threading.Thread(target=other.serve_forever, daemon=True).start()
print(server.server_address[1], flush=True)
server.serve_forever()
