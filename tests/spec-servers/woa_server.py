"""A Web of Agents host written from draft-gaikwad-woa-00 alone (not from toolhost): it serves
Appendix B's document at `/.well-known/woa.json` (agent `summarizer`, "Summarizes English
text.", with one operation `default`) and its REST invocation at `/agents/{agent_id}/invoke`.

The draft's host is https://api.example.com; this one is plain http on 127.0.0.1 (a test can
hold no public certificate), so `base` is its own loopback origin. The invocation checks the
envelope as section 5 says (agent matches or is absent, operation absent or `default`, `text`
required) and answers the summary, the first `max_words` words.

Usage: python3 woa_server.py. Listens on 127.0.0.1 on a free port, prints `PORT <n>`, exits
when stdin closes.
"""

from spec_http import JsonHandler, run


def document(base):
    return {
        "woa_version": "1",
        "agents": [{
            "id": "summarizer",
            "name": "Document Summarizer",
            "description": "Summarizes English text.",
            "version": "1.0.0",
            "capabilities": ["https://example.com/capability/summarization"],
            "inputs": {
                "$schema": "https://json-schema.org/draft/2020-12/schema",
                "type": "object",
                "properties": {
                    "text": {"type": "string", "description": "Input document text in English."},
                    "max_words": {"type": "integer", "minimum": 10, "maximum": 500,
                                  "description": "Maximum number of words in the summary."},
                },
                "required": ["text"],
            },
            "outputs": {
                "$schema": "https://json-schema.org/draft/2020-12/schema",
                "type": "object",
                "properties": {"summary": {"type": "string", "description": "The generated summary."}},
                "required": ["summary"],
            },
            "transports": ["rest"],
            "operations": [{"name": "default", "description": "Default summarization operation."}],
        }],
        "transports": {"rest": {"base": base, "invoke_path": "/agents/{agent_id}/invoke"}},
    }


class Handler(JsonHandler):
    def problem(self, status, detail):
        self.send(status, {"type": "about:blank", "title": "Bad Request", "status": status, "detail": detail},
                  "application/problem+json")

    def do_GET(self):
        if self.path != "/.well-known/woa.json":
            return self.problem(404, "no such resource")
        base = f"http://127.0.0.1:{self.server.server_address[1]}"
        self.send(200, document(base), "application/woa+json",
                  [("ETag", '"abc123"'), ("Cache-Control", "max-age=300")])

    def do_POST(self):
        if self.path != "/agents/summarizer/invoke":
            return self.problem(404, "no such agent")
        try:
            envelope = self.body()
            given = envelope["input"]
            text = given["text"]
        except (ValueError, KeyError, TypeError):
            return self.problem(400, "the envelope needs `input` with `text`")
        if envelope.get("agent", "summarizer") != "summarizer":
            return self.problem(400, "the envelope's agent does not match the URL")
        if envelope.get("operation", "default") != "default":
            return self.problem(400, "the agent has only the operation `default`")
        words = text.split()[: int(given.get("max_words", 40))]
        self.send(200, {"summary": " ".join(words)})


if __name__ == "__main__":
    run(Handler)
