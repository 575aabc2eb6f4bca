"""A server called in memory, as a client would call it: `MCPServer.call_tool`, `get_prompt`, ...

`_calls` holds what `MCPServer`'s in-memory methods run, `_client` the in-memory client and its
scripted peer, `_direct` the direct `tools/call` path, `_lifespan` the lifespan kept open between
calls. `mcpdi.testing` builds on these; nothing here imports it. Each module is imported where
first used, so a server that is only served never loads them.
"""
