"""The `tilegen` command (also `python -m tilegen`).

Each subcommand is an object with a docstring (its help line), ``add_arguments(parser)`` and
``run(args) -> exit code``; a module works too (`tilegen bench` is tilegen/bench.py, `tilegen
tune` is tilegen/tune.py).

Bad input of any kind (a ValueError from the DSL, an unknown choice, a malformed option) is one
line on stderr, ``tilegen: error: <message>``, and exit code 2; never a traceback.
"""
from __future__ import annotations

import argparse
import os
import sys
from typing import List, Optional

import yaml

from .dsl import DTYPES, ISAS, OPS, KernelSpec, load_registry, parse_tile, registry_path, select
from .dsl import render
from . import bench, tune

EXIT_BAD_INPUT = 2


class UsageError(Exception):
    pass


class _Parser(argparse.ArgumentParser):
    """argparse, but errors are the single line `tilegen: error: ...` (no usage dump)."""

    def error(self, message: str):
        raise UsageError(message)


class GenerateCommand:
    """Regenerate tilegen/generated/ from the registry, or prove it fresh with --check."""

    @staticmethod
    def add_arguments(p: argparse.ArgumentParser) -> None:
        p.add_argument("--check", action="store_true",
                       help="write nothing; exit 1 if any generated file is stale or orphaned")
        p.add_argument("--root",
                       help="repository root holding tilegen/kernels/ (default: current directory)")

    @staticmethod
    def run(args) -> int:
        report = render.generate(args.root, check=args.check)
        if not args.check:
            for rel in report.written:
                print(rel)
            for rel in report.removed:
                print(f"{rel} (removed)")
            if not report.written and not report.removed:
                print(f"{render.GENERATED_RELPATH}/ is up to date ({len(report.unchanged)} files)")
            return 0
        if report.ok:
            print(f"{render.GENERATED_RELPATH}/ is fresh: {len(report.unchanged)} files match "
                  f"{render.REGISTRY_RELPATH} and {render.TEMPLATES_RELPATH}/")
            return 0
        for rel in report.stale:
            print(f"stale: {rel}", file=sys.stderr)
        for rel in report.orphans:
            print(f"orphan: {rel} (no registry entry renders it)", file=sys.stderr)
        again = "tilegen generate" + (f" --root {args.root}" if args.root else "")
        print(f"{render.GENERATED_RELPATH}/ is out of date "
              f"({len(report.stale)} stale, {len(report.orphans)} orphaned); run `{again}`",
              file=sys.stderr)
        return 1


class ListCommand:
    """List the kernel registry: name, tile and schedule of every micro-kernel."""

    @staticmethod
    def add_arguments(p: argparse.ArgumentParser) -> None:
        _filter_arguments(p, required=False)
        p.add_argument("--root", help="read ROOT/tilegen/kernels/ instead of the installed registry")

    @staticmethod
    def run(args) -> int:
        path = registry_path(args.root)  # None: the installed package's registry
        if not os.path.exists(path):
            raise FileNotFoundError(f"root: no registry at {path}")
        entries = select(load_registry(path), isa=args.isa, op=args.op, dtype=args.dtype)
        name_w = max((len(e.name) for e in entries), default=0)
        tile_w = max((len(e.spec.tile) for e in entries), default=0)
        for e in entries:
            print(f"{e.name:<{name_w}}  {e.spec.tile:<{tile_w}}  {e.describe()}")
        return 0


