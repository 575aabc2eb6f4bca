"""mcpdi_transport/_client."""
