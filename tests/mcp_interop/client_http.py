"""Python's MCP client against `toolsmith serve --http`. Usage: client_http.py URL"""

import sys

import anyio
from mcp import ClientSession
from mcp.client.streamable_http import streamable_http_client

from checks import exercise


async def main(url: str) -> None:
    async with streamable_http_client(url) as streams:
        read, write = streams[0], streams[1]
        async with ClientSession(read, write) as session:
            await session.initialize()
            checks = await exercise(session)
    print(f"OK http: {checks} checks")


if __name__ == "__main__":
    anyio.run(main, sys.argv[1])
