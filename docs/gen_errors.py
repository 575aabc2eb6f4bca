"""Render docs/errors.md from the tests that pin mcpdi's error texts, so the page cannot drift.

Run `python docs/gen_errors.py` from the repository root after changing a pinned text;
`tests/test_docs.py` fails while the committed page differs from what this script renders.

Registration errors (`InvalidSignature`) come from the tests that pin them with
`snapshot("...")`: each case shows the test's own code (the definitions it uses and its
body, minus the assertions) and the pinned text. Wire errors come from every pinned
`{"code": ..., "message": ...}` object in the tests, grouped by code.
"""

from __future__ import annotations

import ast
import re
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PAGE = ROOT / "docs" / "errors.md"

REGISTRATION_TESTS = (
    "tests/mcpserver/test_registration_errors.py",
    "tests/mcpserver/test_seed_header_parameters.py",
    "tests/engine/test_engine_signatures.py",
    "tests/mcpserver/test_default_form.py",
    "tests/mcpserver/test_typed_boundary.py",
    "tests/mcpserver/test_elicit_models.py",
)

# The fix for each registration mistake, keyed by the test (or the offending function) that
# pins its text. A pinned case without an entry here fails `tests/test_docs.py`.
FIXES: dict[str, str] = {
    "test_a_bare_resolve_annotation_names_the_fix": (
        "Write `user: Annotated[User, Resolve(load_user)]` (or `user: User = Resolve(load_user)`); "
        "`Resolve(...)` is a marker, not a type."
    ),
    "test_a_default_marker_next_to_an_annotated_marker_is_two_resolvers": (
        "Keep one marker: either `Annotated[T, Resolve(fn)]` or the default `= Resolve(fn)`."
    ),
    "test_a_resolver_whose_result_cannot_fit_is_refused": (
        "Make the resolver return what the parameter takes, or annotate the parameter with what "
        "the resolver returns."
    ),
    "test_a_mismatch_between_two_resolvers_names_the_consuming_resolver": (
        "Make the named resolver return what its consumer takes, or change the consumer's annotation."
    ),
    "test_a_resolver_taking_an_argument_as_another_type_is_refused": (
        "Annotate the resolver's parameter with the tool argument's type (or a broader one)."
    ),
    "test_an_elicit_of_something_other_than_a_flat_model_is_refused": (
        "Ask with a pydantic model whose fields are strings, numbers, booleans or enums: "
        "`Elicit(message, MyModel)`."
    ),
    "test_validating_a_type_pydantic_cannot_check_is_refused_at_registration": (
        "Drop `validate=True` for this resolver, or return a type pydantic can validate."
    ),
    "test_a_resolver_parameter_that_cannot_be_filled_is_named": (
        "Give the resolver only parameters mcpdi can fill: a tool argument of the same name, "
        "the `Context`, or another `Annotated[T, Resolve(fn)]`."
    ),
    "test_a_resolver_parameter_that_fits_no_kind_names_the_resolver_the_parameter_and_the_kinds": (
        "Rename the parameter to one of the listed call arguments, annotate it with a context "
        "type, or fill it with `Annotated[T, Resolve(fn)]`."
    ),
    "test_a_cycle_of_resolvers_is_drawn_in_full": (
        "Follow the drawn path and remove one dependency, for example by letting both resolvers "
        "depend on a third one that holds what they share."
    ),
    "test_a_cycle_is_drawn_as_its_whole_path_with_qualname_and_location_of_each_hop": (
        "Follow the drawn path (each hop has its file and line) and remove one of the dependencies."
    ),
    "test_a_resolver_depending_on_itself_is_a_cycle_of_one_hop": (
        "A resolver cannot fill its own parameter: give that parameter another resolver."
    ),
    "test_an_argument_starting_with_an_underscore_is_refused": (
        "Rename the argument without the leading underscore."
    ),
    "test_an_elicit_annotation_of_a_nested_model_is_refused": (
        "Ask for a flat model (strings, numbers, integers, booleans, enums); ask for the nested "
        "part in a separate question."
    ),
    "test_a_resolver_annotated_with_two_questions_is_refused": (
        "Split the resolver in two, each asking one kind of question."
    ),
    "test_resolvers_and_an_input_required_return_are_refused_together": (
        "Either ask through resolvers or return `InputRequiredResult` from the body, not both."
    ),
    "test_structured_output_needs_a_json_able_return_type": (
        "Annotate the tool's return type with something JSON can carry (a model, a dict, a "
        "primitive), or drop `structured_output=True`."
    ),
    "test_a_resource_template_must_take_exactly_its_uri_parameters": (
        "Name the function's arguments exactly as the URI template's `{parameters}`."
    ),
    "test_resolve_wrapped_in_a_union_says_union": (
        "Put the union inside: `Annotated[T | None, Resolve(fn)]`."
    ),
    "test_resolve_nested_in_a_container_names_the_container_not_a_union": (
        "Let one resolver return the whole container: `Annotated[list[T], Resolve(fn)]`."
    ),
    "test_two_resolve_markers_on_one_parameter_are_rejected": (
        "Keep one `Resolve(...)`; combine values in a resolver that depends on the others."
    ),
    "test_an_annotation_that_cannot_be_evaluated_names_the_function_and_the_missing_name": (
        "Import or define the missing name at module level."
    ),
    "test_a_local_resolver_under_postponed_annotations_needs_localns_and_says_so": (
        "Define resolvers at module level, or pass `localns=locals()` to `compile_plan`."
    ),
    "test_star_args_are_rejected_in_resolvers_and_roots_and_star_star_kwargs_in_resolvers": (
        "Replace `*args` and `**kwargs` with named parameters."
    ),
    "test_builtins_without_a_signature_and_non_callables_are_invalid_signatures": (
        "Wrap a built-in in a small function with annotated parameters; pass a callable to `Resolve(...)`."
    ),
    "test_one_resolver_marked_inline_in_one_place_and_not_in_another_is_rejected": (
        "Use the same `inline=` flag on every `Resolve(...)` of one resolver."
    ),
    "test_a_root_that_is_not_callable_is_an_invalid_signature": (
        "Pass the function itself to `compile_plan`."
    ),
    "tool_with_float": "Mark only `str`, `int` or `bool` arguments; send other values in the body.",
    "tool_with_list": "Mark only `str`, `int` or `bool` arguments; send other values in the body.",
    "tool_with_optional": (
        'Use `Header("Name")`, which publishes an optional argument with its own type, or '
        "write the schema with `WithJsonSchema`."
    ),
    "tool_with_enum": 'Use `Header("Name")`, which publishes an `Enum` as a string with its values.',
    "tool_with_nested": "Mark a top-level argument, not a field of a nested model.",
    "tool_with_space": "Use an HTTP token as the header name: letters, digits and `-`, no spaces or colons.",
    "tool_with_number_name": "Give the header name as a string.",
    "tool_with_duplicate": "Give each marked argument its own header name (names ignore case).",
    "tool_marking_a_resolved_parameter": (
        "Remove the marking: a resolved parameter is never sent by the client."
    ),
    "tool_marking_a_resolved_parameter_with_field": (
        "Remove the marking: a resolved parameter is never sent by the client."
    ),
    "tool_marking_the_context": "Remove the marking: the `Context` is never sent by the client.",
}

