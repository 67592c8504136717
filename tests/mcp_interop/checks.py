"""The checks both Python clients run against `toolsmith serve --preset minimal`."""

from mcp import ClientSession
from mcp.shared.exceptions import MCPError


def text_of(result):
    return "\n".join(block.text for block in result.content if getattr(block, "type", "") == "text")


async def exercise(session: ClientSession) -> int:
    checks = 0
    listed = await session.list_tools()
    names = [tool.name for tool in listed.tools]
    assert names == ["read", "write", "edit", "bash"], names
    read = listed.tools[0]
    assert read.title == "Read", read.title
    assert read.annotations is not None and read.annotations.read_only_hint is True, read.annotations
    assert read.input_schema["required"] == ["path"], read.input_schema
    checks += 1

    written = await session.call_tool("write", {"path": "py/hello.txt", "content": "from python\n"})
    assert not written.is_error, text_of(written)
    got = await session.call_tool("read", {"path": "py/hello.txt"})
    assert not got.is_error and "from python" in text_of(got), text_of(got)
    checks += 1

    invalid = await session.call_tool("read", {"path": 5})
    assert invalid.is_error, text_of(invalid)
    assert "Invalid arguments for tool 'read'" in text_of(invalid), text_of(invalid)
    checks += 1

    refused = await session.call_tool("read", {"path": "../../etc/passwd"})
    assert refused.is_error and "outside the root" in text_of(refused), text_of(refused)
    checks += 1

    try:
        await session.call_tool("nope", {})
    except MCPError as error:
        assert error.error.code == -32602, error.error
        assert "Unknown tool 'nope'" in error.error.message, error.error.message
    else:
        raise AssertionError("an unknown tool was not a JSON-RPC error")
    checks += 1
    return checks
