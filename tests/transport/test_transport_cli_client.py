"""`mcpdi list` and `mcpdi call`: a terminal client that asks the person when the server asks."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path
from shutil import copyfile

import pytest
from inline_snapshot import snapshot
from transport_cli_processes import StderrLines, start, stop

pytestmark = pytest.mark.slow

BOOKSHOP = Path(__file__).parents[2] / "examples" / "bookshop.py"

QUIZ = """
from typing import Annotated

from pydantic import BaseModel, Field

from mcpdi import Elicit, ListRoots, MCPServer, Resolve, Sample
from mcpdi.types import CreateMessageResult, ListRootsResult, SamplingMessage, TextContent

mcp = MCPServer("Quiz")


class Answer(BaseModel):
    age: int = Field(title="Your age")
    colour: str = Field(default="blue", title="Colour")


def ask() -> Elicit[Answer]:
    return Elicit("Tell me about you", Answer)


def nickname() -> Sample:
    text = TextContent(type="text", text="A nickname?")
    return Sample([SamplingMessage(role="user", content=text)], max_tokens=5)


def where() -> ListRoots:
    return ListRoots()


@mcp.tool()
def profile(
    answer: Annotated[Answer, Resolve(ask)],
    nick: Annotated[CreateMessageResult, Resolve(nickname)],
    roots: Annotated[ListRootsResult, Resolve(where)],
) -> str:
    return f"{answer.age} {answer.colour} {nick.content.text} {len(roots.roots)} root"


@mcp.tool()
def add(a: int, b: int = 1) -> int:
    \"\"\"Add two numbers.\"\"\"
    return a + b
"""


def mcpdi(*arguments: str, cwd: Path, stdin: str = "") -> tuple[int, str, str]:
    done = subprocess.run(
        [sys.executable, "-m", "mcpdi_transport", *arguments],
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=60,
        input=stdin,
    )
    return done.returncode, done.stdout, done.stderr


@pytest.fixture
def shop(tmp_path: Path) -> Path:
    copyfile(BOOKSHOP, tmp_path / "bookshop.py")
    (tmp_path / "quiz.py").write_text(QUIZ)
    return tmp_path


def test_list_prints_each_tool_with_its_model_visible_arguments(shop: Path) -> None:
    code, out, _ = mcpdi("list", "quiz.py", cwd=shop)
    assert (code, out) == snapshot((0, "profile()\nadd(a: integer, b: integer = ...)  Add two numbers.\n"))


@pytest.mark.parametrize("mode", ["legacy", "2026-07-28"])
def test_call_asks_the_person_on_the_terminal(shop: Path, mode: str) -> None:
    code, out, err = mcpdi(
        "call", "bookshop.py", "order_book", "title=Neuromancer", "--mode", mode, cwd=shop, stdin="yes\n"
    )
    assert (code, out) == (0, "Backordered 'Neuromancer'; it ships in 2-3 weeks.\n")
    assert err == snapshot(
        "The server asks: 'Neuromancer' is out of stock (2-3 weeks). Order anyway?\n"
        "(type 'decline' or 'cancel' to refuse)\n"
        "  Confirm (yes/no): "
    )


def test_a_bad_answer_is_asked_again_and_defaults_fill_empty_lines(shop: Path) -> None:
    code, out, err = mcpdi("call", "quiz.py", "profile", cwd=shop, stdin="old\n42\n\nSpeedy\n")
    assert (code, out) == (0, "42 blue Speedy 1 root\n")
    assert "  Your age (integer): " in err
    assert "  answer an integer\n" in err
    assert "  Colour (string) [blue]: " in err
    assert "Your reply as the model: " in err


def test_declining_on_the_terminal_ends_the_call(shop: Path) -> None:
    code, out, err = mcpdi(
        "call", "bookshop.py", "order_book", "title=Neuromancer", cwd=shop, stdin="decline\n"
    )
    assert (code, out) == (1, "")
    assert err.endswith(
        "Error executing tool order_book: Resolver for parameter 'backorder' could not resolve: "
        "elicitation was decline\n"
    )


def test_stdin_ending_cancels_the_question(shop: Path) -> None:
    code, _, err = mcpdi("call", "bookshop.py", "order_book", "title=Neuromancer", cwd=shop, stdin="")
    assert code == 1
    assert "cancel" in err.splitlines()[-1]


def test_arguments_are_json_values_or_text(shop: Path) -> None:
    assert mcpdi("call", "quiz.py", "add", "a=2", "b=40", cwd=shop)[:2] == (0, "42\n")
    assert mcpdi("call", "quiz.py", "add", "--json", '{"a": 1}', cwd=shop)[:2] == (0, "2\n")


def test_argument_mistakes_are_one_line(shop: Path) -> None:
    assert mcpdi("call", "quiz.py", "add", "a", cwd=shop) == (
        1,
        "",
        "mcpdi: arguments are name=value, got 'a'\n",
    )
    assert mcpdi("call", "quiz.py", "add", "--json", "[1]", cwd=shop) == (
        1,
        "",
        "mcpdi: --json must be a JSON object of arguments, got list\n",
    )
    code, _, err = mcpdi("call", "quiz.py", "nope", cwd=shop)
    assert (code, err) == (1, "mcpdi: the server answered with error -32602: Unknown tool: nope\n")


def test_list_and_call_reach_a_server_over_http(shop: Path) -> None:
    server = start("run", "quiz.py", "--transport", "http", "--port", "0", "--log-level", "warning", cwd=shop)
    lines = StderrLines(server)
    try:
        url = lines.until("Serving Quiz on").split(" on ")[-1].strip()
        listed = mcpdi("list", url, cwd=shop)
        called = mcpdi("call", url, "add", "a=1", "b=2", cwd=shop)
    finally:
        stop(server)
        lines.join()
    assert listed[:2] == (0, "profile()\nadd(a: integer, b: integer = ...)  Add two numbers.\n")
    assert called[:2] == (0, "3\n")


def test_an_unreachable_url_is_one_line(shop: Path) -> None:
    code, _, err = mcpdi("list", "http://127.0.0.1:9/mcp", cwd=shop)
    assert code == 1
    assert err.startswith("mcpdi: cannot reach the server")
