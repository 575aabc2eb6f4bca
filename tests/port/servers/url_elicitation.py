"""URL-mode elicitation, written against the SDK: an error that hands over URLs, and asking mid-call."""

from __future__ import annotations

from mcp.server.mcpserver import Context, MCPServer
from mcp.shared.exceptions import UrlElicitationRequiredError
from mcp_types import ElicitRequestURLParams

mcp = MCPServer("Payments")


@mcp.tool()
def pay(amount: int) -> str:
    if amount > 100:
        raise UrlElicitationRequiredError(
            [
                ElicitRequestURLParams(
                    mode="url",
                    message="Confirm the payment in your bank's app",
                    url="https://bank.example/confirm/42",
                    elicitation_id="pay-42",
                )
            ]
        )
    return f"paid {amount}"


@mcp.tool()
def connect_both() -> str:
    raise UrlElicitationRequiredError(
        [
            ElicitRequestURLParams(
                mode="url", message="GitHub", url="https://github.example/auth", elicitation_id="gh"
            ),
            ElicitRequestURLParams(
                mode="url", message="Drive", url="https://drive.example/auth", elicitation_id="dr"
            ),
        ],
        message="Two sign-ins needed",
    )


@mcp.tool()
async def sign_in(ctx: Context) -> str:
    answer = await ctx.elicit_url("Sign in to continue", "https://auth.example/login", "login-1")
    if answer.action == "accept":
        await ctx.session.send_elicit_complete("login-1")
    return f"sign-in: {answer.action}"
