"""`Client(extensions=[...])`: what a client extension (SEP-2133) advertises, observes and resolves.

The classes have the official SDK's shape and words (`mcp.client.ClientExtension`, `advertise`,
`NotificationBinding`, `ResultClaim`), and the SDK's own extension objects are taken as they are.
An extension contributes its settings under `capabilities.extensions[identifier]` (in
`initialize` and in every 2026-07-28 request's `_meta`), handlers for server notifications the
core protocol does not define, and result shapes (`resultType`) of its own for `tools/call`.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Final, Generic, Literal, TypeVar, get_args

from mcp_types import CORE_RESULT_TYPES, CallToolResult, InputRequiredResult, Result
from mcp_types.version import MODERN_PROTOCOL_VERSIONS
from pydantic import BaseModel

from mcpdi.lowlevel import validate_extension_identifier

if TYPE_CHECKING:
    from mcpdi_transport._client._sdk_session import SessionView

__all__ = (
    "ClaimContext",
    "ClientExtension",
    "FoldedExtensions",
    "NotificationBinding",
    "ResultClaim",
    "UnexpectedClaimedResult",
    "advertise",
    "fold_extensions",
)

_CLAIM_METHODS: Final = frozenset({"tools/call"})
_RESERVED_WIRE_KEYS: Final = frozenset({"requestState", "inputRequests"})

ClaimedT = TypeVar("ClaimedT", bound=Result)
NotifyParamsT = TypeVar("NotifyParamsT", bound=BaseModel)


@dataclass(frozen=True, kw_only=True)
class ClaimContext:
    """What a claim's resolver is handed: the client's `session` for follow-up requests."""

    session: SessionView
    tool_name: str
    read_timeout_seconds: float | None


@dataclass(frozen=True, kw_only=True)
class ResultClaim(Generic[ClaimedT]):
    """One extra `tools/call` result shape, keyed by its wire `resultType` (2026-07-28 only).

    `resolve` finishes the claimed result (it may send follow-ups through `ctx.session`) and
    returns the ordinary `CallToolResult` that `client.call_tool` hands back.
    """

    result_type: str
    model: type[ClaimedT]
    resolve: Callable[[ClaimedT, ClaimContext], Awaitable[CallToolResult]]
    method: Literal["tools/call"] = "tools/call"
    protocol_versions: frozenset[str] | None = None

    def __post_init__(self) -> None:
        problem = _claim_problem(self)
        if problem is not None:
            raise ValueError(problem)


def _claim_problem(claim: ResultClaim[Any]) -> str | None:
    """The SDK's refusal of a malformed claim, word for word, or None."""
    if claim.method not in _CLAIM_METHODS:
        return f"claims attach to {sorted(_CLAIM_METHODS)} only; got method {claim.method!r}"
    if claim.result_type in CORE_RESULT_TYPES:
        return f"resultType {claim.result_type!r} is core protocol vocabulary"
    if Result not in claim.model.__mro__:
        return f"{claim.model.__name__} must subclass mcp_types.Result"
    if issubclass(claim.model, CallToolResult | InputRequiredResult):
        return "claim models must not subclass core result types"
    for name, model_field in claim.model.model_fields.items():
        clash = {model_field.alias or name, model_field.serialization_alias} & _RESERVED_WIRE_KEYS
        if clash:
            return (
                f"{claim.model.__name__}.{name} aliases {min(clash)!r}, a typed field of the core "
                "result surface; a colliding value would fail core validation before the "
                "claim adapter runs"
            )
    tag_field = claim.model.model_fields.get("result_type")
    if tag_field is None or get_args(tag_field.annotation) != (claim.result_type,):
        return f"{claim.model.__name__}.result_type must be Literal[{claim.result_type!r}]"
    versions = claim.protocol_versions
    if versions is not None and not versions:
        return "empty protocol_versions could never activate; use None for all"
    if versions is not None and not versions.issubset(MODERN_PROTOCOL_VERSIONS):
        unrecognized = sorted(versions.difference(MODERN_PROTOCOL_VERSIONS))
        return (
            f"protocol_versions {unrecognized} are not modern protocol revisions; claimed shapes "
            "cannot be delivered on a legacy wire (None means every modern version)"
        )
    return None


class UnexpectedClaimedResult(RuntimeError):
    """A claimed result reached `client.session.call_tool` without `allow_claimed=True`.

    The parsed value is `result`; the server may already hold state it references.
    """

    def __init__(self, result: Result) -> None:
        super().__init__(
            f"Server returned a claimed result ({type(result).__name__}); pass the owning extension to "
            "Client(extensions=[...]) for transparent resolution, or call with allow_claimed=True "
            "and handle the shape. The carried result may reference server-side state needing cleanup."
        )
        self.result = result


@dataclass(frozen=True, kw_only=True)
class NotificationBinding(Generic[NotifyParamsT]):
    """Deliver the server's `method` notifications (one the core protocol does not define) to `handler`.

    Observation only: the validated params arrive one at a time, in the order received, through a
    bounded queue that drops the oldest (with a warning) when the handler falls behind.
    """

    method: str
    params_type: type[NotifyParamsT]
    handler: Callable[[NotifyParamsT], Awaitable[None]]


