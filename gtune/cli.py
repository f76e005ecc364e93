"""The ``gtune`` command line.

Each subcommand lives in ``gtune/commands/<name>.py`` and exposes ``HELP``,
``add_arguments(parser)`` and ``run(args) -> int`` (and ``CTRL_C_EXIT`` where a Ctrl-C
ends it with another status than 130). Errors derived from
:class:`~gtune.exceptions.GtuneError` become one message and exit status 2; tracebacks
only with ``--debug``. The same holds for the operating system's answers to user input
(unreadable files, memory or recursion limits, undecodable text). SIGTERM and SIGHUP
stop a run the way Ctrl-C does: every stored result is kept, workers are closed.
"""

from __future__ import annotations

import argparse
import contextlib
import errno
import importlib
import logging
import math
import os
import re
import signal
import sys
import traceback
import warnings
from collections.abc import Iterator, Sequence
from pathlib import Path
from types import FrameType
from typing import Any, TextIO

from gtune import __version__
from gtune.commands._common import (
    STOP_SIGNALS,
    arm_exit_deadline,
    disarm_exit_deadline,
    exit_now,
    received_interrupts,
    received_signals,
)
from gtune.description import TRUST_ENV, ReferenceCodeNotice, is_path_entry
from gtune.escape import has_control, visible
from gtune.exceptions import GtuneError, InputError
from gtune.processes import defer_stop

COMMANDS = (
    "devices",
    "measure",
    "results",
    "stencils",
    "space",
    "describe",
    "lift",
    "run",
    "compare",
    "split",
    "train",
    "models",
    "campaign",
    "export",
    "import-kt",
)

EXIT_ERROR = 2
# Options of gtune itself, given before the command (``gtune --db URL run ...``).
GLOBAL_OPTIONS = ("--db", "--trust-module", "--debug", "--verbose", "--quiet", "-q")
EXIT_INTERRUPTED = 130

# Options whose value may also come from the environment: errors name what was used.
ENV_OPTIONS = {"--device": ("device", "GTUNE_DEVICE"), "--db": ("db", "GTUNE_DB")}

# Library errors name the parameter they are about (``balance``, ``params[WX]``); the
# command line names the flag the user typed instead. A parameter maps to the option of
# the same name or argparse destination, else to the flag below, where the command has it.
PARAMETER_FLAGS = {
    "params": "--param",
    "scalars": "--scalar",
    "arrays": "--array",
    "defines": "--define",
    "roles": "--role",
    "constraints": "--constraint",
    "include_dirs": "-I",
    "sizes": "--size",
    "store": "--db",
    "names": "--kernels",
    "source": "--configs",
}
_PARAMETER = re.compile(r"(?P<name>[a-z_][a-z0-9_]*)(?:\[(?P<key>[^\]]*)\])?(?P<rest> .*)?", re.S)

# Numeric options that must be positive (every numeric option must be finite and >= 0).
POSITIVE = frozenset(
    {"timeout", "best", "max_minutes", "runs", "random_n", "compile_workers", "repeat"}
)
# Upper bounds where a large value would exhaust the machine rather than be slow.
AT_MOST = {"compile_workers": 256, "runs": 100_000}


class Terminated(KeyboardInterrupt):
    """SIGTERM or SIGHUP, raised where Ctrl-C would be, so the same cleanup runs."""