class EmitCommand:
    """Print one kernel's C source, rendered from its template and ISA table."""

    @staticmethod
    def add_arguments(p: argparse.ArgumentParser) -> None:
        _filter_arguments(p, required=True)
        p.add_argument("--tile", required=True, help="register tile MRxNR[cKR], e.g. 14x32")
        # Unset options are left out, so KernelSpec's defaults apply.
        p.add_argument("--unroll", type=int, help="k-loop unroll")
        p.add_argument("--prefetch", type=int, help="prefetch distance in k steps (0 = none)")
        p.add_argument("--epilogue", help="comma-separated fused stages, e.g. bias,relu")
        p.add_argument("--tail", help="edge-tile strategy: mask or temp (default: the ISA's)")
        p.add_argument("--a-layout", dest="a_layout", help="how A is read: packed or rows")
        p.add_argument("--kloop", help="k loop in c (intrinsics) or asm (inline assembly, x86)")
        p.add_argument("--variant", help="name suffix")
        p.add_argument("--field", action="append", default=[], metavar="NAME=VALUE",
                       help="a family's own field, e.g. --field kh=3 --field stride=2 (conv)")

    @staticmethod
    def run(args) -> int:
        mr, nr, kr = parse_tile(args.tile)
        schedule = {f: getattr(args, f) for f in ("unroll", "prefetch", "tail", "a_layout", "kloop",
                                                    "variant")
                    if getattr(args, f) is not None}
        if args.epilogue is not None:
            schedule["epilogue"] = tuple(s.strip() for s in args.epilogue.split(",") if s.strip())
        for item in args.field:
            name, sep, value = item.partition("=")
            if not sep or not name:
                raise ValueError(f"--field: expected NAME=VALUE, got {item!r}")
            schedule[name.strip()] = int(value) if value.strip().lstrip("-").isdigit() else value.strip()
        spec = KernelSpec(op=args.op, dtype=args.dtype, isa=args.isa, mr=mr, nr=nr, kr=kr,
                          **schedule)
        sys.stdout.write(spec.render())
        return 0


class InfoCommand:
    """Show the CPU, its features, the kernels chosen for it, block sizes and threads."""

    @staticmethod
    def add_arguments(p: argparse.ArgumentParser) -> None:
        pass

    @staticmethod
    def run(args) -> int:
        from .report import format_runtime_info

        try:
            from . import runtime_info  # the compiled core; only `info` needs it
        except ImportError as e:
            return _error(f"the compiled tilegen core is not available ({e})", 1)
        print(format_runtime_info(runtime_info()))
        return 0


def _filter_arguments(p: argparse.ArgumentParser, required: bool) -> None:
    # Choices come from the DSL tables, so the error lists the allowed values.
    p.add_argument("--op", choices=list(OPS), required=required, help="operation")
    p.add_argument("--dtype", choices=list(DTYPES), required=required, help="element type")
    p.add_argument("--isa", choices=list(ISAS), required=required, help="instruction set")


COMMANDS = {
    "generate": GenerateCommand,
    "list": ListCommand,
    "emit": EmitCommand,
    "info": InfoCommand,
    "bench": bench,
    "tune": tune,
}


def build_parser() -> argparse.ArgumentParser:
    parser = _Parser(prog="tilegen", description="SIMD micro-kernel generator and BLAS-like library.")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", required=True)
    for name, command in COMMANDS.items():
        help_line = command.__doc__.strip().splitlines()[0]
        p = sub.add_parser(name, help=help_line, description=help_line)
        command.add_arguments(p)
        p.set_defaults(run=command.run)
    return parser


def main(argv: Optional[List[str]] = None) -> int:
    try:
        args = build_parser().parse_args(argv)
        return args.run(args)
    except SystemExit as e:  # --help
        return e.code if isinstance(e.code, int) else 0
    except BrokenPipeError:  # `tilegen list | head`: the reader is gone, nothing is wrong
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 0
    # The registry, the options and the paths are the user's input; the DSL reports what is
    # wrong with them as ValueError. Template bugs keep their traceback: that is a developer's.
    except (UsageError, ValueError, OSError, yaml.YAMLError) as e:
        return _error(" ".join(str(e).split()) or type(e).__name__, EXIT_BAD_INPUT)


def _error(message: str, code: int) -> int:
    print(f"tilegen: error: {message}", file=sys.stderr)
    return code
