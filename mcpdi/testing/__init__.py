"""mcpdi/testing."""