def build_parser(only: str | None = None) -> argparse.ArgumentParser:
    """The whole parser; with ``only``, the other subcommands are bare placeholders, so
    one command starts without importing every other command's dependencies."""
    parser = argparse.ArgumentParser(
        prog="gtune",
        description="Autotune OpenCL stencil kernels on the devices you have.",
        allow_abbrev=False,
    )
    parser.add_argument("--version", action="version", version=f"gtune {__version__}")
    parser.add_argument("--debug", action="store_true", help="show tracebacks on errors")
    parser.add_argument(
        "-v",
        "--verbose",
        action="count",
        default=0,
        help="log what gtune does on stderr (-v: milestones, -vv: every configuration)",
    )
    parser.add_argument(
        "-q",
        "--quiet",
        action="store_true",
        help="no progress display and only errors in the log (results are still printed)",
    )
    parser.add_argument(
        "--db",
        metavar="URL",
        help="result store: a path, sqlite:///PATH or postgresql://...; "
        "default $GTUNE_DB or ./gtune-results.db",
    )
    parser.add_argument(
        "--trust-module",
        action="append",
        default=[],
        metavar="MODULE|FILE",
        help="let a description's Python reference run: a function of this installed "
        "module, or a reference .py file (or a folder of them) "
        f"(repeatable; also ${TRUST_ENV}, comma-separated)",
    )
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    for name in COMMANDS:
        if only is not None and name != only:
            sub.add_parser(name)
            continue
        try:
            module = importlib.import_module(f"gtune.commands.{name.replace('-', '_')}")
        except ModuleNotFoundError as exc:
            if exc.name == f"gtune.commands.{name.replace('-', '_')}":
                continue
            raise
        p = sub.add_parser(name, help=module.HELP, description=module.HELP)
        module.add_arguments(p)
        p.set_defaults(
            _run=module.run,
            _parser=p,
            _ctrl_c_exit=getattr(module, "CTRL_C_EXIT", EXIT_INTERRUPTED),
        )
    return parser


def _command_of(argv: Sequence[str]) -> str | None:
    """The subcommand ``argv`` names, if it names one before any ambiguity."""
    i = 0
    while i < len(argv):
        item = argv[i]
        if item in ("--db", "--trust-module"):
            i += 2
        elif item.startswith("-"):
            if item in ("-h", "--help"):
                return None
            i += 1
        else:
            return item if item in COMMANDS else None
    return None


def _unrecognized(extra: Sequence[str]) -> str:
    """argparse's complaint, with the fix when a global option follows the command
    (``gtune run K --db X``): argparse reads gtune's own options before it only."""
    text = f"unrecognized arguments: {' '.join(extra)}"
    for item in extra:
        option = item.split("=", 1)[0]
        if option in GLOBAL_OPTIONS or re.fullmatch(r"-v+", option):
            return (
                f"{text}; {option} is an option of gtune itself: give it before the "
                f"command (gtune {option} ... COMMAND ...)"
            )
    return text


def check_options(parsers: Sequence[argparse.ArgumentParser], args: argparse.Namespace) -> None:
    """Refuse option values no command can mean: empty text, NaN or infinite numbers,
    negative counts and durations (zero where a positive value is needed)."""
    for parser in parsers:
        for action in parser._actions:
            skip = ("help", "_run", "_parser", "_ctrl_c_exit")
            if action.dest in skip or action.dest == argparse.SUPPRESS:
                continue
            value = getattr(args, action.dest, None)
            if value is None or value is action.default:
                continue
            name = max(action.option_strings, key=len) if action.option_strings else action.dest
            for item in value if isinstance(value, list) else [value]:
                _check_value(name, action.dest, item)


def _check_value(name: str, dest: str, value: Any) -> None:
    if isinstance(value, str):
        if not value.strip():
            raise InputError("empty value", source=name)
        if has_control(value):
            # a file name or expression with a line end or an escape sequence would
            # reach the terminal, the MiniZinc model and the files gtune writes
            raise InputError(
                f"holds a control character ('{visible(value)}'); file names and "
                "values given to gtune may not (rename the file)",
                source=name,
            )
        return
    if isinstance(value, bool) or not isinstance(value, int | float):
        return
    if not math.isfinite(value):
        raise InputError(f"must be a finite number, got {value!r}", source=name)
    if value < 0 or (value == 0 and dest in POSITIVE):
        need = "positive" if dest in POSITIVE else "at least 0"
        raise InputError(f"must be {need}, got {value!r}", source=name)
    limit = AT_MOST.get(dest)
    if limit is not None and value > limit:
        raise InputError(f"must be at most {limit}, got {value!r}", source=name)


def main(argv: Sequence[str] | None = None, *, early_interrupts: Sequence[int] = ()) -> int:
    """The command line. Called as the program (``argv`` None), a stop signal also arms
    a deadline that ends the process should cleanup or interpreter shutdown stall;
    called in-process with ``argv``, the deadline is cancelled on return.
    ``early_interrupts``: Ctrl-Cs noted while the program loaded (``gtune.__main__``);
    one stops the command as soon as it has taken signals over."""
    try:
        return _main(argv, early_interrupts)
    finally:
        if argv is not None:
            disarm_exit_deadline()


