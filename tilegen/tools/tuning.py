"""The per-user tuning cache: what `tilegen tune` found best on this machine, applied at import.

The cache is one small YAML file, ``tuning.yaml`` in the platform's cache folder
(``$TILEGEN_CACHE_DIR``, else ``$XDG_CACHE_HOME/tilegen`` or ``~/.cache/tilegen`` on Linux,
``~/Library/Caches/tilegen`` on macOS, ``%LOCALAPPDATA%\\tilegen\\Cache`` on Windows). It is keyed
by the CPU (brand, architecture, usable features) and the tilegen version, and holds one entry
per ISA (so tuning under ``TILEGEN_ISA=avx2`` does not replace the AVX-512 entry), in which each
op's tune plug-in (tilegen/ops/<op>/tune.py) keeps the knobs it chose::

    format: 2
    tilegen_version: 0.1.0
    cpu: {brand: ..., arch: x86_64, features: [sse2, avx, fma, avx2, ...]}
    isa:
      avx512:
        written: 2026-01-01T00:00:00+00:00
        ops:                                  # only the knobs that beat the built-in choice
          <op>: {<knob key>: <value>, ...}
        measured: {<op>: {...}}               # tune's before/after rates, for people

`import tilegen` calls apply_cache() once: it returns at once when TILEGEN_TUNING=off or no file
exists (no YAML import, nothing allocated); otherwise it reads the file and hands each op's
entry for the ISA in use to that op's plug-in (`apply`). A file that cannot be read, was written
on another CPU, for another ISA or by another tilegen version, or holds a value this build
cannot take, is ignored whole with a TuningWarning. status() says what happened
(runtime_info()["tuning"]).
"""
from __future__ import annotations

import importlib
import os
import sys
import warnings
from types import ModuleType
from typing import Any, Dict, Optional

FORMAT = 2
FILE_NAME = "tuning.yaml"
OFF_VALUES = ("off", "0", "no", "false", "none")


class TuningWarning(RuntimeWarning):
    """The tuning cache was not applied (unreadable, or written for another CPU/ISA/version)."""


class CacheError(ValueError):
    """The tuning cache file is not a valid tilegen tuning cache."""


_status: Dict[str, Any] = {"status": "not read", "applied": False, "file": None}


def cache_dir() -> str:
    """The folder of the tuning cache (TILEGEN_CACHE_DIR overrides the platform's)."""
    env = os.environ.get("TILEGEN_CACHE_DIR")
    if env:
        return env
    home = os.path.expanduser("~")
    if sys.platform == "darwin":
        return os.path.join(home, "Library", "Caches", "tilegen")
    if os.name == "nt":
        base = os.environ.get("LOCALAPPDATA") or os.path.join(home, "AppData", "Local")
        return os.path.join(base, "tilegen", "Cache")
    xdg = os.environ.get("XDG_CACHE_HOME")
    if xdg and os.path.isabs(xdg):
        return os.path.join(xdg, "tilegen")
    return os.path.join(home, ".cache", "tilegen")


def cache_path() -> str:
    return os.path.join(cache_dir(), FILE_NAME)


def enabled() -> bool:
    return os.environ.get("TILEGEN_TUNING", "").strip().lower() not in OFF_VALUES


def status() -> Dict[str, Any]:
    """What apply_cache() did: status (applied | off | none | ignored), applied, file, detail."""
    return dict(_status)


def cpu_key() -> Dict[str, Any]:
    """This machine as the cache knows it: CPU brand, architecture, usable features."""
    import platform

    from tilegen.core import _core

    from .info import _cpu_brand

    return {"brand": _cpu_brand(), "arch": platform.machine(), "features": list(_core.features()[1])}


def isa_in_use() -> str:
    """The ISA whose entry applies: the best one in force (every op starts its choice there)."""
    from tilegen.core import _core

    return _core.isa_in_use()


def plugin(op: str) -> Optional[ModuleType]:
    """The op's tune plug-in (tilegen/ops/<op>/tune.py), or None when it has none."""
    from tilegen.ops import OPS

    if op not in OPS or not os.path.isfile(OPS[op].path("tune.py")):
        return None
    return importlib.import_module(f"{OPS[op].package}.tune")


def plugins() -> Dict[str, ModuleType]:
    """Every op's tune plug-in, in op order."""
    from tilegen.ops import OPS

    return {name: m for name in OPS for m in [plugin(name)] if m is not None}


# -------------------------------------------------------------------------------- the file

def validate(doc: Any) -> Dict[str, Any]:
    """Returns `doc` if it is a well-formed tuning cache; raises CacheError naming the problem.
    (Whether an op can take its values is the op's to say, when they are applied.)"""
    if not isinstance(doc, dict):
        raise CacheError("not a YAML mapping")
    if doc.get("format") != FORMAT:
        raise CacheError(f"format is {doc.get('format')!r}; this tilegen reads format {FORMAT}")
    if not isinstance(doc.get("tilegen_version"), str):
        raise CacheError("tilegen_version is missing")
    cpu = doc.get("cpu")
    if (not isinstance(cpu, dict) or not isinstance(cpu.get("brand"), str)
            or not isinstance(cpu.get("arch"), str) or not isinstance(cpu.get("features"), list)
            or not all(isinstance(f, str) for f in cpu["features"])):
        raise CacheError("cpu must hold brand, arch and a features list")
    isas = doc.get("isa")
    if not isinstance(isas, dict) or not isas:
        raise CacheError("isa must map ISA names to entries")
    for isa, entry in isas.items():
        ops = entry.get("ops") if isinstance(entry, dict) else None
        if not isinstance(isa, str) or not isinstance(ops, dict):
            raise CacheError(f"isa {isa!r}: no ops mapping")
        for op, values in ops.items():
            if not isinstance(op, str) or not isinstance(values, dict):
                raise CacheError(f"isa {isa}, op {op!r}: expected a mapping of knobs to values")
            for key, value in values.items():
                if not isinstance(key, str) or not isinstance(value, (int, str)) \
                        or isinstance(value, bool):
                    raise CacheError(f"isa {isa}, op {op}: {key!r} must be a name with an "
                                     f"integer or string value, got {value!r}")
    return doc