class ClientExtension:
    """Base class of a client extension: set `identifier`, override what it contributes."""

    identifier: str

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        identifier = cls.__dict__.get("identifier")
        if identifier is not None:
            validate_extension_identifier(identifier, owner=cls.__name__)

    def settings(self) -> dict[str, Any]:
        """Advertised at `capabilities.extensions[identifier]` (read once, when the Client is built)."""
        return {}

    def claims(self) -> Sequence[ResultClaim[Any]]:
        return ()

    def notifications(self) -> Sequence[NotificationBinding[Any]]:
        return ()


class _AdvertiseOnly(ClientExtension):
    def __init__(self, identifier: str, settings: dict[str, Any]) -> None:
        self.identifier = identifier
        self._settings = settings

    def settings(self) -> dict[str, Any]:
        return self._settings


def advertise(identifier: str, settings: dict[str, Any] | None = None) -> ClientExtension:
    """An extension that only advertises `identifier` (with `settings`): for a server that asks for it."""
    validate_extension_identifier(identifier, owner="advertise")
    return _AdvertiseOnly(identifier, {} if settings is None else settings)


@dataclass(frozen=True, slots=True)
class FoldedExtensions:
    """A client's extensions, folded once at construction into what each era's wire needs."""

    ad: Mapping[str, dict[str, Any]]
    claims: Mapping[str, tuple[Any, ...]]
    """Claim-bearing identifier -> its claims (`ResultClaim`s, mcpdi's or the SDK's)."""
    bindings: Mapping[str, Any]
    """Notification method -> its `NotificationBinding`."""

    def advertised(self, version: str | None) -> dict[str, dict[str, Any]]:
        """The `capabilities.extensions` object at `version` (None: the handshake, where no claim is
        active): a claim-bearing extension is left out where none of its claims could be delivered."""
        return {
            identifier: settings
            for identifier, settings in self.ad.items()
            if identifier not in self.claims
            or any(claim_active(claim, version) for claim in self.claims[identifier])
        }

    def claims_at(self, version: str | None) -> dict[str, Any]:
        """The claims active at `version`, by `resultType`."""
        return {
            claim.result_type: claim
            for claims in self.claims.values()
            for claim in claims
            if claim_active(claim, version)
        }


NO_EXTENSIONS: Final = FoldedExtensions(ad={}, claims={}, bindings={})


def claim_active(claim: Any, version: str | None) -> bool:
    versions: frozenset[str] | None = claim.protocol_versions
    return version in MODERN_PROTOCOL_VERSIONS and (versions is None or version in versions)


def fold_extensions(extensions: Sequence[Any] | None) -> FoldedExtensions:
    """Check and fold `Client(extensions=...)`, with the SDK's errors (duplicates name both owners)."""
    if isinstance(extensions, Mapping):
        msg = (
            "extensions= takes a sequence of ClientExtension instances. The mapping form was "
            "replaced: use advertise(identifier, settings) for advertise-only entries"
        )
        raise TypeError(msg)
    if not extensions:
        return NO_EXTENSIONS
    ad: dict[str, dict[str, Any]] = {}
    claims: dict[str, tuple[Any, ...]] = {}
    bindings: dict[str, Any] = {}
    claim_owners: dict[str, str] = {}
    binding_owners: dict[str, str] = {}
    for extension in extensions:
        identifier = _identifier_of(extension)
        if identifier in ad:
            msg = f"extension identifier {identifier!r} is passed more than once"
            raise ValueError(msg)
        ad[identifier] = dict(extension.settings())
        extension_claims = tuple(extension.claims())
        for claim in extension_claims:
            _claim_once(claim_owners, claim.result_type, identifier, _CLAIM)
        if extension_claims:
            claims[identifier] = extension_claims
        for binding in extension.notifications():
            _claim_once(binding_owners, binding.method, identifier, _BIND)
            bindings[binding.method] = binding
    return FoldedExtensions(ad=ad, claims=claims, bindings=bindings)


def _identifier_of(extension: Any) -> str:
    identifier = getattr(extension, "identifier", None)
    if identifier is None:
        msg = (
            f"{type(extension).__name__} has no `identifier`; a ClientExtension must set the "
            "`identifier` class attribute (or assign one in `__init__`) before it can be used"
        )
        raise ValueError(msg)
    validate_extension_identifier(identifier, owner=type(extension).__name__)
    return identifier


_CLAIM: Final = ("claim", "resultType", "a wire tag can have only one resolver")
_BIND: Final = ("bind", "notification method", "a method can have only one observer")


def _claim_once(owners: dict[str, str], key: str, identifier: str, words: tuple[str, str, str]) -> None:
    verb, what, tail = words
    owner = owners.get(key)
    if owner is not None:
        both = (
            f"extension {identifier!r} {verb}s"
            if owner == identifier
            else f"extensions {owner!r} and {identifier!r} both {verb}"
        )
        msg = f"{both} {what} {key!r}; {tail}"
        raise ValueError(msg)
    owners[key] = identifier
