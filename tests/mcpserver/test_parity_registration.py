"""Registration as a server ported from the reference SDK expects it: templates, resources, media."""

# ruff: noqa: E501  # pinned error texts are long single-line literals

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest
from inline_snapshot import snapshot
from mcp.server.mcpserver.resources import TextResource

from mcpdi import Audio, Image, InvalidSignature, MCPError, MCPServer, UserMessage

pytestmark = pytest.mark.anyio


def located(error: pytest.ExceptionInfo[Any]) -> str:
    return re.sub(r"[^\s()]*test_parity_registration\.py:\d+", "<here>", str(error.value))


@pytest.mark.parametrize(
    ("template", "expected"),
    [
        (
            "res://{a",
            snapshot(
                "Unclosed expression at position 6. Resource URI template 'res://{a' (<here>) is malformed at position 6: a '{' that is never closed"
            ),
        ),
        (
            "res://a}",
            snapshot(
                "Unmatched '}' at position 7. Resource URI template 'res://a}' (<here>) is malformed at position 7: a '}' without its '{'"
            ),
        ),
        (
            "res://{}",
            snapshot(
                "Empty expression at position 6. Resource URI template 'res://{}' (<here>) is malformed at position 6: an empty '{}'"
            ),
        ),
        (
            "res://{a b}",
            snapshot(
                "Invalid variable name 'a b' at position 6. Resource URI template 'res://{a b}' (<here>) is malformed at position 6: 'a b' is not a variable name (letters, digits, '_')"
            ),
        ),
        (
            "res://{a}/{a}",
            snapshot(
                "Variable 'a' appears more than once; repeated variables are not supported. Resource URI template 'res://{a}/{a}' (<here>) is malformed at position 10: the variable 'a' appears twice"
            ),
        ),
        (
            "res://{a{b}}",
            snapshot(
                "Invalid variable name 'a{b' at position 6. Resource URI template 'res://{a{b}}' (<here>) is malformed at position 6: 'a{b' is not a variable name (letters, digits, '_')"
            ),
        ),
    ],
)
def test_a_malformed_uri_template_is_refused_at_registration(template: str, expected: str) -> None:
    mcp = MCPServer()
    with pytest.raises(InvalidSignature) as caught:

        @mcp.resource(template)
        def read(a: str) -> str:
            return a

    assert located(caught) == expected


async def test_add_resource_takes_a_function_or_an_sdk_resource_object() -> None:
    mcp = MCPServer()

    def motd() -> str:
        return "hello"

    mcp.add_resource(motd, "res://motd")
    mcp.add_resource(TextResource(uri="res://note", name="note", text="a note", description="A note"))  # pyright: ignore[reportArgumentType]
    listed = {r.name: (str(r.uri), r.description, r.mime_type) for r in await mcp.list_resources()}
    assert listed == {
        "motd": ("res://motd", "", "text/plain"),
        "note": ("res://note", "A note", "text/plain"),
    }
    (note,) = await mcp.read_resource("res://note")
    assert (note.content, note.mime_type) == ("a note", "text/plain")


def test_add_resource_without_a_uri_says_what_it_takes() -> None:
    with pytest.raises(
        TypeError, match=r"add_resource takes a function and its uri, or an object with \.uri"
    ):
        MCPServer().add_resource(lambda: "x")


async def test_a_resource_returning_bytes_is_listed_as_octet_stream() -> None:
    mcp = MCPServer()

    @mcp.resource("res://raw")
    def raw() -> bytes:
        return b"\x00"

    (listed,) = await mcp.list_resources()
    assert listed.mime_type == "application/octet-stream"
    (read,) = await mcp.read_resource("res://raw")
    assert read.content == b"\x00"


async def test_an_unknown_resource_raises_invalid_params_in_memory() -> None:
    with pytest.raises(MCPError, match="Unknown resource: res://none") as caught:
        await MCPServer().read_resource("res://none")
    assert caught.value.code == -32602


def test_remove_prompt_of_an_unknown_name_raises() -> None:
    with pytest.raises(ValueError, match="Unknown prompt: nope"):
        MCPServer().remove_prompt("nope")


async def test_image_and_audio_read_files_and_guess_their_type(tmp_path: Path) -> None:
    picture = tmp_path / "chart.JPG"
    picture.write_bytes(b"\xff\xd8")
    sound = tmp_path / "note.mp3"
    sound.write_bytes(b"ID3")
    mcp = MCPServer()

    @mcp.tool()
    def media() -> list[Image | Audio]:
        return [Image(path=picture), Audio(path=sound), Image(data=b"x"), Audio(data=b"y", format="ogg")]

    result = await mcp.call_tool("media", {})
    assert [(block.type, block.mime_type, block.data) for block in result.content] == [  # pyright: ignore[reportAttributeAccessIssue]
        ("image", "image/jpeg", "/9g="),
        ("audio", "audio/mpeg", "SUQz"),
        ("image", "image/png", "eA=="),
        ("audio", "audio/ogg", "eQ=="),
    ]
    assert result.structured_content is None


@pytest.mark.parametrize("kind", [Image, Audio])
def test_media_takes_exactly_one_source(kind: type[Image] | type[Audio]) -> None:
    with pytest.raises(ValueError, match=r"takes exactly one of path= or data=, got neither"):
        kind()
    with pytest.raises(ValueError, match=r"takes exactly one of path= or data=, got both"):
        kind(path="a.png", data=b"x")


async def test_a_prompt_returns_user_messages_with_images() -> None:
    mcp = MCPServer()

    @mcp.prompt()
    def look() -> list[UserMessage]:
        return [UserMessage("Look:"), UserMessage(Image(data=b"x"))]  # pyright: ignore[reportCallIssue]  # the SDK's positional form

    result = await mcp.get_prompt("look")
    assert [(m.role, m.content.type) for m in result.messages] == [("user", "text"), ("user", "image")]


async def test_structured_output_true_refuses_a_class_without_fields() -> None:
    class Opaque:
        pass

    with pytest.raises(InvalidSignature) as caught:

        @MCPServer().tool(structured_output=True)
        def opaque() -> Opaque:
            return Opaque()

    assert located(caught) == snapshot(
        "The return annotation of 'opaque' (<here>) cannot be published as an outputSchema (it is a class without annotated fields); return a pydantic model, a TypedDict, a dataclass or JSON-able data, or drop structured_output=True"
    )
