"""The extension-identifier grammar (SEP-2133) that server and client extensions share."""

from __future__ import annotations

import re
from typing import Final

__all__ = ("validate_extension_identifier",)

_LABEL: Final = r"[A-Za-z](?:[A-Za-z0-9-]*[A-Za-z0-9])?"
_NAME: Final = r"[A-Za-z0-9](?:[A-Za-z0-9._-]*[A-Za-z0-9])?"
_IDENTIFIER: Final = re.compile(rf"{_LABEL}(?:\.{_LABEL})*/{_NAME}")


def validate_extension_identifier(identifier: object, *, owner: str) -> None:
    """Raise `TypeError` unless `identifier` is a `vendor-prefix/name` string (the SDK's words)."""
    if not isinstance(identifier, str) or not _IDENTIFIER.fullmatch(identifier):
        msg = (
            f"{owner}.identifier must be a `vendor-prefix/name` string "
            f"(reverse-DNS prefix required), got {identifier!r}"
        )
        raise TypeError(msg)
