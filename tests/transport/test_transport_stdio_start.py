"""A stdio server's start: a handshake-era `initialize` is answered without what it does not need."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from mcp_types import methods
from mcp_types.version import HANDSHAKE_PROTOCOL_VERSIONS
from pydantic import TypeAdapter

ROOT = Path(__file__).resolve().parent.parent.parent

# Run a server file as `python file.py` does, and report every module loaded when it exits.
_REPORTING = """
import atexit, json, runpy, sys
atexit.register(lambda: sys.stderr.write("\\nLOADED " + json.dumps(sorted(sys.modules)) + "\\n"))
path = sys.argv[1]
sys.argv = [path]
runpy.run_path(path, run_name="__main__")
"""

# What a handshake-era `initialize` over stdio has no use for.
NOT_FOR_INITIALIZE = (
    "mcp_types._v2026_07_28",  # the other era's wire models (~70 ms of a start)
    "mcp_types.methods",  # imports every era; the next request loads it
    "mcpdi.testing",  # the in-memory test kit
    "mcpdi._in_memory",  # `MCPServer.call_tool` and friends, for tests
    "mcpdi._explain",  # `max_rounds` and `mcp.explain`
    "mcpdi.engine._explain",
    "mcpdi._resources._objects",  # `add_resource(obj)`
    "mcpdi._messages",  # a prompt's rendered messages
    "opentelemetry.propagate",  # the parent span of a traced request
    "starlette",
    "uvicorn",
    "httpx2",
    "mcpdi_transport._http",
)


def _request(request_id: int, method: str, params: dict[str, object] | None = None) -> str:
    message: dict[str, object] = {"jsonrpc": "2.0", "id": request_id, "method": method}
    if params is not None:
        message["params"] = params
    return json.dumps(message) + "\n"


def _serve(server_file: str, lines: str) -> tuple[list[dict[str, object]], set[str]]:
    """The answers a fresh `python server_file` wrote for `lines`, and the modules it had loaded."""
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    done = subprocess.run(
        [sys.executable, "-c", _REPORTING, server_file],
        input=lines,
        capture_output=True,
        text=True,
        timeout=120,
        cwd=ROOT,
        env=env,
        check=True,
    )
    answers = [json.loads(line) for line in done.stdout.splitlines() if line.strip()]
    reports = [line for line in done.stderr.splitlines() if line.startswith("LOADED ")]
    assert reports, done.stderr
    return answers, set(json.loads(reports[-1].removeprefix("LOADED ")))


INITIALIZE = {
    "protocolVersion": "2025-11-25",
    "capabilities": {},
    "clientInfo": {"name": "t", "version": "1"},
}


def test_answering_a_handshake_initialize_loads_no_other_era_nor_the_test_kit() -> None:
    answers, loaded = _serve("examples/bookshop.py", _request(1, "initialize", INITIALIZE))
    assert [answer["id"] for answer in answers] == [1]
    result = answers[0]["result"]
    assert isinstance(result, dict)
    assert result["protocolVersion"] == "2025-11-25"
    assert result["serverInfo"] == {"name": "Bookshop", "version": ""}
    assert sorted(name for name in NOT_FOR_INITIALIZE if name in loaded) == []
    assert "mcp_types._v2025_11_25" in loaded  # the handshake era's own models checked the answer


def test_the_next_request_loads_the_method_maps_and_is_answered() -> None:
    lines = (
        _request(1, "initialize", INITIALIZE)
        + json.dumps({"jsonrpc": "2.0", "method": "notifications/initialized"})
        + "\n"
        + _request(2, "tools/list")
    )
    answers, loaded = _serve("examples/bookshop.py", lines)
    assert [answer["id"] for answer in answers] == [1, 2]
    listed = answers[1]["result"]
    assert isinstance(listed, dict)
    assert "reserve_book" in [tool["name"] for tool in listed["tools"]]
    assert "mcp_types.methods" in loaded


@pytest.mark.parametrize("version", HANDSHAKE_PROTOCOL_VERSIONS)
def test_every_handshake_version_answers_initialize_with_the_2025_11_25_model(version: str) -> None:
    import mcp_types._v2025_11_25 as handshake_era

    assert methods.SERVER_RESULTS[("initialize", version)] is handshake_era.InitializeResult


def test_both_eras_define_the_same_form_fields_an_elicitation_is_checked_against() -> None:
    import mcp_types._v2025_11_25 as handshake_era
    import mcp_types._v2026_07_28 as modern_era

    def without_descriptions(node: object) -> object:
        if isinstance(node, dict):
            return {key: without_descriptions(value) for key, value in node.items() if key != "description"}
        if isinstance(node, list):
            return [without_descriptions(item) for item in node]
        return node

    schemas = [
        without_descriptions(TypeAdapter[object](era.PrimitiveSchemaDefinition).json_schema())
        for era in (handshake_era, modern_era)
    ]
    assert schemas[0] == schemas[1]
