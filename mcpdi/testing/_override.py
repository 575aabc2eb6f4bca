"""`override(server, resolver, replacement)` and `Overrides`, the form a pytest fixture holds."""

from __future__ import annotations

from collections.abc import Callable
from contextlib import AbstractContextManager, ExitStack
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from mcpdi._server import MCPServer

__all__ = ("Overrides", "override")


def override(
    server: MCPServer[Any], resolver: Callable[..., Any], replacement: Callable[..., Any]
) -> AbstractContextManager[None]:
    """Within the `with` block, every tool, prompt and resource of `server` using `resolver`
    runs `replacement` instead; the original plans come back on exit, also after an error.

    The replacement is compiled in place of the resolver on entering, so a signature that
    cannot be filled raises `InvalidSignature` here, not when a call runs.
    """
    from mcpdi._server import MCPServer  # at call time: the server module imports the test kit

    if not isinstance(server, MCPServer):  # pyright: ignore[reportUnnecessaryIsInstance]  # untyped tests
        msg = (
            f"override() needs an MCPServer, got {type(server).__name__}; a low-level Server "
            "has no resolver plans to override"
        )
        raise TypeError(msg)
    return server.override(resolver, replacement)


class Overrides:
    """Overrides that last until `restore()`: what a pytest fixture yields.

    ```python
    @pytest.fixture
    def overrides():
        with Overrides() as active:
            yield active
    ```
    """

    def __init__(self) -> None:
        self._stack = ExitStack()

    def __call__(
        self, server: MCPServer[Any], resolver: Callable[..., Any], replacement: Callable[..., Any]
    ) -> None:
        """Start an override that lasts until `restore()`."""
        self._stack.enter_context(override(server, resolver, replacement))

    def restore(self) -> None:
        """End every override started here, the latest first."""
        self._stack.close()

    def __enter__(self) -> Overrides:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.restore()
