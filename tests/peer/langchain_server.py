"""LangChain's tool server (PyPI `langchain-tool-server` 0.2.3), an OTC-style server we did not
write, for toolhost's client tests. Run with uvicorn from the peer venv-langchain:

    venv-langchain/bin/python -m uvicorn --app-dir tests/peer langchain_server:app --port PORT
"""

from langchain_tool_server import Server, tool
from langchain_tool_server.tools import ToolException


@tool
def add(x: int, y: int) -> int:
    """Add two integers."""
    return x + y


@tool
def echo(msg: str, times: int = 1) -> str:
    """Echo a message, repeated."""
    return msg * times


@tool
def busy() -> str:
    """Always fails with a retryable ToolException."""
    raise ToolException(user_message="busy", can_retry=True, retry_after_ms=10, additional_prompt_content="try later")


app = Server()
# 0.2.3 registers tools through `_add_tool` (its README's `add_tool` is from an older API).
for t in (add, echo, busy):
    app._add_tool(t)
