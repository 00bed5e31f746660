"""The `tilegen` command (also `python -m tilegen`).

Each subcommand is an object with a docstring (its help line), ``add_arguments(parser)`` and
``run(args) -> exit code``; a module works too (`tilegen bench` is tools/bench.py, `tilegen
tune` is tools/tune.py).

Bad input of any kind (a ValueError from the DSL, an unknown choice, a malformed option) is one
line on stderr, ``tilegen: error: <message>``, and exit code 2; never a traceback.
"""
from __future__ import annotations

import argparse
import os
import sys
from typing import List, Optional

import yaml

from tilegen import _load, _paths
from tilegen._version import __version__
from tilegen.dsl import DTYPES, FAMILIES, ISAS, KernelSpec, load_registry, parse_tile, registry_path, select
from tilegen.dsl import render
from tilegen.dsl.spec import COMMON_FIELDS

from . import bench, tune

EXIT_BAD_INPUT = 2


class UsageError(Exception):
    pass


class _HelpFormatter(argparse.ArgumentDefaultsHelpFormatter):
    """Adds '(default: X)' to options that have a default and do not state it already."""

    def _get_help_string(self, action):
        text = action.help or ""
        if action.default in (None, argparse.SUPPRESS, False) or "default" in text:
            return text
        return super()._get_help_string(action)


class _Parser(argparse.ArgumentParser):
    """argparse, but errors are the single line `tilegen: error: ...` (no usage dump), and
    --help shows every option's choices and default."""

    def __init__(self, *args, **kwargs):
        kwargs.setdefault("formatter_class", _HelpFormatter)
        super().__init__(*args, **kwargs)

    def error(self, message: str):
        raise UsageError(message)


class GenerateCommand:
    """Regenerate tilegen/generated/ from the registry, or prove it fresh with --check."""

    @staticmethod
    def add_arguments(p: argparse.ArgumentParser) -> None:
        p.add_argument("--check", action="store_true",
                       help="write nothing; exit 1 if any generated file is stale or orphaned")
        p.add_argument("--root",
                       help="repository root holding tilegen/ops/ (default: current directory)")
        p.add_argument("--sdk", action="store_true",
                       help="write a self-contained C library (CMake, plain C) to --out instead")
        p.add_argument("--isa", help="with --sdk: comma-separated ISAs to ship, e.g. neon,scalar "
                       f"(allowed: {', '.join(ISAS)}; scalar is always added)")
        from tilegen.ops import OPS

        p.add_argument("--ops", help="with --sdk: comma-separated ops, e.g. "
                       f"{','.join(list(OPS)[:2])} (allowed: {', '.join(OPS)}; "
                       "the ops they call are added)")
        p.add_argument("--out", help="with --sdk: the folder to write: a new or empty one, or "
                       "a previous SDK's (its files are replaced, those no longer needed removed)")
        p.add_argument("--force", action="store_true",
                       help="with --sdk: write into a non-empty --out that holds no SDK "
                            "(files of the SDK's names are replaced, others left alone)")

    @staticmethod
    def run(args) -> int:
        if args.sdk:
            return GenerateCommand.run_sdk(args)
        for name in ("isa", "ops", "out"):
            if getattr(args, name) is not None:
                raise UsageError(f"--{name} needs --sdk")
        if args.force:
            raise UsageError("--force needs --sdk")
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
                  f"the registry, the templates and the ops under {render.REGISTRY_RELPATH}/")
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


    @staticmethod
    def run_sdk(args) -> int:
        from . import sdk

        if args.check:
            raise UsageError("--check does not apply to --sdk")
        for name in ("isa", "ops", "out"):
            if not getattr(args, name):
                raise UsageError(f"--sdk needs --{name}")
        isas = [x.strip() for x in args.isa.split(",") if x.strip()]
        ops = [x.strip() for x in args.ops.split(",") if x.strip()]
        command = f"tilegen generate --sdk --isa {args.isa} --ops {args.ops} --out {args.out}"
        root = os.path.abspath(args.root) if args.root else None
        for note in sdk.build(args.out, isas, ops, root=root, command=command, force=args.force):
            print(f"tilegen: note: {note}", file=sys.stderr)
        print(f"{args.out}: tilegen C SDK ({', '.join(ops)}; {', '.join(isas)}); "
              f"build it with: cmake -S {args.out} -B {args.out}/build && "
              f"cmake --build {args.out}/build")
        return 0


