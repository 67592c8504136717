"""Python's MCP client against `toolsmith serve` over stdio. Usage: client_stdio.py BIN ROOT"""

import sys

import anyio
from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client

from checks import exercise


async def main(binary: str, root: str) -> None:
    params = StdioServerParameters(command=binary, args=["serve", "--preset", "minimal", "--root", root])
    async with stdio_client(params) as (read, write):
        async with ClientSession(read, write) as session:
            await session.initialize()
            checks = await exercise(session)
    print(f"OK stdio: {checks} checks")


if __name__ == "__main__":
    anyio.run(main, sys.argv[1], sys.argv[2])
