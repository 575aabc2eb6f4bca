"""Resource template variables are checked for path tricks before the function sees them."""

# pinned error texts are long single-line literals

from __future__ import annotations

import urllib.parse
from typing import Any

import pytest
from inline_snapshot import snapshot

from mcpdi import InvalidSignature, MCPServer, ResourceSecurity
from mcpdi._resources._security import escapes_its_root, is_absolute_path

from .conftest import connect

MODERN = "2026-07-28"


def library(**options: Any) -> tuple[MCPServer, list[str]]:
    served: list[str] = []
    mcp = MCPServer("Library", **options)

    @mcp.resource("data://items/{name}")
    def item(name: str) -> str:
        served.append(name)
        return f"item {name}"

    @mcp.resource("git://diff/{range}", security=ResourceSecurity(exempt_params={"range"}))
    def diff(range: str) -> str:  # the variable's name in the URI
        served.append(range)
        return f"diff {range}"

    return mcp, served


async def read(mcp: MCPServer, uri: str) -> dict[str, Any]:
    async with connect(mcp, MODERN) as client:
        return await client.send("resources/read", {"uri": uri})


REFUSED = [
    "..",
    "%2E%2E",
    "%2e%2E%2fetc",
    "..%2F..%2Fetc",
    "..\\..\\windows",
    "a\\..\\..\\b",
    "%2Fetc%2Fpasswd",
    "\\\\server\\share",
    "C:\\Windows",
    "c:relative",
    "a\x00b",
    "a%00b",
]


@pytest.mark.anyio
@pytest.mark.parametrize("name", REFUSED)
async def test_a_variable_with_a_path_trick_is_answered_as_an_unknown_resource(name: str) -> None:
    mcp, served = library()
    uri = f"data://items/{name}"

    response = await read(mcp, uri)

    assert response["error"] == {"code": -32602, "message": f"Unknown resource: {uri}", "data": {"uri": uri}}
    assert served == []


@pytest.mark.anyio
@pytest.mark.parametrize("name", ["readme.txt", "1.0..2.0", "a..b", "...", "a%20b", ".hidden", "note:1"])
async def test_ordinary_values_with_dots_and_colons_are_served(name: str) -> None:
    mcp, served = library()

    response = await read(mcp, f"data://items/{name}")

    value = urllib.parse.unquote(name)  # the function sees the value percent-decoded
    assert response["result"]["contents"][0]["text"] == f"item {value}"
    assert served == [value]


@pytest.mark.anyio
async def test_an_exempt_variable_reaches_its_function_unchecked() -> None:
    mcp, served = library()

    response = await read(mcp, "git://diff/..")

    assert response["result"]["contents"][0]["text"] == "diff .."
    assert served == [".."]


@pytest.mark.anyio
async def test_the_server_policy_is_the_default_of_every_template() -> None:
    mcp, served = library(resource_security=ResourceSecurity(reject_path_traversal=False))

    allowed = await read(mcp, "data://items/..")
    still_refused = await read(mcp, "data://items/%2Fetc")

    assert "result" in allowed
    assert still_refused["error"]["code"] == -32602
    assert served == [".."]


@pytest.mark.anyio
async def test_a_refused_variable_is_not_handed_to_a_looser_template_after_it() -> None:
    mcp = MCPServer("Library")
    served: list[str] = []

    @mcp.resource("data://items/{name}")
    def strict(name: str) -> str:
        served.append(f"strict {name}")
        return name

    @mcp.resource("data://{kind}/{name}", security=ResourceSecurity(exempt_params={"kind", "name"}))
    def loose(kind: str, name: str) -> str:
        served.append(f"loose {name}")
        return name

    response = await read(mcp, "data://items/..")

    assert response["error"]["code"] == -32602
    assert served == []


def test_exempting_a_variable_the_uri_does_not_have_is_a_registration_error() -> None:
    mcp = MCPServer("Library")

    with pytest.raises(InvalidSignature) as caught:

        @mcp.resource("data://items/{name}", security=ResourceSecurity(exempt_params={"nmae"}))
        def item(name: str) -> str:
            return name

    assert str(caught.value).split(" (")[0] == snapshot("Resource 'data://items/{name}'")
    assert str(caught.value).endswith(
        "ResourceSecurity(exempt_params=...) names ['nmae'], which are not variables of the URI ['name']"
    )


def test_exempt_params_given_as_one_string_is_explained() -> None:
    with pytest.raises(TypeError) as caught:
        ResourceSecurity(exempt_params="name")

    assert str(caught.value) == snapshot(
        "ResourceSecurity(exempt_params='name') takes a collection of names; write exempt_params={'name'}"
    )


def test_which_relative_paths_climb_out_of_their_root() -> None:
    cases = ["..", "../x", "a/../..", "a/../b", "a/./b", "./..", "1.0..2.0", "", "a//..", "a\\..\\..\\b"]

    assert {case: escapes_its_root(case) for case in cases} == snapshot(
        {
            "..": True,
            "../x": True,
            "a/../..": True,
            "a/../b": False,
            "a/./b": False,
            "./..": True,
            "1.0..2.0": False,
            "": False,
            "a//..": False,
            "a\\..\\..\\b": True,
        }
    )


def test_which_values_are_absolute_paths_somewhere() -> None:
    cases = ["/etc", "\\x", "\\\\host\\share", "C:\\x", "c:x", "x:y", "1:2", "", "rel/ative", "é:x"]

    assert {case: is_absolute_path(case) for case in cases} == snapshot(
        {
            "/etc": True,
            "\\x": True,
            "\\\\host\\share": True,
            "C:\\x": True,
            "c:x": True,
            "x:y": True,
            "1:2": False,
            "": False,
            "rel/ative": False,
            "é:x": False,
        }
    )
