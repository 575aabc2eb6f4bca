"""`python -m mcpdi_transport`: the `mcpdi` command."""

from mcpdi_transport._cli import main

if __name__ == "__main__":
    main()
