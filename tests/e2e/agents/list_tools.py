"""Start discern's MCP server exactly as one client's file says, with the Python MCP SDK.

Usage: list_tools.py ROOT FILE KEY
  ROOT  the repository root: the client's working directory and its ${workspaceFolder}
  FILE  the client's file, relative to ROOT (.json is read with json, .toml with tomllib)
  KEY   where the servers are: mcpServers, servers or mcp_servers

Prints {"server": <serverInfo.name>, "tools": [<tool names>]} as JSON.
"""

import asyncio
import json
import sys
import tomllib
from pathlib import Path

from mcp import ClientSession, StdioServerParameters, stdio_client


def entry(root: Path, file: str, key: str) -> dict:
    path = root / file
    if file.endswith(".toml"):
        config = tomllib.loads(path.read_text())
    else:
        config = json.loads(path.read_text())
    return config[key]["discern"]


async def list_tools(root: Path, file: str, key: str) -> dict:
    server = entry(root, file, key)
    args = [a.replace("${workspaceFolder}", str(root)) for a in server.get("args", [])]
    params = StdioServerParameters(command=server["command"], args=args, cwd=str(root))
    async with stdio_client(params) as (read, write):
        async with ClientSession(read, write) as session:
            initialized = await session.initialize()
            tools = await session.list_tools()
            return {
                "server": initialized.server_info.name,
                "tools": [tool.name for tool in tools.tools],
            }


def main() -> None:
    root, file, key = Path(sys.argv[1]), sys.argv[2], sys.argv[3]
    result = asyncio.run(asyncio.wait_for(list_tools(root, file, key), timeout=60))
    print(json.dumps(result))


if __name__ == "__main__":
    main()
