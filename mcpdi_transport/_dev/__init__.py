"""The `mcpdi dev` page: a server file served on Streamable HTTP beside a page to try it in a browser."""
