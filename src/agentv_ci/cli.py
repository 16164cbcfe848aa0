"""The typer app: registers one module per subcommand and owns the error boundary.

Command modules import only typer and the standard library at module level; each command body
imports what it needs, so `agentv-ci --help` stays fast.
"""

import os
import signal
import sys
import traceback
from collections.abc import Iterator
from contextlib import contextmanager
from types import FrameType
from typing import Annotated

import typer

from agentv_ci import __version__
from agentv_ci.commands import (
    action,
    compare,
    discover,
    flaky,
    gitlab,
    grade,
    init,
    merge,
    plugins,
    report,
    run,
    schema,
    validate,
)
from agentv_ci.commands.help_format import EXIT_CODES_EPILOG, PlainHelpCommand
from agentv_ci.errors import AgentvCiError, ExitCode

app = typer.Typer(
    name="agentv-ci",
    help="Run AgentEvals / AgentV evaluations in CI: select, run, grade, gate, report.",
    epilog=EXIT_CODES_EPILOG,
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
    rich_markup_mode=None,
)


def _version(value: bool) -> None:
    if value:
        typer.echo(f"agentv-ci {__version__}")
        raise typer.Exit(0)


@app.callback()
def main(
    version: Annotated[
        bool, typer.Option("--version", callback=_version, is_eager=True, help="Print the version and exit.")
    ] = False,
) -> None:
    """agentv-ci: CI-native runner for AgentEvals / AgentV eval files."""


app.command("init", cls=PlainHelpCommand)(init.init_command)
app.command("validate", cls=PlainHelpCommand)(validate.validate_command)
app.command("schema", cls=PlainHelpCommand)(schema.schema_command)
app.command("run", cls=PlainHelpCommand, epilog=EXIT_CODES_EPILOG)(run.run_command)
app.command("grade", cls=PlainHelpCommand)(grade.grade_command)
app.command("merge", cls=PlainHelpCommand)(merge.merge_command)
app.command("report", cls=PlainHelpCommand, epilog=EXIT_CODES_EPILOG)(report.report_command)
app.command("compare", cls=PlainHelpCommand)(compare.compare_command)
app.command("flaky", cls=PlainHelpCommand)(flaky.flaky_command)
app.add_typer(plugins.app, name="plugins")
app.command("discover", cls=PlainHelpCommand)(discover.discover_command)
# `with: args: --dry-run` reaches the container as arguments: collected, then refused with a hint.
app.command(
    "action",
    cls=PlainHelpCommand,
    context_settings={"ignore_unknown_options": True, "allow_extra_args": True},
)(action.action_command)
app.command(
    "gitlab",
    cls=PlainHelpCommand,
    epilog=EXIT_CODES_EPILOG,
    context_settings={"ignore_unknown_options": True, "allow_extra_args": True},
)(gitlab.gitlab_command)


def _save_traceback() -> str:
    import tempfile  # only on a crash: `--help` and every command start without them

    from agentv_ci.security.redaction import redact

    fd, path = tempfile.mkstemp(prefix="agentv-ci-crash-", suffix=".log")
    with os.fdopen(fd, "w") as handle:
        handle.write(redact(traceback.format_exc()))  # a crash log is an output like any other
    return path


def run_app(argv: list[str] | None = None) -> None:
    """Entry point with the error boundary: expected errors print without a traceback and exit
    with their code; a bug exits 4 with the traceback saved to a log file.

    Everything printed passes the redaction layer (security.streams): the secrets of the environment
    are registered (and announced with `::add-mask::` in GitHub Actions) before anything is printed."""
    from agentv_ci.security.streams import protected_console

    with protected_console(os.environ), _sigterm_as_interrupt():
        _run_app(argv)


@contextmanager
def _sigterm_as_interrupt() -> Iterator[None]:
    """SIGTERM stops a command as Ctrl-C does, in every stage: `KeyboardInterrupt`, exit 130 (a
    run's tests: running/interrupts.py). The default would end the process at once, exit 143."""

    def interrupt(signum: int, frame: FrameType | None) -> None:
        raise KeyboardInterrupt

    try:
        previous = signal.signal(signal.SIGTERM, interrupt)
    except ValueError:  # not the main thread (in-process callers): leave it alone
        yield
        return
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, previous if previous is not None else signal.SIG_DFL)


def _run_app(argv: list[str] | None) -> None:
    try:
        # With standalone_mode=False the vendored Click returns a `typer.Exit` code instead of raising.
        returned = app(args=argv, standalone_mode=False)
    except typer.Exit as exc:
        sys.exit(exc.exit_code)
    except AgentvCiError as exc:
        typer.echo(exc.render(), err=True)
        sys.exit(int(exc.exit_code))
    except KeyboardInterrupt:
        typer.echo("interrupted; finished results are on disk", err=True)
        sys.exit(int(ExitCode.INTERRUPTED))
    except Exception as exc:
        name = type(exc).__name__
        # Click's usage errors (BadOptionUsage, NoSuchOption, MissingParameter, ...) all derive from
        # UsageError, and its other expected errors (FileError) from ClickException: bad input, exit 2.
        lineage = {cls.__name__ for cls in type(exc).__mro__}
        if lineage & {"UsageError", "ClickException", "NoArgsIsHelpError"}:
            show = getattr(exc, "show", None)
            if callable(show):
                show()
            else:
                typer.echo(f"error: {exc}", err=True)
            sys.exit(int(ExitCode.BAD_INPUT))
        if name == "Abort":
            sys.exit(int(ExitCode.INTERRUPTED))
        path = _save_traceback()
        typer.echo(f"internal error: {name}: {exc}\n  a traceback was saved to {path}", err=True)
        sys.exit(int(ExitCode.INTERNAL))
    sys.exit(returned if isinstance(returned, int) else 0)
