"""The ``optplan`` command line. Each subcommand lives in ``optplan/commands/<name>.py`` with
``add_parser(subparsers)`` and ``run(args) -> int``; this module only wires them together.

Exit codes: 0 ok, 1 internal error, 2 bad input (one line on stderr naming file, line, field).
"""

from __future__ import annotations

import argparse
import importlib
import os
import pkgutil
import sys

from optplan import __version__
from optplan.commands._stdout import command_stdout
from optplan.errors import OptplanError

__all__ = ["main", "build_parser"]

EXIT_OK, EXIT_INTERNAL, EXIT_BAD_INPUT = 0, 1, 2


class _Parser(argparse.ArgumentParser):
    def error(self, message):  # argparse's own exit code is 2 as well; keep its usage line
        self.print_usage(sys.stderr)
        self.exit(EXIT_BAD_INPUT, f"optplan: error: {message}\n")


def build_parser() -> argparse.ArgumentParser:
    import optplan.commands as commands

    parser = _Parser(prog="optplan", description="Solver-backed optimality research toolkit "
                     "for DNN memory planning: exact optima, heuristics, bounds, experiments.")
    parser.add_argument("--version", action="version", version=f"optplan {__version__}")
    subparsers = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=_Parser)
    subparsers.required = True
    for module in sorted(pkgutil.iter_modules(commands.__path__), key=lambda m: m.name):
        if not module.name.startswith("_"):
            importlib.import_module(f"optplan.commands.{module.name}").add_parser(subparsers)
    return parser


def main(argv: list[str] | None = None) -> int:
    try:
        try:
            return _run(argv)
        finally:
            sys.stdout.flush()  # a reader that went away shows here, not at interpreter exit
    except BrokenPipeError:
        # `optplan ... | head`: the reader has all it wanted. Point stdout at /dev/null so
        # that the interpreter's own final flush does not fail again.
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return EXIT_OK


def _run(argv: list[str] | None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    try:
        with command_stdout():  # a solver library's own prints go to stderr
            return int(args.run(args) or EXIT_OK)
    except OptplanError as error:
        print(f"optplan: error: {error}", file=sys.stderr)
        return EXIT_BAD_INPUT
    except KeyboardInterrupt:
        print("optplan: interrupted", file=sys.stderr)
        return 130

if __name__ == "__main__":
    sys.exit(main())