def _main(argv: Sequence[str] | None, early_interrupts: Sequence[int]) -> int:
    given = list(sys.argv[1:] if argv is None else argv)
    parser = build_parser(_command_of(given))
    args, extra = parser.parse_known_args(given)
    if extra:
        parser.error(_unrecognized(extra))
    if not getattr(args, "_run", None):
        parser.print_help()
        return EXIT_ERROR
    debug = bool(args.debug)
    if args.quiet and args.verbose:
        _say("error: --quiet and --verbose contradict each other")
        return EXIT_ERROR
    configure_logging(args.verbose, args.quiet)
    received = received_signals
    received.clear()
    received_interrupts.clear()
    try:
        with (
            _signals_as_interrupt(received, early_interrupts),
            _notices(),
            _trusted(args.trust_module),
        ):
            check_options([parser, args._parser], args)
            status = int(args._run(args))
            _flush(sys.stdout)
        if received:
            _say(f"stopped by {received[0]}; {_RESUME}")
            return EXIT_ERROR
        return status
    except BrokenPipeError:
        _silence_stdout()
        return 0
    except GtuneError as exc:
        if debug:
            traceback.print_exc()
        _name_flag(exc, [args._parser, parser] if getattr(args, "_parser", None) else [parser])
        _name_environment(exc, args)
        _say(f"error: {exc.render()}{_file_size_note(exc)}")
        return EXIT_ERROR
    except KeyboardInterrupt:
        if received:
            _say(f"stopped by {received[0]}; {_RESUME}")
            return EXIT_ERROR
        _say(f"interrupted; {_RESUME}")
        return int(getattr(args, "_ctrl_c_exit", EXIT_INTERRUPTED))
    except (OSError, MemoryError, RecursionError, UnicodeError) as exc:
        if debug:
            traceback.print_exc()
        message = _os_message(exc) + _file_size_note(exc)
        store = os.environ.get("GTUNE_DB", "")
        filename = str(getattr(exc, "filename", "") or "")
        if not args.db and store and filename and store.startswith(filename):
            message = f"$GTUNE_DB={store}: {message}"
        _say(f"error: {message}")
        return EXIT_ERROR


LOG_FORMAT = "gtune: %(levelname)s: %(message)s"
_HANDLER_MARK = "_gtune_cli"


def configure_logging(verbose: int = 0, quiet: bool = False) -> None:
    """The ``gtune`` loggers on stderr for the command line: warnings by default, INFO
    with ``-v``, DEBUG with ``-vv``, errors only with ``--quiet``. Other libraries'
    loggers (Dask's among them) stay at WARNING whatever the verbosity, so their INFO
    lines never reach the terminal."""
    level = (
        logging.ERROR
        if quiet
        else {0: logging.WARNING, 1: logging.INFO}.get(verbose, logging.DEBUG)
    )
    root = logging.getLogger("gtune")
    for h in list(root.handlers):
        if getattr(h, _HANDLER_MARK, False):
            root.removeHandler(h)
    handler = _StderrHandler()
    handler.setFormatter(_LowerLevel(LOG_FORMAT))
    setattr(handler, _HANDLER_MARK, True)
    root.addHandler(handler)
    root.setLevel(level)
    root.propagate = False
    for name in ("distributed", "dask", "tornado", "asyncio"):
        quiet_logger = logging.getLogger(name)
        if quiet_logger.getEffectiveLevel() < logging.WARNING:
            quiet_logger.setLevel(logging.WARNING)


class _StderrHandler(logging.StreamHandler):  # type: ignore[type-arg]
    """Writes to the current ``sys.stderr``, so log lines go above a live progress
    display (which redirects stderr while it runs) instead of through it."""

    def __init__(self) -> None:
        super().__init__()

    @property
    def stream(self) -> TextIO:
        return sys.stderr

    @stream.setter
    def stream(self, value: TextIO) -> None:
        return None


