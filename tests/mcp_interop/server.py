"""A small Python MCP server for Toolsmith's McpClient: `add`, `fail` and `slow`.

`slow` writes the file named by $SLOW_CANCELLED_MARKER when it is cancelled, so a test can
see that a cancellation reached it.
"""

import os

import anyio
from mcp.server.mcpserver import MCPServer

server = MCPServer("py-interop")


@server.tool()
def add(a: int, b: int) -> int:
    """Add two integers."""
    return a + b


@server.tool()
def fail(reason: str = "on purpose") -> str:
    """Always fails."""
    raise ValueError(f"failed {reason}")


@server.tool()
async def slow(seconds: float = 30.0) -> str:
    """Sleep for a while, then answer."""
    try:
        await anyio.sleep(seconds)
    except anyio.get_cancelled_exc_class():
        marker = os.environ.get("SLOW_CANCELLED_MARKER")
        if marker:
            with open(marker, "w") as file:
                file.write("cancelled\n")
        raise
    return "slept"


if __name__ == "__main__":
    server.run()
