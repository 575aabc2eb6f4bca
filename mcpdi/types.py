"""The protocol's wire types, re-exported from `mcp_types` so that servers import one package."""

from mcp_types import *  # noqa: F403  # pyright: ignore[reportWildcardImportFromLibrary]
from mcp_types import InputRequiredResult as InputRequiredResult
from mcp_types import __all__ as __all__