class _LowerLevel(logging.Formatter):
    """``gtune: warning: ...``, as the command line's other messages read."""

    def format(self, record: logging.LogRecord) -> str:
        record.levelname = record.levelname.lower()
        return super().format(record)


_RESUME = (
    "every result measured so far is in the result store (run the same command again to resume)"
)


def _file_size_note(exc: BaseException) -> str:
    """What to add where a write failed against the file size limit (``ulimit -f``:
    EFBIG, or SQLite's "database or disk is full"), found along the exception's chain
    (a library error keeps the operating system's as its context)."""
    try:
        import resource

        limit = resource.getrlimit(resource.RLIMIT_FSIZE)[0]
    except (ImportError, OSError, ValueError):
        return ""
    if limit == resource.RLIM_INFINITY:
        return ""
    seen: set[int] = set()
    todo: list[BaseException | None] = [exc]
    while todo:
        e = todo.pop()
        if e is None or id(e) in seen:
            continue
        seen.add(id(e))
        code = getattr(e, "sqlite_errorcode", None)
        code = code & 0xFF if isinstance(code, int) else None
        if (isinstance(e, OSError) and e.errno == errno.EFBIG) or code == _SQLITE_FULL:
            return (
                f" (the file size limit, ulimit -f, is {limit:,} bytes: a file gtune "
                "writes cannot grow past it; raise the limit or write elsewhere)"
            )
        if code == _SQLITE_IOERR:  # SQLite reports EFBIG on a write as an I/O error
            return (
                f" (a file size limit is set, ulimit -f: {limit:,} bytes; a store that "
                "would grow past it fails this way: raise the limit or write elsewhere)"
            )
        todo += [e.__cause__, e.__context__]
    return ""


_SQLITE_IOERR = 10
_SQLITE_FULL = 13
"""SQLite's result codes for a failed write and for no room (EFBIG is either)."""


def _os_message(exc: BaseException) -> str:
    if isinstance(exc, OSError):
        where = exc.filename if exc.filename is not None else None
        cause = exc.strerror or str(exc) or type(exc).__name__
        if isinstance(exc, FileExistsError | NotADirectoryError):
            cause = f"{cause} (a file stands where a directory is needed)"
        return f"{where}: {cause}" if where is not None else cause
    if isinstance(exc, MemoryError):
        return "out of memory (is an input far larger than it should be?)"
    if isinstance(exc, RecursionError):
        return "an input is nested too deeply to process"
    return f"text that cannot be decoded or encoded: {exc}"


def _name_flag(exc: GtuneError, parsers: Sequence[argparse.ArgumentParser]) -> None:
    """An error about a library parameter (``balance``, ``params[WX]``) names the flag
    of this command that gave it (``--balance``, ``--param WX``)."""
    m = _PARAMETER.fullmatch(exc.source or "")
    if m is None:
        return
    flags: dict[str, str] = {}
    for parser in parsers:
        for action in parser._actions:
            options = [o for o in action.option_strings if o.startswith("--")]
            options = options or list(action.option_strings)
            if options:
                flags.setdefault(action.dest, options[0])
                for option in options:
                    flags.setdefault(option.lstrip("-").replace("-", "_"), option)
    typed = set(flags.values())
    flag = flags.get(m["name"])
    if flag is None and PARAMETER_FLAGS.get(m["name"]) in typed:
        flag = PARAMETER_FLAGS[m["name"]]
    if flag is not None:
        exc.source = flag + (f" {m['key']}" if m["key"] else "") + (m["rest"] or "")


def _name_environment(exc: GtuneError, args: argparse.Namespace) -> None:
    """An error about a value taken from the environment names the variable."""
    if exc.source is None:
        return
    for flag, (dest, variable) in ENV_OPTIONS.items():
        value = os.environ.get(variable)
        if getattr(args, dest, None) or not value:
            continue
        if exc.source.startswith(flag):
            exc.source = f"${variable}" + exc.source[len(flag) :]
        elif exc.source.startswith(value):
            exc.source = f"${variable}={exc.source}"


