"""A stdio server's start: a handshake-era `initialize` is answered without what it does not need."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from mcp_types import methods
from mcp_types.version import HANDSHAKE_PROTOCOL_VERSIONS
from pydantic import TypeAdapter

ROOT = Path(__file__).resolve().parent.parent.parent

# Run a server file as `python file.py` does (or as `mcpdi run file.py`), and report every module
# loaded when it exits, which of the handshake era's wire models were built by then, which
# modules were imported while the garbage collector ran, and whether it runs at exit.
_REPORTING = """
import atexit, gc, json, runpy, sys

class CollectorWatch:
    imported_collecting = []

    def find_spec(self, name, path=None, target=None):
        if gc.isenabled():
            self.imported_collecting.append(name)
        return None  # the usual finders import it

sys.meta_path.insert(0, CollectorWatch())

def report():
    era = sys.modules.get("mcp_types._v2025_11_25")
    models = [value for value in vars(era).values() if isinstance(value, type)] if era else []
    built = sorted(model.__name__ for model in models if getattr(model, "__pydantic_complete__", False))
    sys.stderr.write("\\nLOADED " + json.dumps(sorted(sys.modules)) + "\\n")
    sys.stderr.write("BUILT " + json.dumps(built) + "\\n")
    sys.stderr.write("COLLECTING " + json.dumps(CollectorWatch.imported_collecting) + "\\n")
    sys.stderr.write("ENABLED " + json.dumps(gc.isenabled()) + "\\n")

atexit.register(report)
launch, path = sys.argv[1:]
if launch == "mcpdi run":
    from mcpdi_transport._cli import main
    main(["run", path])
else:
    sys.argv = [path]
    runpy.run_path(path, run_name="__main__")
"""
LAUNCHES = ("python", "mcpdi run")

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
    "mcpdi._prompts",  # prompts: loaded by the first one registered
    "mcpdi._resources._compiled",  # resources and templates: the same
    "mcpdi._resources._uri_template",
    "mcpdi._extensions",  # `MCPServer(extensions=...)`
    "mcpdi.lowlevel._client_rounds",  # a client's side of multi-round requests
    "opentelemetry.propagate",  # the parent span of a traced request
    "opentelemetry.trace",  # the trace API: loaded by whatever sets a tracer provider, or the first span
    "starlette",
    "uvicorn",
    "httpx2",
    "httpx",
    "networkx",  # the engine draws a cycle with it, and only a cycle
    "cryptography",  # `AesGcmCodec`
    "jwt",  # `JwtVerifier`
    "watchfiles",  # `mcpdi dev`'s reloading
    "redis",
    "mcpdi_transport._http",
    "mcpdi_transport._client",
    "mcpdi_transport._dev",
)


def _request(request_id: int, method: str, params: dict[str, object] | None = None) -> str:
    message: dict[str, object] = {"jsonrpc": "2.0", "id": request_id, "method": method}
    if params is not None:
        message["params"] = params
    return json.dumps(message) + "\n"


@dataclass(frozen=True, slots=True)
class Served:
    answers: list[dict[str, object]]
    loaded: set[str]  # every module in `sys.modules` at exit
    built: set[str]  # the handshake era's models whose validators were built by then
    imported_collecting: list[str]  # the modules imported while the garbage collector was enabled
    collector_enabled: bool  # at exit


def _serve(server_file: str, lines: str, launch: str = "python") -> Served:
    """What a fresh `python server_file` (or `mcpdi run server_file`) answered to `lines`, and had loaded."""
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    done = subprocess.run(
        [sys.executable, "-c", _REPORTING, launch, server_file],
        input=lines,
        capture_output=True,
        text=True,
        timeout=120,
        cwd=ROOT,
        env=env,
        check=True,
    )
    answers = [json.loads(line) for line in done.stdout.splitlines() if line.strip()]
    return Served(
        answers,
        set(_report(done.stderr, "LOADED ")),
        set(_report(done.stderr, "BUILT ")),
        _report(done.stderr, "COLLECTING "),
        _report(done.stderr, "ENABLED "),
    )


def _report(stderr: str, prefix: str) -> Any:
    reports = [line for line in stderr.splitlines() if line.startswith(prefix)]
    assert reports, stderr
    return json.loads(reports[-1].removeprefix(prefix))


INITIALIZE = {
    "protocolVersion": "2025-11-25",
    "capabilities": {},
    "clientInfo": {"name": "t", "version": "1"},
}


@pytest.mark.parametrize("launch", LAUNCHES)
def test_answering_a_handshake_initialize_loads_no_other_era_nor_the_test_kit(launch: str) -> None:
    served = _serve("examples/bookshop.py", _request(1, "initialize", INITIALIZE), launch)
    assert [answer["id"] for answer in served.answers] == [1]
    result = served.answers[0]["result"]
    assert isinstance(result, dict)
    assert result["protocolVersion"] == "2025-11-25"
    assert result["serverInfo"] == {"name": "Bookshop", "version": ""}
    assert sorted(name for name in NOT_FOR_INITIALIZE if name in served.loaded) == []
    assert "mcp_types._v2025_11_25" in served.loaded  # the handshake era's own models checked the answer


@pytest.mark.parametrize("launch", LAUNCHES)
def test_the_era_models_a_start_does_not_use_are_never_built(launch: str) -> None:
    import mcp_types._v2025_11_25 as handshake_era

    served = _serve("examples/bookshop.py", _request(1, "initialize", INITIALIZE), launch)
    assert [answer["id"] for answer in served.answers] == [1]
    models = [value for value in vars(handshake_era).values() if isinstance(value, type)]
    assert len(models) > 100  # what building them all on import cost
    # `initialize`'s answer and the bookshop's form check go through their own adapters.
    assert served.built == {"WireModel"}


# What a start imports with the collector paused: mcpdi's modules (but the package's front door
# and the pause itself), the wire types they import, the stdio transport and the event loop
# (asyncio and anyio's backend for it).
_PAUSED_FOR = ("mcpdi.", "mcp_types", "mcpdi_transport._stdio", "anyio._backends", "asyncio")
_BEFORE_THE_PAUSE = ("mcpdi._collector",)


@pytest.mark.parametrize("launch", LAUNCHES)
def test_a_start_imports_mcpdi_and_the_wire_types_with_the_collector_paused(launch: str) -> None:
    served = _serve("examples/bookshop.py", _request(1, "initialize", INITIALIZE), launch)
    assert [answer["id"] for answer in served.answers] == [1]
    collecting = {name for name in served.imported_collecting if name.startswith(_PAUSED_FOR)}
    assert sorted(collecting.difference(_BEFORE_THE_PAUSE)) == []
    assert served.collector_enabled  # paused for the imports alone


def test_the_next_request_loads_the_method_maps_and_is_answered() -> None:
    lines = (
        _request(1, "initialize", INITIALIZE)
        + json.dumps({"jsonrpc": "2.0", "method": "notifications/initialized"})
        + "\n"
        + _request(2, "tools/list")
    )
    served = _serve("examples/bookshop.py", lines)
    assert [answer["id"] for answer in served.answers] == [1, 2]
    listed = served.answers[1]["result"]
    assert isinstance(listed, dict)
    assert "reserve_book" in [tool["name"] for tool in listed["tools"]]
    assert "mcp_types.methods" in served.loaded


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
