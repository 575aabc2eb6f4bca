"""A request's principal is set once, when its context is made, and read from there."""

from __future__ import annotations

from typing import Any, cast

from mcpdi import AccessToken, authenticated, authenticated_principal, principal_of
from mcpdi.lowlevel import Connection, ServerRequestContext
from mcpdi.lowlevel._connection import Peer

ALICE = AccessToken(token="t-alice", client_id="app", scopes=[], subject="alice")


def context(principal: Any = None) -> ServerRequestContext[None]:
    return ServerRequestContext.for_request(
        None, Connection.for_modern_request(), cast("Peer", object()), "tools/call", principal=principal
    )


def test_a_request_under_a_bearer_token_is_made_with_the_tokens_principal() -> None:
    with authenticated(ALICE):
        made = context()
    assert made.principal == principal_of(ALICE) == '["app","alice"]'
    assert authenticated_principal(made) == '["app","alice"]'


def test_a_principal_named_by_the_caller_wins_over_the_token() -> None:
    with authenticated(ALICE):
        made = context(principal=("app", "bob"))
    assert made.principal == ("app", "bob")
    assert authenticated_principal(made) == '["app","bob"]'


def test_an_anonymous_request_has_no_principal() -> None:
    made = context()
    assert made.principal is None
    assert authenticated_principal(made) is None


def test_the_binding_reads_the_context_not_the_token_current_when_it_runs() -> None:
    anonymous = context()
    with authenticated(ALICE):
        assert authenticated_principal(anonymous) is None
    with authenticated(ALICE):
        made = context()
    assert authenticated_principal(made) == '["app","alice"]'  # the token is no longer current here
