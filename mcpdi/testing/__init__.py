"""mcpdi.testing: call a server in memory, script the client's answers, override resolvers."""

from mcpdi._in_memory._client import Exchange as Exchange
from mcpdi._in_memory._client import InMemoryClient as InMemoryClient
from mcpdi.testing._override import Overrides as Overrides
from mcpdi.testing._override import override as override
from mcpdi.testing._replies import Reply as Reply
from mcpdi.testing._replies import accept as accept
from mcpdi.testing._replies import cancel as cancel
from mcpdi.testing._replies import decline as decline
from mcpdi.testing._replies import roots as roots
from mcpdi.testing._replies import sampled as sampled
from mcpdi.testing._scripted import AskedQuestion as AskedQuestion
from mcpdi.testing._scripted import ScriptedClient as ScriptedClient
from mcpdi.testing._scripted import UnexpectedQuestion as UnexpectedQuestion

__all__ = (
    "AskedQuestion",
    "Exchange",
    "InMemoryClient",
    "Overrides",
    "Reply",
    "ScriptedClient",
    "UnexpectedQuestion",
    "accept",
    "cancel",
    "decline",
    "override",
    "roots",
    "sampled",
)
