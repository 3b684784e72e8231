"""CLI subcommands, one module each, every one exposing ``register(subparsers)``.

``register`` adds a subparser and sets ``func`` to a function taking the parsed arguments and returning the
exit code. Raise [`optsched.InstanceError`][] for bad input: the CLI prints it on one line, exits 2.
"""
