"""mcpdi's benchmark suite: run `python -m benchmarks` (see benchmarks/README.md)."""
