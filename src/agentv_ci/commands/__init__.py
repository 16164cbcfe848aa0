"""One module per subcommand. Modules import only typer/stdlib at top level."""
