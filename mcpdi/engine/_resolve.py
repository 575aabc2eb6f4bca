"""The `Resolve` marker: `Annotated[T, Resolve(fn)]` says "fn fills this parameter"."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any


@dataclass(frozen=True, slots=True)
class Resolve:
    """Fill the annotated parameter with `fn`'s result.

    `inline=True` calls a sync `fn` on the event-loop thread instead of a worker thread
    (for cheap, non-blocking resolvers); it has no effect on async resolvers.
    `validate=True` asks the host to check each value `fn` returns against the parameter's
    annotation before handing it over (`Edge.validate`; the engine itself checks nothing).
    """

    fn: Callable[..., Any]
    inline: bool = field(default=False, kw_only=True)
    validate: bool = field(default=False, kw_only=True)