class ListCommand:
    """List the kernel registry: name, tile and schedule of every micro-kernel."""

    @staticmethod
    def add_arguments(p: argparse.ArgumentParser) -> None:
        _filter_arguments(p, required=False, ops=True)
        p.add_argument("--root", help="read ROOT/tilegen/ops/ instead of the installed registry")

    @staticmethod
    def run(args) -> int:
        path = registry_path(args.root)  # None: the installed package's registry
        if not os.path.exists(path):
            raise FileNotFoundError(f"root: no registry at {path}")
        from tilegen.ops import OPS

        # --op takes an op (its families' kernels) or one family
        families = OPS[args.op].families if args.op in OPS else [args.op] if args.op else [None]
        entries = [e for fam in families for e in
                   select(load_registry(path), isa=args.isa, op=fam, dtype=args.dtype)]
        name_w = max((len(e.name) for e in entries), default=0)
        tile_w = max((len(e.spec.tile) for e in entries), default=0)
        for e in entries:
            print(f"{e.name:<{name_w}}  {e.spec.tile:<{tile_w}}  {e.describe()}")
        return 0


def _family_fields():
    """Every family's own schedule fields: name -> (allowed values or None, families)."""
    out: dict = {}
    for fam in FAMILIES.values():
        for name, (_, allowed) in fam.fields.items():
            values, fams = out.setdefault(name, ([], []))
            values += [v for v in (allowed or ()) if v not in values]
            fams.append(fam.name)
    return out


class EmitCommand:
    """Print one kernel's C source, rendered from its template and ISA table."""

    @staticmethod
    def add_arguments(p: argparse.ArgumentParser) -> None:
        _filter_arguments(p, required=True)
        p.add_argument("--tile", required=True, help="register tile MRxNR[cKR], e.g. 14x32")
        # Unset options are left out, so KernelSpec's defaults (shown) apply.
        p.add_argument("--unroll", type=int, help="k-loop unroll (default: the registry entry's "
                       f"for a registry kernel, else {COMMON_FIELDS['unroll']}; likewise below)")
        p.add_argument("--prefetch", type=int,
                       help=f"prefetch distance in k steps, 0 = none (default {COMMON_FIELDS['prefetch']})")
        p.add_argument("--epilogue", help="comma-separated fused stages, e.g. bias,relu; each "
                       "family's stages: " + "; ".join(
                           f"{f.name}: {', '.join(f.epilogues) or 'none'}" for f in FAMILIES.values()))
        p.add_argument("--tail", choices=("mask", "temp"),
                       help="edge-tile strategy (default: the ISA's: mask where it has masked "
                            "loads and stores, else temp)")
        p.add_argument("--kloop", help="k loop: c (intrinsics) or asm (inline assembly, x86) "
                       "(default c)")
        p.add_argument("--variant", help="name suffix (default none)")
        for name, (allowed, fams) in _family_fields().items():
            fam = FAMILIES[fams[0]]
            numeric = not allowed or all(isinstance(v, int) for v in allowed)
            p.add_argument(f"--{name.replace('_', '-')}", dest=name,
                           type=int if numeric else None,
                           help=f"{', '.join(fams)} kernels: "
                                + (f"one of {', '.join(map(str, allowed))}" if allowed
                                   else "a positive integer")
                                + f" (default {fam.fields[name][0]})")
        p.add_argument("--field", action="append", default=[], metavar="NAME=VALUE",
                       help="a family's own field, the same as its option: --field kh=3")
        p.add_argument("--compile", action="store_true",
                       help="compile the kernel (tilegen.dsl.compile: the system C compiler, "
                            "cached) instead of printing its C, and say what its Python "
                            "callable computes")
        p.add_argument("--bench", action="store_true",
                       help="with --compile: check it and the registry's kernel of the same "
                            "family, ISA and dtype against NumPy, and time both on one problem")
        p.add_argument("--shape", help="--bench's problem sizes, comma-separated, in the "
                       "family's order (default: the family's; the table names them)")
        p.add_argument("--repeat", type=int, default=5, help="--bench: timed runs, best kept")

    @staticmethod
    def run(args) -> int:
        mr, nr, kr = parse_tile(args.tile)
        names = ("unroll", "prefetch", "tail", "kloop", "variant", *_family_fields())
        schedule = {f: getattr(args, f) for f in names if getattr(args, f) is not None}
        if args.epilogue is not None:
            schedule["epilogue"] = tuple(s.strip() for s in args.epilogue.split(",") if s.strip())
        for item in args.field:
            name, sep, value = item.partition("=")
            if not sep or not name:
                raise ValueError(f"--field: expected NAME=VALUE, got {item!r}")
            schedule[name.strip()] = int(value) if value.strip().lstrip("-").isdigit() else value.strip()
        spec = KernelSpec(op=args.op, dtype=args.dtype, isa=args.isa, mr=mr, nr=nr, kr=kr,
                          **schedule)
        entry = next((e for e in load_registry() if e.name == spec.name), None)
        if entry is not None:  # the registry's schedule, for every option not given
            spec = KernelSpec(**{**entry.spec.as_dict(), **schedule})
        if entry is None:
            note = f"not in the registry; built from the spec of {spec.name}"
        elif entry.spec == spec:
            note = f"the same kernel as {spec.family.registry_file} entry {spec.name}"
        else:
            diff = ", ".join(f"{k} {v!r} (registry: {entry.spec.as_dict()[k]!r})"
                             for k, v in spec.as_dict().items() if entry.spec.as_dict()[k] != v)
            note = (f"NOT the registry's {spec.name}, which has the same name but another "
                    f"schedule: {diff}")
            print(f"tilegen: warning: the emitted kernel is {note}", file=sys.stderr)
        if args.bench and not args.compile:
            raise UsageError("--bench needs --compile")
        if args.compile:
            from tilegen.dsl import jit

            from . import jitbench

            if args.repeat < 1:
                raise UsageError(f"--repeat: expected a positive integer, got {args.repeat}")
            try:
                return jitbench.run(spec, args.bench, args.shape, args.repeat)
            except (jit.JitError, NotImplementedError) as e:
                return _error(" ".join(str(e).split()), 1)
        sys.stdout.write(render.render_kernel(spec, note=note, emitted=True))
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
            from tilegen import runtime_info  # the compiled core; only `info` needs it
        except ImportError as e:
            return _error(f"the compiled tilegen core is not available ({e})", 1)
        print(format_runtime_info(runtime_info()))
        return 0