WIRE_CODES: dict[int, tuple[str, str]] = {
    -32700: ("Parse error", "Send one valid JSON value per message."),
    -32600: (
        "Invalid request",
        "Send a JSON-RPC 2.0 object (`jsonrpc`, `id`, `method`, object `params`) and follow the "
        "era's rules (the message names the broken one).",
    ),
    -32601: ("Method not found", "Call a method the server offers at this protocol version."),
    -32602: (
        "Invalid params",
        "Fix the named field: an unknown tool, arguments that fail the input schema, or a "
        "`requestState` that is not the one the server sealed (retry the call from the start).",
    ),
    -32603: (
        "Internal error",
        "A server fault: the handler raised, or returned what the era cannot carry. The server "
        "log has the traceback; the client never sees it.",
    ),
    -32020: (
        "Header mismatch",
        "Send each `Mcp-Param-*` header with the same value as the body's argument; list the "
        "tools first so the client knows which arguments are marked.",
    ),
    -32021: (
        "Missing capability",
        "Declare the capability named in `data.requiredCapabilities` (elicitation, sampling, "
        "roots) when connecting.",
    ),
    -32022: (
        "Unsupported protocol version",
        "Send a protocol version from the `data.supported` list.",
    ),
}


REGISTER_IT = """


mcp = MCPServer("Bookshop")
with pytest.raises(InvalidSignature):
    mcp.tool()({name})"""

