"""The subcommands of ``symattn``, one module each.

A module here is a subcommand when it defines ``register(subparsers)``:
:mod:`symattn.cli` imports every module of this package (sorted by name) and
calls it. ``register`` adds one parser with ``subparsers.add_parser(name,
help=..., description=...)``, its arguments, and ``set_defaults(func=run)``
where ``run(args: argparse.Namespace) -> int`` returns the exit status
(0 success, 1 a failed check). Raise :class:`symattn.errors.SymattnError` for
bad input: the command line prints its message and exits with status 2.
"""
