#!/usr/bin/env bash
# Creates the Python environment of the MCP interop tests: target/mcp-venv with the `mcp`
# package. Idempotent: an environment that already has the right version is left alone.
set -euo pipefail
cd "$(dirname "$0")/../.."

MCP_VERSION="2.3.0"
VENV="target/mcp-venv"
PYTHON="${PYTHON:-python3}"

if [ -x "$VENV/bin/python" ] && "$VENV/bin/python" - "$MCP_VERSION" <<'PY' 2>/dev/null
import sys
from importlib.metadata import version
sys.exit(0 if version("mcp") == sys.argv[1] else 1)
PY
then
    echo "mcp-interop: $VENV already has mcp $MCP_VERSION"
    exit 0
fi

echo "mcp-interop: creating $VENV with mcp $MCP_VERSION"
rm -rf "$VENV"
mkdir -p target
"$PYTHON" -m venv "$VENV"
"$VENV/bin/python" -m pip install --quiet --disable-pip-version-check "mcp==$MCP_VERSION"
"$VENV/bin/python" -c "import mcp; print('mcp-interop: ready')"
