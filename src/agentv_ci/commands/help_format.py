"""Help screens in the user's words.

Typer labels every value with its Python type (`paths... <list[Path]>`, `--target <list[str]>`).
Commands built with `PlainHelpCommand` show what to type instead: an argument by its metavar alone,
an option by its metavar or a plain word for its type (`PATH`, `TEXT`, `N`, `NUMBER`).
"""

from __future__ import annotations

import re

from typer import _click as click
from typer.core import TyperArgument, TyperCommand, TyperOption

__all__ = ["EXIT_CODES_EPILOG", "PlainHelpCommand", "plain_placeholder"]

# `\b` keeps click from re-wrapping the block (one exit code per line).
EXIT_CODES_EPILOG = (
    "\b\n"
    "Exit codes:\n"
    "  0    every gate passed (a dry run: everything resolved, nothing errored)\n"
    "  1    a quality gate failed (a test below its threshold, pass rate, mean, regression)\n"
    "  2    bad input: invalid eval file, bad flag, unknown target, missing API key\n"
    "  3    inconclusive: targets or graders errored, or tests did not run\n"
    "  4    internal error (a bug): the traceback is saved to a log file\n"
    "  130  interrupted (finished results stay on disk)"
)

_WORDS = {"path": "PATH", "file": "FILE", "directory": "DIR", "str": "TEXT", "int": "N", "float": "NUMBER"}
_LABEL = re.compile(r"^<(?:list\[)?(?P<name>[A-Za-z_|.-]+)\]?(?: range)?>$")


def plain_placeholder(typer_label: str) -> str:
    """`<list[Path]>` -> `PATH`, `<float range>` -> `NUMBER`, `<a|b>` -> `[a|b]`."""
    match = _LABEL.match(typer_label)
    if match is None:
        return typer_label
    name = match.group("name")
    if "|" in name:
        return f"[{name}]"
    return _WORDS.get(name.lower(), name.upper())


class _PlainArgument(TyperArgument):
    def make_metavar(self, ctx: click.Context, *, usage: bool = False) -> str:
        # typer writes `{PATH}` (required) or `name:<type>`; the metavar alone says what to pass
        var = self.metavar or (self.name or "").upper()
        if self.nargs != 1 and not var.endswith("..."):
            var += "..."
        return f"[{var}]" if usage and not self.required else var


class _PlainOption(TyperOption):
    def make_metavar(self, ctx: click.Context) -> str:
        if self.metavar is not None:
            return self.metavar
        return plain_placeholder(super().make_metavar(ctx))


class PlainHelpCommand(TyperCommand):
    """A typer command whose help names placeholders in words, not Python types."""

    def __init__(self, *args: object, **kwargs: object) -> None:
        super().__init__(*args, **kwargs)  # type: ignore[arg-type]
        for param in self.params:
            # Same state, one overridden method: swapping the class is enough.
            if type(param) is TyperOption:
                param.__class__ = _PlainOption
            elif type(param) is TyperArgument:
                param.__class__ = _PlainArgument