APPLICATION = (
    "Application error",
    "A code of the server's own: a handler or resolver raised `MCPError` with it, or the "
    "client answered a server request with it and the server relayed it. The message is the "
    "server author's.",
)


@dataclass(frozen=True, slots=True)
class Registration:
    """One pinned `InvalidSignature` case: where it is pinned, the code that causes it, its texts."""

    key: str
    title: str
    source: str
    code: str
    messages: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class WireError:
    """One pinned JSON-RPC error object and the test that pins it."""

    code: int
    message: str
    test: str
    source: str


def sentence(name: str) -> str:
    """A test's name as the sentence it is: `test_a_b` -> "A b"."""
    words = name.removeprefix("test_").replace("_", " ")
    return words[:1].upper() + words[1:]


def pinned_strings(node: ast.AST) -> list[str]:
    """The strings inside every `snapshot(...)` call under `node`, in source order."""
    found: list[str] = []
    for call in ast.walk(node):
        if isinstance(call, ast.Call) and isinstance(call.func, ast.Name) and call.func.id == "snapshot":
            for constant in ast.walk(call):
                if isinstance(constant, ast.Constant) and isinstance(constant.value, str):
                    found.append(constant.value)
    return found


def names_in(node: ast.AST) -> set[str]:
    return {n.id for n in ast.walk(node) if isinstance(n, ast.Name)}


def has_snapshot(node: ast.AST) -> bool:
    return "snapshot" in names_in(node)