def _say(text: str) -> None:
    stream = sys.stderr
    # text from inputs (a flag's value, a file name) may hold terminal escape sequences
    text = "".join(c if c in "\n\t" or c.isprintable() else repr(c)[1:-1] for c in text)
    line = f"gtune: {text}"
    encoding = getattr(stream, "encoding", None) or "utf-8"
    with contextlib.suppress(OSError, ValueError):
        stream.write(line.encode(encoding, "backslashreplace").decode(encoding) + "\n")
        stream.flush()


def _flush(stream: TextIO) -> None:
    stream.flush()


def _silence_stdout() -> None:
    """After the reader of a pipe has gone: drop whatever is still buffered."""
    with contextlib.suppress(OSError, ValueError, AttributeError):
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        os.close(devnull)


@contextlib.contextmanager
def _signals_as_interrupt(received: list[str], early: Sequence[int] = ()) -> Iterator[None]:
    """SIGTERM and SIGHUP raise :class:`Terminated` once; a second one is not caught.
    Ctrl-C raises KeyboardInterrupt, as Python's own handler does; a second Ctrl-C ends
    the process at once. Either way cleanup gets a bounded time (``arm_exit_deadline``).
    Every Ctrl-C is also noted in ``received_interrupts``: a command that stops
    cooperatively installs its own handler over these and checks there whether one came
    before (a KeyboardInterrupt some library caught while loading would be lost).
    ``early``: Ctrl-Cs noted before; one raises KeyboardInterrupt on entry."""
    wanted = list(STOP_SIGNALS)
    interrupts = received_interrupts

    def terminated() -> None:
        raise Terminated()

    def keyboard_interrupt() -> None:
        raise KeyboardInterrupt

    def handler(signum: int, frame: FrameType | None) -> None:
        name = signal.Signals(signum).name
        received.append(name)
        for s in wanted:
            signal.signal(s, signal.SIG_DFL)
        arm_exit_deadline(EXIT_ERROR, f"stopped by {name}")
        if not defer_stop(terminated):  # starting a child: raised once it is held
            terminated()

    def interrupt(signum: int, frame: FrameType | None) -> None:
        interrupts.append(signum)
        if len(interrupts) > 1:
            exit_now(EXIT_INTERRUPTED, "interrupted again")
        arm_exit_deadline(EXIT_INTERRUPTED, "interrupted")
        if not defer_stop(keyboard_interrupt):
            keyboard_interrupt()

    previous: dict[int, Any] = {}
    try:
        for s in wanted:
            previous[s] = signal.signal(s, handler)
        previous[signal.SIGINT] = signal.signal(signal.SIGINT, interrupt)
    except ValueError:  # not the main thread: leave signals alone
        previous.clear()
    try:
        if early and previous:
            interrupts.extend(early)
            arm_exit_deadline(EXIT_INTERRUPTED, "interrupted")
            raise KeyboardInterrupt
        yield
    finally:
        for number, old in previous.items():
            signal.signal(number, old)


@contextlib.contextmanager
def _notices() -> Iterator[None]:
    """Library notices (a Python reference runs code) as one ``gtune: note:`` line."""
    with warnings.catch_warnings():
        original = warnings.showwarning

        def show(
            message: Warning | str,
            category: type[Warning],
            filename: str,
            lineno: int,
            file: TextIO | None = None,
            line: str | None = None,
        ) -> None:
            if issubclass(category, ReferenceCodeNotice):
                _say(f"note: {message}")
            else:
                original(message, category, filename, lineno, file, line)

        warnings.simplefilter("always", ReferenceCodeNotice)
        warnings.showwarning = show
        yield


@contextlib.contextmanager
def _trusted(modules: Sequence[str]) -> Iterator[None]:
    """``--trust-module`` extends ``$GTUNE_TRUST_MODULES`` (worker processes inherit it)."""
    if not modules:
        yield
        return
    before = os.environ.get(TRUST_ENV)
    # files and folders as absolute paths: worker processes must agree on them
    entries = [str(Path(m).expanduser().resolve()) if is_path_entry(m) else m for m in modules]
    os.environ[TRUST_ENV] = ",".join([*filter(None, [before]), *entries])
    try:
        yield
    finally:
        if before is None:
            os.environ.pop(TRUST_ENV, None)
        else:
            os.environ[TRUST_ENV] = before


if __name__ == "__main__":
    sys.exit(main())