def load(path: str) -> Dict[str, Any]:
    """Reads and validates the cache file; raises CacheError (or OSError) when it is unusable."""
    import yaml

    try:
        with open(path, encoding="utf-8") as f:
            doc = yaml.load(f, Loader=getattr(yaml, "CSafeLoader", yaml.SafeLoader))
    except yaml.YAMLError as e:
        raise CacheError(f"not valid YAML ({' '.join(str(e).split())[:120]})") from None
    except UnicodeDecodeError:
        raise CacheError("not a text file") from None
    return validate(doc)


def mismatch(doc: Dict[str, Any], key: Dict[str, Any], version: str) -> Optional[str]:
    """Why a valid cache does not belong to this machine and tilegen, or None."""
    if doc["tilegen_version"] != version:
        return f"it was written by tilegen {doc['tilegen_version']}, this is {version}"
    cpu = doc["cpu"]
    for field in ("brand", "arch"):
        if cpu[field] != key[field]:
            return f"it was written on another CPU ({field} {cpu[field]!r}, this one is {key[field]!r})"
    if sorted(cpu["features"]) != sorted(key["features"]):
        theirs, ours = set(cpu["features"]), set(key["features"])
        diff = sorted(theirs ^ ours)
        return (f"it was written on a CPU with other usable features (differing: {' '.join(diff)})")
    return None


def _set_status(state: str, path: Optional[str], detail: str, **extra) -> None:
    global _status
    _status = {"status": state, "applied": state == "applied", "file": path, "detail": detail,
               **extra}


def _ignore(path: str, why: str) -> None:
    _set_status("ignored", path, why)
    warnings.warn(f"tilegen: ignoring the tuning cache {path}: {why}; run `tilegen tune` to "
                  f"rewrite it (TILEGEN_TUNING=off skips the cache)", TuningWarning, stacklevel=3)


def restore_builtins() -> None:
    """Every op's built-in configuration (what an untuned machine runs)."""
    for hook in plugins().values():
        hook.apply({})


def apply_cache() -> None:
    """Called once by `import tilegen`: applies the cache entry of the ISA in use, if any."""
    if not enabled():
        _set_status("off", None, "TILEGEN_TUNING=off")
        return
    path = cache_path()
    if not os.path.isfile(path):
        _set_status("none", None, f"no cache at {path}")
        return
    try:
        doc = load(path)
    except (CacheError, OSError) as e:
        _ignore(path, f"it is not a usable tuning cache ({e})")
        return
    from tilegen._version import __version__

    why = mismatch(doc, cpu_key(), __version__)
    if why:
        _ignore(path, why)
        return
    isa = isa_in_use()
    if isa not in doc["isa"]:
        _ignore(path, f"it holds tuning for ISA {', '.join(doc['isa'])}, not for the ISA in use "
                      f"({isa}; TILEGEN_ISA={os.environ.get('TILEGEN_ISA', '')!r})")
        return
    entry = doc["isa"][isa]["ops"]
    applied = []
    try:
        for op, values in entry.items():
            hook = plugin(op)
            if hook is None:
                raise ValueError(f"this build has no op {op!r} to tune")
            hook.apply(values)
            applied.append(op)
    except ValueError as e:  # a value this build cannot take: undo everything
        restore_builtins()
        _ignore(path, f"its {isa} entry does not fit this build ({e})")
        return
    _set_status("applied", path, f"applied {isa}: " + (", ".join(applied) or "built-ins kept"),
                isa=isa, chosen=entry, measured=doc["isa"][isa].get("measured", {}))


def write(isa_entries: Dict[str, Dict[str, Any]], path: Optional[str] = None) -> str:
    """Writes (merges) entries {isa: {"ops": {...}, "measured": {...}}} into the cache for this
    machine and tilegen version; the ops an entry names replace theirs in the file, entries of
    other ISAs and other ops are kept when the file has the same key, otherwise the file is
    replaced. Atomic (a temporary file renamed over it). Returns the path."""
    import datetime

    import yaml

    from tilegen._version import __version__

    path = path or cache_path()
    key = cpu_key()
    doc: Dict[str, Any] = {"format": FORMAT, "tilegen_version": __version__, "cpu": key, "isa": {}}
    if os.path.isfile(path):
        try:
            old = load(path)
            if mismatch(old, key, __version__) is None:
                doc["isa"].update(old["isa"])
        except (CacheError, OSError):
            pass
    now = datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds")
    for isa, entry in isa_entries.items():
        old = doc["isa"].get(isa, {})
        doc["isa"][isa] = {"written": now, "ops": {**old.get("ops", {}), **entry["ops"]},
                           "measured": {**old.get("measured", {}), **entry.get("measured", {})}}
    validate(doc)
    os.makedirs(os.path.dirname(path) or ".", exist_ok=True)
    tmp = f"{path}.{os.getpid()}.tmp"
    with open(tmp, "w", encoding="utf-8") as f:
        f.write("# tilegen tuning cache, written by `tilegen tune`; read by `import tilegen`\n"
                "# (TILEGEN_TUNING=off ignores it; delete it or run `tilegen tune --reset` to drop it)\n")
        yaml.safe_dump(doc, f, sort_keys=False, default_flow_style=None, width=100)
    os.replace(tmp, path)
    return path