class Module:
    """A parsed test module: its top-level definitions by name, and its source lines."""

    def __init__(self, relative: str) -> None:
        self.relative = relative
        self.text = (ROOT / relative).read_text(encoding="utf-8")
        self.tree = ast.parse(self.text)
        self.definitions: dict[str, ast.stmt] = {}
        for statement in self.tree.body:
            if isinstance(statement, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
                self.definitions[statement.name] = statement
            elif isinstance(statement, ast.Assign):
                for target in statement.targets:
                    if isinstance(target, ast.Name):
                        self.definitions[target.id] = statement

    def segment(self, node: ast.stmt) -> str:
        lines = self.text.splitlines()
        start = min([node.lineno, *(d.lineno for d in getattr(node, "decorator_list", ()))])
        assert node.end_lineno is not None
        return "\n".join(strip_checker_comments(line) for line in lines[start - 1 : node.end_lineno])

    def with_imports(self, code: str) -> str:
        """`code` preceded by the module's imports of the names it uses, so it runs on its own."""
        used = names_in(ast.parse(code)) | {"annotations"}
        lines: list[str] = []
        for statement in self.tree.body:
            if isinstance(statement, ast.ImportFrom) and statement.level == 0 and statement.module:
                kept = [a.name for a in statement.names if (a.asname or a.name) in used]
                if kept and statement.module != "inline_snapshot":
                    lines.append(f"from {statement.module} import {', '.join(kept)}")
            elif isinstance(statement, ast.Import):
                lines += [f"import {a.name}" for a in statement.names if a.name in used]
        return "\n".join(lines) + "\n\n\n" + code

    def used_definitions(self, roots: list[ast.AST]) -> list[ast.stmt]:
        """Top-level definitions the roots use, transitively, in file order."""
        seen: set[str] = set()
        pending = [name for root in roots for name in names_in(root)]
        while pending:
            name = pending.pop()
            if name in seen or name not in self.definitions:
                continue
            seen.add(name)
            pending.extend(names_in(self.definitions[name]))
        return [node for name, node in self.definitions.items() if name in seen]


def strip_checker_comments(line: str) -> str:
    return re.sub(r"\s+#\s*(pyright|type|noqa):.*$", "", line)


def body_without_pins(
    module: Module, test: ast.FunctionDef | ast.AsyncFunctionDef, pinned: set[str] | None = None
) -> str:
    lines = [
        module.segment(statement)
        for statement in test.body
        if not has_snapshot(statement) and not (pinned and pinned & set(names_in(statement)))
    ]
    return "\n".join(lines).replace("\n    ", "\n").removeprefix("    ")


class _Unsnapshot(ast.NodeTransformer):
    def visit_Call(self, node: ast.Call) -> ast.AST:
        if isinstance(node.func, ast.Name) and node.func.id == "snapshot" and len(node.args) == 1:
            return self.visit(node.args[0])
        return self.generic_visit(node)


def first_parametrized_row(test: ast.FunctionDef | ast.AsyncFunctionDef) -> tuple[str, set[str]] | None:
    """`a, b = <first row>` for a test parametrised by a literal table, and the names bound to pins.

    The pinned values are left out of the binding: the page shows them as the message.
    """
    for decorator in test.decorator_list:
        if not (isinstance(decorator, ast.Call) and ast.unparse(decorator.func) == "pytest.mark.parametrize"):
            continue
        names, rows = decorator.args[:2]
        if not isinstance(rows, ast.List | ast.Tuple) or not rows.elts:
            return None
        targets = ast.literal_eval(names)
        targets = [part.strip() for part in targets.split(",")] if isinstance(targets, str) else list(targets)
        first = rows.elts[0]
        values = first.elts if isinstance(first, ast.Tuple) else [first]
        pinned = {name for name, value in zip(targets, values, strict=True) if has_snapshot(value)}
        kept = [(name, value) for name, value in zip(targets, values, strict=True) if name not in pinned]
        binding = "\n".join(f"{name} = {ast.unparse(_Unsnapshot().visit(value))}" for name, value in kept)
        return binding, pinned
    return None


def registration_cases() -> Iterator[Registration]:
    for relative in REGISTRATION_TESTS:
        module = Module(relative)
        for name, node in module.definitions.items():
            if isinstance(node, ast.Assign) and has_snapshot(node) and isinstance(node.value, ast.Dict):
                # A table of offending functions and their texts, read by a parametrised test.
                readers = [
                    t for t, d in module.definitions.items() if t.startswith("test_") and name in names_in(d)
                ]
                about = sentence(readers[0]) if readers else "Refused at registration"
                for key, value in zip(node.value.keys, node.value.values, strict=True):
                    if isinstance(key, ast.Name) and has_snapshot(value):
                        used = module.used_definitions([key])
                        code = "\n\n\n".join(module.segment(d) for d in used)
                        code += REGISTER_IT.format(name=key.id)
                        code = module.with_imports(code)
                        title = f"{about}: `{key.id}`"
                        yield Registration(key.id, title, relative, code, tuple(pinned_strings(value)))
            elif isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef) and name.startswith("test_"):
                messages = pinned_strings(node)
                if not messages or "InvalidSignature" not in module.segment(node) + str(
                    [module.segment(d) for d in module.used_definitions([node])]
                ):
                    continue
                used = [d for d in module.used_definitions([node]) if d is not node]
                parts = [module.segment(d) for d in used]
                row = first_parametrized_row(node)
                body = body_without_pins(module, node, row[1] if row else None)
                if row is not None:
                    body = f"{row[0]}\n{body}"
                if body.strip():
                    parts.append(body)
                code = module.with_imports("\n\n\n".join(parts))
                yield Registration(name, sentence(name), relative, code, tuple(messages))


def formatted(blocks: list[str]) -> list[str]:
    """The blocks as `ruff format` writes them (joined test parts lose some blank lines)."""
    with tempfile.TemporaryDirectory() as folder:
        files = [Path(folder) / f"case_{number}.py" for number in range(len(blocks))]
        for file, block in zip(files, blocks, strict=True):
            file.write_text(block + "\n", encoding="utf-8")
        config = str(ROOT / "pyproject.toml")
        command = [sys.executable, "-m", "ruff", "format", "--no-cache", "--config", config, folder]
        subprocess.run(command, capture_output=True, check=True)
        return [file.read_text(encoding="utf-8").rstrip("\n") for file in files]


