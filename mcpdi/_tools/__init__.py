"""Tools: compiling a tool, calling it, its names and how its failures read."""
