"""nginx in front of two mcpdi processes, routing on `Mcp-Param-Region`, sharing Redis and a key ring.

The configuration is `examples/deploy/nginx-mcp.conf`, the one `docs/deploy.md` shows.
"""

from __future__ import annotations

import secrets
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import anyio
import pytest
from scale_services import accept_ok, call_tool, free_port, nginx, python_server, redis_server, result_text

from mcpdi_transport import Client

pytestmark = pytest.mark.slow

BACKEND_SCRIPT = Path(__file__).parent / "gateway_backend.py"


CONFIG = Path(__file__).parents[2] / "examples" / "deploy" / "nginx-mcp.conf"


def gateway_config(port: int, eu: int, us: int) -> str:
    """The configuration `docs/deploy.md` shows, with this test's addresses."""
    text = CONFIG.read_text()
    for marker, address in (("{{LISTEN}}", port), ("{{EU}}", eu), ("{{US}}", us)):
        text = text.replace(marker, f"127.0.0.1:{address}")
    return text


@dataclass
class Deployment:
    gateway: str
    backends: dict[str, str]


@pytest.fixture(scope="module")
def deployment(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Deployment]:
    keys = ",".join(secrets.token_hex(32) for _ in range(2))
    ports = {"eu": free_port(), "us": free_port()}
    gateway_port = free_port()
    config = gateway_config(gateway_port, ports["eu"], ports["us"])
    with redis_server() as redis:
        env = {"MCPDI_STATE_KEYS": keys, "REDIS_URL": redis.url}
        with (
            python_server(BACKEND_SCRIPT, ports["eu"], {**env, "BACKEND": "eu1"}),
            python_server(BACKEND_SCRIPT, ports["us"], {**env, "BACKEND": "us1"}),
            nginx(config, tmp_path_factory.mktemp("nginx"), gateway_port),
        ):
            yield Deployment(
                f"http://127.0.0.1:{gateway_port}/mcp",
                {name: f"http://127.0.0.1:{port}/mcp" for name, port in ports.items()},
            )


post = call_tool


def text_of(answer: dict[str, Any]) -> str:
    return answer["result"]["content"][0]["text"]


@pytest.mark.parametrize(("region", "backend"), [("eu", "eu1"), ("us", "us1")])
def test_the_gateway_routes_on_the_region_header(deployment: Deployment, region: str, backend: str) -> None:
    answer = post(
        deployment.gateway, "where", {"arguments": {"region": region}}, {"mcp-param-region": region}
    )
    assert text_of(answer) == f"{region} served by {backend}"


def test_a_header_that_disagrees_with_the_body_is_refused_behind_the_gateway(deployment: Deployment) -> None:
    answer = post(deployment.gateway, "where", {"arguments": {"region": "us"}}, {"mcp-param-region": "eu"})
    assert answer["error"]["code"] == -32020


def test_rounds_of_one_call_complete_on_different_backends_and_replay_is_refused(
    deployment: Deployment,
) -> None:
    first = post(deployment.backends["eu"], "pay", {"arguments": {"amount": 5}})["result"]
    assert first["resultType"] == "input_required"
    (key,) = first["inputRequests"]
    final_round = {
        "arguments": {"amount": 5},
        "inputResponses": {key: {"action": "accept", "content": {"ok": True}}},
        "requestState": first["requestState"],
    }
    assert text_of(post(deployment.backends["us"], "pay", final_round)) == "paid 5 on us1"
    for backend in ("us", "eu"):
        replay = post(deployment.backends[backend], "pay", final_round)
        assert replay["error"]["code"] == -32602


def test_rounds_through_the_gateway_complete_wherever_they_land(deployment: Deployment) -> None:
    # Without a region header the gateway goes round-robin over two backends: after `whoami`
    # lands on X, round 1 lands on the other backend and round 2 on X again.
    finals: list[tuple[str, str]] = []
    for _ in range(4):
        before = text_of(post(deployment.gateway, "whoami", {}))
        first = post(deployment.gateway, "pay", {"arguments": {"amount": 7}})["result"]
        (key,) = first["inputRequests"]
        final_round = {
            "arguments": {"amount": 7},
            "inputResponses": {key: {"action": "accept", "content": {"ok": True}}},
            "requestState": first["requestState"],
        }
        finals.append((before, text_of(post(deployment.gateway, "pay", final_round))))
    assert all(final == f"paid 7 on {before}" for before, final in finals)
    assert {before for before, _ in finals} == {"eu1", "us1"}


@pytest.mark.anyio
async def test_a_handshake_era_session_stays_on_the_backend_that_holds_it(deployment: Deployment) -> None:
    holders: set[str] = set()
    for _ in range(4):  # new sessions land round-robin; each then stays where it began
        with anyio.fail_after(30):
            async with Client(deployment.gateway, mode="legacy", elicitation_callback=accept_ok) as client:
                served = {result_text(await client.call_tool("whoami", {})) for _ in range(6)}
                assert len(served) == 1
                (holder,) = served
                # A question mid-call: its answer is POSTed back and must reach the same process.
                assert result_text(await client.call_tool("pay", {"amount": 2})) == f"paid 2 on {holder}"
                holders.add(holder)
    assert holders == {"eu1", "us1"}
