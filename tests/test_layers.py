"""The dependency direction is a test: the engine knows nothing of MCP, the MCP layer nothing of I/O."""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

import networkx as nx
import pytest

HTTP_STACK = ("starlette", "uvicorn", "httpx2", "httpx")
MCP_MODULES = ("mcp_types", "pydantic", "mcp", "mcpdi._server", "mcpdi.lowlevel")
ROOT = Path(__file__).resolve().parent.parent
PACKAGES = ("mcpdi", "mcpdi_transport")


def modules_loaded_by(statement: str) -> set[str]:
    code = f"{statement}\nimport sys\nprint('\\n'.join(sorted(sys.modules)))"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, cwd=ROOT)
    return set(out.stdout.split())


@pytest.mark.parametrize(
    "statement", ["import mcpdi.engine", "from mcpdi.engine import Resolve, compile_plan"]
)
def test_importing_the_engine_loads_nothing_of_mcp_and_no_io_library(statement: str) -> None:
    loaded = modules_loaded_by(statement)
    leaked = sorted(m for m in (*HTTP_STACK, *MCP_MODULES, "anyio") if m in loaded)
    assert leaked == []


COMPILE_A_DIAMOND = """
from typing import Annotated
from mcpdi.engine import InvalidSignature, Resolve, compile_plan
def base(title: str) -> int: return 1
def left(b: Annotated[int, Resolve(base)]) -> int: return b
def right(b: Annotated[int, Resolve(base)], title: str) -> int: return b
async def tool(title: str, x: Annotated[int, Resolve(left)], y: Annotated[int, Resolve(right)]) -> int:
    return x + y
assert [step.name for step in compile_plan(tool).steps] == ["base", "left", "right"]
"""
COMPILE_A_CYCLE = """
def loop(v: 'Annotated[int, Resolve(loop)]') -> int: return v
async def cyclic(v: Annotated[int, Resolve(loop)]) -> int: return v
try:
    compile_plan(cyclic)
except InvalidSignature as error:
    assert error.cycle == ("__main__:loop", "__main__:loop")
"""


def test_compiling_acyclic_plans_does_not_import_networkx() -> None:
    assert "networkx" not in modules_loaded_by(COMPILE_A_DIAMOND)


def test_only_a_cycle_brings_networkx_in_to_draw_it() -> None:
    assert "networkx" in modules_loaded_by(COMPILE_A_DIAMOND + COMPILE_A_CYCLE)


@pytest.mark.parametrize(
    "statement", ["import mcpdi", "from mcpdi import MCPServer, Server", "import mcpdi.lowlevel"]
)
def test_importing_the_mcp_layer_loads_no_http_stack(statement: str) -> None:
    loaded = modules_loaded_by(statement)
    leaked = sorted(m for m in HTTP_STACK if m in loaded)
    assert leaked == []


def test_the_lazy_front_door_still_serves_every_name() -> None:
    loaded = modules_loaded_by("import mcpdi\nfor name in mcpdi.__all__: getattr(mcpdi, name)")
    assert "mcpdi._server" in loaded


def _module_name(path: Path) -> str:
    parts = list(path.relative_to(ROOT).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def _runtime_imports(path: Path, module: str) -> set[str]:
    """Modules `path` imports when it runs: `TYPE_CHECKING` blocks are skipped, function bodies count."""
    tree = ast.parse(path.read_text())
    package = module if path.name == "__init__.py" else module.rpartition(".")[0]
    found: set[str] = set()

    def visit(node: ast.AST) -> None:
        if isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test):
            for child in node.orelse:
                visit(child)
            return
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = package.split(".")[: len(package.split(".")) - node.level + 1]
                base = ".".join([*anchor, *([base] if base else [])])
            found.add(base)
            found.update(f"{base}.{alias.name}" for alias in node.names)
        for child in ast.iter_child_nodes(node):
            visit(child)

    visit(tree)
    return found


def import_graph() -> nx.DiGraph[str]:
    files = [path for package in PACKAGES for path in (ROOT / package).rglob("*.py")]
    modules = {_module_name(path): path for path in files}
    graph: nx.DiGraph[str] = nx.DiGraph()
    for module, path in modules.items():
        graph.add_node(module)
        for target in _runtime_imports(path, module):
            # `from package import name` imports the package, and the submodule if `name` is one.
            if target in modules and target != module and not module.startswith(f"{target}."):
                graph.add_edge(module, target)
    return graph


def test_no_import_cycle_among_modules_outside_type_checking() -> None:
    cycles = [cycle for cycle in nx.simple_cycles(import_graph()) if len(cycle) > 1]
    assert cycles == []


def test_the_transport_uses_only_public_names_of_the_core() -> None:
    private = sorted(
        f"{module} -> {target}"
        for module, target in import_graph().edges
        if module.startswith("mcpdi_transport") and target.startswith("mcpdi.") and "._" in target
    )
    assert private == []


def test_the_engine_imports_nothing_of_the_mcp_layer() -> None:
    upward = sorted(
        f"{module} -> {target}"
        for module, target in import_graph().edges
        if module.startswith("mcpdi.engine") and not target.startswith("mcpdi.engine")
    )
    assert upward == []


def test_no_production_module_imports_the_test_kit() -> None:
    into_the_kit = sorted(
        f"{module} -> {target}"
        for module, target in import_graph().edges
        if target.startswith("mcpdi.testing") and not module.startswith("mcpdi.testing")
    )
    assert into_the_kit == []
