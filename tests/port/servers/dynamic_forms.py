"""A form whose fields are known only when the resolver runs (`create_model`), written against the SDK."""

from __future__ import annotations

from typing import Annotated, Any

from mcp.server.mcpserver import Elicit, MCPServer, Resolve
from pydantic import BaseModel, create_model

mcp = MCPServer("Survey")


def ask_answers(questions: str) -> Elicit[BaseModel]:
    fields: dict[str, Any] = {name: (str, ...) for name in questions.split(",")}
    return Elicit("Please answer the survey", create_model("Survey", **fields))


class Consent(BaseModel):
    publish: bool


def ask_consent() -> Elicit[Consent]:
    return Elicit("May we publish your answers?", Consent)


@mcp.tool()
def survey(
    questions: str,
    answers: Annotated[BaseModel, Resolve(ask_answers)],
    consent: Annotated[Consent, Resolve(ask_consent)],
) -> str:
    shown = ", ".join(f"{name}={value}" for name, value in answers.model_dump().items())
    return f"{shown} (publish={consent.publish})"
