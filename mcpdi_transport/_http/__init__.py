"""mcpdi_transport/_http."""