@dataclass(frozen=True, slots=True)
class RaiseSite:
    """A place in mcpdi that builds an `InvalidSignature`, with its message as a template."""

    where: str
    template: str
    fragments: tuple[str, ...]


def template_of(node: ast.expr) -> tuple[str, list[str]]:
    """The message an expression builds, placeholders as `{expression}`, and its literal parts."""
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return node.value, [node.value]
    if isinstance(node, ast.JoinedStr):
        text, parts = "", []
        for value in node.values:
            if isinstance(value, ast.Constant) and isinstance(value.value, str):
                text += value.value
                parts.append(value.value)
            elif isinstance(value, ast.FormattedValue):
                text += "{" + ast.unparse(value.value) + "}"
        return text, parts
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add):
        left, left_parts = template_of(node.left)
        right, right_parts = template_of(node.right)
        return left + right, left_parts + right_parts
    return "{" + ast.unparse(node) + "}", []


def raise_sites() -> Iterator[RaiseSite]:
    """Every `InvalidSignature(...)` built in the packages, with the message it is built from."""
    for path in sorted((ROOT / "mcpdi").rglob("*.py")):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for function in ast.walk(tree):
            if not isinstance(function, ast.FunctionDef | ast.AsyncFunctionDef):
                continue
            assignments = [
                (statement.lineno, target.id, statement.value)
                for statement in ast.walk(function)
                if isinstance(statement, ast.Assign)
                for target in statement.targets
                if isinstance(target, ast.Name)
            ]
            for call in ast.walk(function):
                if not (
                    isinstance(call, ast.Call)
                    and isinstance(call.func, ast.Name)
                    and call.func.id == "InvalidSignature"
                    and call.args
                ):
                    continue
                first = call.args[0]
                built: ast.expr = first
                if isinstance(first, ast.Name):  # the nearest `msg = ...` above the call
                    earlier = [(line, value) for line, name, value in assignments if name == first.id]
                    earlier = [(line, value) for line, value in earlier if line < call.lineno]
                    built = max(earlier, key=lambda pair: pair[0])[1] if earlier else first
                template, parts = template_of(built)
                fragments = tuple(part.strip() for part in parts if part.strip())
                where = f"{path.relative_to(ROOT).as_posix()} ({function.name})"
                yield RaiseSite(where, template, fragments)


def unpinned(sites: list[RaiseSite], pinned: list[str]) -> list[RaiseSite]:
    """The sites whose longest literal part is in no pinned message."""
    missing: list[RaiseSite] = []
    for site in sites:
        longest = max(site.fragments, key=len, default="")
        if not longest or not any(longest in message for message in pinned):
            missing.append(site)
    return missing


def normalised(message: str) -> str:
    """Pinned texts carry the test file's location in several spellings; show one."""
    message = re.sub(r"(<here>|[\w/]*test_[\w]+\.py:(N|\d+))", "app.py:LINE", message)
    return re.sub(r"(<module>|test_[\w]+):", "app:", message)


def error_objects(node: ast.AST) -> Iterator[tuple[int, str]]:
    """Every `{"code": <int>, "message": <str>, ...}` literal under `node`."""
    for pinned in ast.walk(node):
        if not isinstance(pinned, ast.Dict):
            continue
        fields = {
            key.value: value
            for key, value in zip(pinned.keys, pinned.values, strict=True)
            if isinstance(key, ast.Constant)
        }
        code, message = fields.get("code"), fields.get("message")
        if code is None or isinstance(code, ast.Name) or not isinstance(message, ast.Constant):
            continue
        value = ast.literal_eval(code)
        if isinstance(value, int) and isinstance(message.value, str):
            yield value, message.value


def wire_errors() -> Iterator[WireError]:
    for path in sorted((ROOT / "tests").rglob("test_*.py")):
        if path.parent.name == "engine":
            continue  # the engine speaks no wire protocol; its tests pin the example dispatcher's codes
        module = Module(str(path.relative_to(ROOT)))
        tests = {
            name: node
            for name, node in module.definitions.items()
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef) and name.startswith("test_")
        }
        for name, node in module.definitions.items():
            if name in tests:
                for code, message in error_objects(node):
                    yield WireError(code, message, name, module.relative)
            elif isinstance(node, ast.Assign) and has_snapshot(node):
                # A pinned error shared by several tests: the first test using it names the cause.
                users = [test for test, body in tests.items() if name in names_in(body)]
                for code, message in error_objects(node) if users else ():
                    yield WireError(code, message, users[0], module.relative)


