"""An N-ACT server written from draft-rosenberg-aiproto-nact-00 alone (not from toolhost).

The platform root is `/api`, so the enumeration endpoint is `/api/tools` (section 5.2 step 2).
Signatures are Figure 2 (`Lookup Weather`) and Figure 3 (`Flight Class` in `Book Flight`) as
drawn: names with spaces, `version`/`currentVersion` as quoted strings, `type` left out where
the draft allows it. The listing has two pages; the last page's `next` is `""` (or `null` with
`--last-next null`). The first invocation of each tool answers 503 (section 7: "5xx for
temporary failures"), as a plain RFC 9457 problem.

Usage: python3 nact_server.py [--last-next empty|null]. Listens on 127.0.0.1 on a free port,
prints `PORT <n>` on stdout, and exits when stdin closes. `GET /_test/calls` (not N-ACT) says
how many invocations each tool received, for tests.
"""

import sys
import threading
from urllib.parse import parse_qs, unquote, urlsplit

from spec_http import JsonHandler, run

LAST_NEXT = None if "null" in sys.argv[1:] else ""

# Figure 2, with its placeholders filled in.
WEATHER = {
    "toolId": "0479a45d-ad0a-49d4-94db-75edf00d2ca4",
    "name": "Lookup Weather",
    "description": "Invoke this tool to lookup the weather for a given city.",
    "img": "https://api.example.com/img/weather.png",
    "version": "1",
    "currentVersion": "1",
    "tags": ["system", "retrievals"],
    "input_parameters": [
        {
            "id": "city",
            "name": "City",
            "type": "string",
            "description": "The city for the weather lookup. For example, Boston or Los Angeles.",
            "required": True,
        }
    ],
    "output_parameters": [
        {
            "id": "temp-fh",
            "name": "Temperature in Fahrenheit",
            "type": "int",
            "description": "The current temperature in the named city.",
        }
    ],
}

# Figure 3's enum input, in a tool of its own (the `allowed-values` braces typo left out).
FLIGHT = {
    "toolId": "5b0e5c3a-3f3e-4f59-9c1c-2f5e8d1a7b21",
    "name": "Book Flight",
    "description": "Invoke this tool to book a flight to a city in a cabin class.",
    "version": "1",
    "currentVersion": "1",
    "tags": ["travel"],
    "input_parameters": [
        {"id": "destination", "name": "Destination", "description": "The city to fly to."},
        {
            "id": "flight_class",
            "name": "Flight Class",
            "type": "enum",
            "description": "The cabin class for the flight reservation",
            "allowed-values": [
                {"name": "ECONOMY", "description": "Economy class, the least expensive cabin class. Also known as coach."},
                {"name": "PREMIUM_ECONOMY", "description": "Premium economy class, the second seat tier. More legroom."},
                {"name": "BUSINESS", "description": "Business class, the next to top seat tier. Offers lie-down seating."},
                {"name": "FIRST", "description": "The top tier. Lie down seating, luxury meal service, lounge access."},
            ],
            "required": True,
        },
    ],
    "output_parameters": [
        {"id": "booking", "name": "Booking", "type": "json", "description": "The booking made."}
    ],
}

TOOLS = [WEATHER, FLIGHT]
CALLS = {}
LOCK = threading.Lock()


def find(tool_id):
    return next((t for t in TOOLS if tool_id in (t["toolId"], t["name"])), None)


def outputs(tool, inputs):
    if tool is WEATHER:
        return [{"name": "Temperature in Fahrenheit", "value": 80}]
    return [{"name": "Booking", "value": {"to": inputs.get("Destination"), "class": inputs.get("Flight Class")}}]


class Handler(JsonHandler):
    def problem(self, status, title, detail):
        self.send(status, {"type": "about:blank", "title": title, "status": status, "detail": detail},
                  "application/problem+json")

    def page(self, items, query):
        # Section 6.4: one item per page here, so the cursor is followed.
        start = int(query.get("pageCursor", ["0"])[0] or "0")
        chunk = items[start:start + 1]
        more = start + 1 < len(items)
        self.send(200, {"items": chunk, "paging": {"pageLimit": 1, "next": str(start + 1) if more else LAST_NEXT}})

    def do_GET(self):
        url = urlsplit(self.path)
        query = parse_qs(url.query)
        parts = [unquote(p) for p in url.path.split("/") if p]
        if parts == ["_test", "calls"]:
            with LOCK:
                return self.send(200, dict(CALLS))
        if parts[:2] != ["api", "tools"]:
            return self.problem(404, "Not Found", "no such resource")
        rest = parts[2:]
        if not rest:
            return self.page(TOOLS, query)
        tool = find(rest[0])
        if tool is None:
            return self.problem(404, "Not Found", "no such tool")
        if len(rest) == 1:
            return self.send(200, tool)
        if rest[1:] == ["versions"]:
            return self.page([tool], query)
        if len(rest) == 3 and rest[1] == "versions" and rest[2] == "1":
            return self.send(200, tool)
        return self.problem(404, "Not Found", "no such version")

    def do_POST(self):
        path = unquote(urlsplit(self.path).path)
        if not path.startswith("/api/tools/") or not path.endswith(":invoke"):
            return self.problem(404, "Not Found", "no such resource")
        rest = path[len("/api/tools/"):-len(":invoke")].split("/")
        tool = find(rest[0])
        if tool is None or (len(rest) > 1 and rest[1:] != ["versions", "1"]):
            return self.problem(404, "Not Found", "no such tool or version")
        try:
            body = self.body()
            inputs = {p["name"]: p["value"] for p in body.get("input_parameters", [])}
        except (ValueError, KeyError, TypeError, AttributeError):
            return self.problem(400, "Bad Request", "the invocation object is not JSON as section 7 shows")
        if body.get("name") != tool["name"]:
            return self.problem(400, "Bad Request", "the invocation object must name the tool")
        for p in tool["input_parameters"]:
            if p.get("required", True) and p["name"] not in inputs:
                return self.problem(400, "Bad Request", f"missing input `{p['name']}`")
        with LOCK:
            CALLS[tool["name"]] = CALLS.get(tool["name"], 0) + 1
            first = CALLS[tool["name"]] == 1
        if first:
            return self.problem(503, "Service Unavailable", "the weather service is warming up; try again")
        self.send(200, {"output_parameters": outputs(tool, inputs)})


if __name__ == "__main__":
    run(Handler)
