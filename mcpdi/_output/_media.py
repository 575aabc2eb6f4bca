"""`Image` and `Audio`: return a file or bytes from a tool and it reaches the client as a content block."""

from __future__ import annotations

import base64
from pathlib import Path
from typing import ClassVar

from mcp_types import AudioContent, ImageContent

__all__ = ("Audio", "Image")

_IMAGE_TYPES = {
    ".png": "image/png",
    ".jpg": "image/jpeg",
    ".jpeg": "image/jpeg",
    ".gif": "image/gif",
    ".webp": "image/webp",
}
_AUDIO_TYPES = {
    ".wav": "audio/wav",
    ".mp3": "audio/mpeg",
    ".ogg": "audio/ogg",
    ".flac": "audio/flac",
    ".aac": "audio/aac",
    ".m4a": "audio/mp4",
}


class _Media:
    """Either a path (read when the result is built) or bytes, and the MIME type they travel with."""

    _kind: ClassVar[str] = ""
    _types: ClassVar[dict[str, str]] = {}
    _default: ClassVar[str] = ""

    def __init__(
        self,
        path: str | Path | None = None,
        data: bytes | None = None,
        format: str | None = None,  # the reference SDK's spelling
    ) -> None:
        if (path is None) == (data is None):
            given = "both" if path is not None else "neither"
            msg = f"{type(self).__name__}(...) takes exactly one of path= or data=, got {given}"
            raise ValueError(msg)
        self.path = Path(path) if path is not None else None
        self.data = data
        if format:
            self.mime_type = f"{self._kind}/{format.lower()}"
        elif self.path is not None:
            self.mime_type = self._types.get(self.path.suffix.lower(), "application/octet-stream")
        else:
            self.mime_type = self._default

    def _base64(self) -> str:
        raw = self.path.read_bytes() if self.path is not None else self.data or b""
        return base64.b64encode(raw).decode()

    def __repr__(self) -> str:
        source = (
            f"path={str(self.path)!r}" if self.path is not None else f"data=<{len(self.data or b'')} bytes>"
        )
        return f"{type(self).__name__}({source}, mime_type={self.mime_type!r})"


class Image(_Media):
    """An image to return from a tool: `Image(path="chart.png")` or `Image(data=raw, format="png")`."""

    _kind = "image"
    _types = _IMAGE_TYPES
    _default = "image/png"

    def to_image_content(self) -> ImageContent:
        return ImageContent(type="image", data=self._base64(), mime_type=self.mime_type)


class Audio(_Media):
    """A sound to return from a tool: `Audio(path="note.wav")` or `Audio(data=raw, format="mpeg")`."""

    _kind = "audio"
    _types = _AUDIO_TYPES
    _default = "audio/wav"

    def to_audio_content(self) -> AudioContent:
        return AudioContent(type="audio", data=self._base64(), mime_type=self.mime_type)