def render() -> str:
    out: list[str] = [
        "# Error catalogue",
        "",
        "<!-- Generated by docs/gen_errors.py from the tests that pin these texts; do not edit. -->",
        "",
        "Two kinds of error, by whose mistake they are. `InvalidSignature` is the server author's:",
        "a tool, prompt, resource or plan that cannot work is refused when it is registered, before",
        "any client connects. Wire errors are the client's (or, for `-32603`, the server's fault",
        "hidden from the client): JSON-RPC `error` objects answering one request.",
        "",
        "This page is rendered from the tests that pin these texts, and from the places in the",
        "code that raise them, so it shows what mcpdi says today. File names and line numbers",
        "appear as `app.py:LINE`.",
        "",
        "## Registration errors: `InvalidSignature`",
        "",
        "`InvalidSignature` (from `mcpdi`, or `mcpdi.engine`) carries data besides its text:",
        "`function` (the function at fault), `parameter` (its name, when one parameter is at",
        "fault) and `cycle` (the `module:qualname` of each hop of a cycle).",
        "",
        "The code of each case is the test's own, without its assertions: run it and",
        "registration raises `InvalidSignature` with the text shown.",
        "",
    ]
    cases = list(registration_cases())
    for case, code in zip(cases, formatted([case.code for case in cases]), strict=True):
        out += [f"### {case.title}", "", f"Pinned in `{case.source}`.", "", "```python", code, "```", ""]
        for message in case.messages:
            out += ["```text", normalised(message), "```", ""]
        out += [f"**Fix:** {FIXES.get(case.key, 'MISSING: add a fix to FIXES in docs/gen_errors.py')}", ""]
    pinned = [message for case in cases for message in case.messages]
    missing = unpinned(list(raise_sites()), pinned)
    if missing:
        out += [
            "### Not pinned by a test yet",
            "",
            "These registration errors exist in the code, but no test pins their text yet, so",
            "they are shown as the templates the code fills in:",
            "",
        ]
        for site in missing:
            out += [f"- `{site.where}`:", "", "    ```text", f"    {site.template}", "    ```", ""]
    out += [
        "## Wire errors",
        "",
        "A request that fails is answered with a JSON-RPC `error` object. Over Streamable HTTP",
        "at 2026-07-28 the HTTP status follows the code (`mcpdi.lowlevel.http_status_for`);",
        "in the handshake era and on stdio the error travels in the body alone. Raise",
        "`MCPError(code, message, data)` from a handler to answer with your own error; anything",
        "else a handler raises becomes `-32603` and is logged, never shown to the client.",
        "",
    ]
    from mcpdi.lowlevel import http_status_for

    by_code: dict[int, list[WireError]] = {}
    for error in wire_errors():
        by_code.setdefault(error.code, []).append(error)
    application = sorted(set(by_code) - set(WIRE_CODES), reverse=True)
    for code in [*WIRE_CODES, *application]:
        name, fix = WIRE_CODES.get(code, APPLICATION)
        out += [f"### `{code}` {name}", "", f"HTTP status at 2026-07-28: {http_status_for(code)}.", ""]
        seen: set[str] = set()
        rows = ["| Message | Caused by (the test that pins it) |", "| --- | --- |"]
        for error in by_code.get(code, []):
            if error.message in seen:
                continue
            seen.add(error.message)
            message = error.message.replace("|", "\\|")
            rows.append(f"| `{message}` | {sentence(error.test)} (`{error.source}`). |")
        out += [*rows, ""] if len(rows) > 2 else ["No test pins a message with this code yet.", ""]
        out += [f"**Fix:** {fix}", ""]
    return "\n".join(out).rstrip("\n") + "\n"


def main() -> None:
    sys.path.insert(0, str(ROOT))
    PAGE.write_text(render(), encoding="utf-8")
    print(f"wrote {PAGE.relative_to(ROOT)}")


if __name__ == "__main__":
    main()
