"""`mcpdi/__init__.py` is a curated front door: `__all__` is exactly what it exports."""

from __future__ import annotations

import types

import mcp_types
import pytest

import mcpdi
from mcpdi import types as wire


def test_all_lists_exactly_the_public_names_of_the_package() -> None:
    # Names load on first use: every name in `__all__` resolves, and nothing else is public.
    for name in mcpdi.__all__:
        getattr(mcpdi, name)
    public = {
        name
        for name, value in vars(mcpdi).items()
        if not name.startswith("_")
        and name != "annotations"  # from __future__
        and not (isinstance(value, types.ModuleType) and name not in mcpdi.__all__)
    }
    assert set(mcpdi.__all__) == public
    # Classes first, then modules: the order ruff's RUF022 keeps.
    assert list(mcpdi.__all__) == sorted(mcpdi.__all__, key=lambda name: (name.islower(), name))
    assert dir(mcpdi) == sorted(mcpdi.__all__)


def test_an_unknown_name_is_an_attribute_error() -> None:
    with pytest.raises(AttributeError, match="no attribute 'Nonsense'"):
        mcpdi.Nonsense  # noqa: B018


def test_the_names_other_packages_import_are_exported() -> None:
    expected = {
        "MCPServer",
        "Context",
        "Resolve",
        "Elicit",
        "Sample",
        "ListRoots",
        "ElicitationResult",
        "AcceptedElicitation",
        "DeclinedElicitation",
        "CancelledElicitation",
        "InvalidSignature",
        "ToolError",
        "Server",
        "ServerRequestContext",
        "Header",
        "RequestStateSecurity",
        "StateCodec",
        "HmacCodec",
        "InvalidRequestState",
        "types",
    }
    assert expected <= set(mcpdi.__all__)


def test_types_re_exports_the_wire_vocabulary() -> None:
    assert set(wire.__all__) == set(mcp_types.__all__)
    assert wire.InputRequiredResult is mcp_types.InputRequiredResult
    assert wire.CallToolResult is mcp_types.CallToolResult