def _filter_arguments(p: argparse.ArgumentParser, required: bool, ops: bool = False) -> None:
    # Choices come from the DSL tables, so the error lists the allowed values.
    from tilegen.ops import OPS

    if ops:  # an op (tilegen/ops/<op>/) stands for its families' kernels
        p.add_argument("--op", choices=list(dict.fromkeys([*OPS, *FAMILIES])),
                       required=required, help="an op, or one kernel family of an op")
    else:
        p.add_argument("--op", choices=list(FAMILIES), required=required,
                       help="the kernel family (an op's: see `tilegen list`)")
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


# Folders and files C users build with: --flag -> (what, how to find it).
_PATH_FLAGS = {
    "--include-dir": ("the folder of tilegen.h", _paths.get_include),
    "--library": ("the shared library's path", _paths.get_library),
    "--cmake-dir": ("the folder of tilegenConfig.cmake (find_package(tilegen))",
                    _paths.get_cmake_dir),
    "--pkgconfig-dir": ("the folder of tilegen.pc (PKG_CONFIG_PATH)", _paths.get_pkgconfig_dir),
}

# Subcommands that run the compiled core (the others only generate code).
NEEDS_CORE = ("info", "bench", "tune")


def build_parser() -> argparse.ArgumentParser:
    parser = _Parser(prog="tilegen", description="SIMD micro-kernel generator and BLAS-like library.")
    parser.add_argument("--version", action="version", version=f"tilegen {__version__}")
    for flag, where in _PATH_FLAGS.items():
        parser.add_argument(flag, action="store_true", help=f"print {where[0]} and exit")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    for name, command in COMMANDS.items():
        help_line = command.__doc__.strip().splitlines()[0]
        p = sub.add_parser(name, help=help_line, description=help_line)
        command.add_arguments(p)
        p.set_defaults(run=command.run)
    return parser


def main(argv: Optional[List[str]] = None) -> int:
    try:
        parser = build_parser()
        args = parser.parse_args(argv)
        for flag, (_, where) in _PATH_FLAGS.items():
            if getattr(args, flag[2:].replace("-", "_")):
                print(where())
                return 0
        if args.command is None:  # no subcommand: say what there is
            parser.print_help()
            return 0
        if args.command in NEEDS_CORE and _load.CORE_ERROR is not None:
            message = _load.CORE_ERROR
            return _error(message[len("tilegen: "):] if message.startswith("tilegen: ")
                          else message, EXIT_BAD_INPUT)
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
