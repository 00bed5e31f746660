"""The per-user tuning cache: what `tilegen tune` found best on this machine, applied at import.

The cache is one small YAML file, ``tuning.yaml`` in the platform's cache folder
(``$TILEGEN_CACHE_DIR``, else ``$XDG_CACHE_HOME/tilegen`` or ``~/.cache/tilegen`` on Linux,
``~/Library/Caches/tilegen`` on macOS, ``%LOCALAPPDATA%\\tilegen\\Cache`` on Windows). It is keyed
by the CPU (brand, architecture, usable features) and the tilegen version, and holds one entry
per ISA (so tuning under ``TILEGEN_ISA=avx2`` does not replace the AVX-512 entry)::

    format: 1
    tilegen_version: 0.1.0
    cpu: {brand: ..., arch: x86_64, features: [sse2, avx, fma, avx2, ...]}
    isa:
      avx512:
        written: 2026-01-01T00:00:00+00:00
        gemm:
          f32: {kc: 256, nc: 1024, kernel: null, stream_rows: null,  # null = the built-in
                b_inner_rows: null}
          f64: {kc: 256, nc: 512, kernel: null}
        paged_attention:                           # optional
          f32: {kernel: null}                      # the decode kernel; null = the built-in
        measured: {...}                            # tune's before/after GFLOP/s, for people

`import tilegen` calls apply_cache() once: it returns at once when TILEGEN_TUNING=off or no file
exists (no YAML import, nothing allocated); otherwise it reads the file and applies the entry of
the ISA in use through set_gemm_kernel / set_gemm_blocking. A file that cannot be read, or was
written on another CPU, for another ISA or by another tilegen version, is ignored with a
TuningWarning. status() says what happened (runtime_info()["tuning"]).
"""
from __future__ import annotations

import os
import sys
import warnings
from typing import Any, Dict, Optional

FORMAT = 1
FILE_NAME = "tuning.yaml"
DTYPES = ("f32", "f64")
MAX_KC = 1 << 16  # the C core's limits (tilegen_x_set_gemm_blocking)
MAX_NC = 1 << 24
MAX_STREAM_ROWS = 64
MAX_B_INNER_ROWS = 256  # TG_B_INNER_ROWS_MAX
OFF_VALUES = ("off", "0", "no", "false", "none")


class TuningWarning(RuntimeWarning):
    """The tuning cache was not applied (unreadable, or written for another CPU/ISA/version)."""


class CacheError(ValueError):
    """The tuning cache file is not a valid tilegen tuning cache."""


_status: Dict[str, Any] = {"status": "not read", "applied": False, "file": None}
_defaults: Dict[str, Dict[str, Any]] = {}  # per dtype: the configuration before apply_cache


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


def _dtype(name: str):
    import numpy as np

    return np.float32 if name == "f32" else np.float64


def cpu_key() -> Dict[str, Any]:
    """This machine as the cache knows it: CPU brand, architecture, usable features."""
    import platform

    from tilegen.core import _core

    from .info import _cpu_brand

    return {"brand": _cpu_brand(), "arch": platform.machine(), "features": list(_core.features()[1])}


def isa_in_use(dtype: str) -> str:
    from tilegen.ops.gemm import _gemm as _core

    return _core.gemm_config(_dtype(dtype))["isa"]


def current(dtype: str) -> Dict[str, Any]:
    """The GEMM configuration in force for a dtype, in the cache's terms."""
    from tilegen.ops.gemm import _gemm as _core

    c = _core.gemm_config(_dtype(dtype))
    return {"isa": c["isa"], "kc": int(c["kc"]), "nc": int(c["nc"]),
            "rows": c["rows"]["kernel"], "packed": c["packed"]["kernel"],
            "stream_rows": int(c["stream_rows"]), "b_inner_rows": int(c["b_inner_rows"])}


def defaults(dtype: str) -> Dict[str, Any]:
    """The configuration tilegen chose before the cache was applied (the built-in one)."""
    return dict(_defaults.get(dtype) or current(dtype))


def apply(dtype: str, kc: int, nc: int, kernel: Optional[str],
          stream_rows: Optional[int] = None, b_inner_rows: Optional[int] = None) -> None:
    """Makes (kc, nc, main tile, stream rows, b-inner rows) the GEMM configuration of `dtype`.
    kernel=None restores the built-in main tiles of both A layouts (the largest of the ISA),
    stream_rows / b_inner_rows = None the built-in values."""
    from tilegen.ops.gemm import _gemm as _core

    dt = _dtype(dtype)
    base = defaults(dtype)
    _core.set_gemm_kernel(dt, kernel or base["rows"] or base["packed"])
    _core.set_gemm_blocking(dt, int(kc), int(nc))
    _core.set_gemm_stream_rows(dt, int(stream_rows or 0))
    _core.set_gemm_b_inner_rows(dt, int(b_inner_rows or 0))


def restore_defaults(dtype: str) -> None:
    d = defaults(dtype)
    apply(dtype, d["kc"], d["nc"], None)
    if dtype == "f32":
        apply_paged(None)


def apply_paged(kernel: Optional[str]) -> None:
    """Makes `kernel` paged attention's float32 decode kernel (None: the built-in one)."""
    from tilegen.ops.paged_attention import _paged_attention

    _paged_attention.set_paged_kernel(kernel)


# -------------------------------------------------------------------------------- the file

def _check_int(value, what: str, limit: int) -> int:
    if type(value) is not int or not 0 < value <= limit:
        raise CacheError(f"{what} is {value!r}; expected an integer in 1..{limit}")
    return value


def validate(doc: Any) -> Dict[str, Any]:
    """Returns `doc` if it is a well-formed tuning cache; raises CacheError naming the problem."""
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
        gemm = entry.get("gemm") if isinstance(entry, dict) else None
        if not isinstance(isa, str) or not isinstance(gemm, dict):
            raise CacheError(f"isa {isa!r}: no gemm mapping")
        for dtype, cfg in gemm.items():
            where = f"isa {isa}, gemm {dtype}"
            if dtype not in DTYPES or not isinstance(cfg, dict):
                raise CacheError(f"{where}: expected one of {', '.join(DTYPES)} with kc, nc, kernel")
            _check_int(cfg.get("kc"), f"{where}: kc", MAX_KC)
            _check_int(cfg.get("nc"), f"{where}: nc", MAX_NC)
            if cfg.get("kernel") is not None and not isinstance(cfg["kernel"], str):
                raise CacheError(f"{where}: kernel must be a kernel name or null")
            for key, limit in (("stream_rows", MAX_STREAM_ROWS), ("b_inner_rows", MAX_B_INNER_ROWS)):
                if cfg.get(key) is not None:
                    _check_int(cfg[key], f"{where}: {key}", limit)
        paged = entry.get("paged_attention", {})
        cfg = paged.get("f32", {}) if isinstance(paged, dict) else None
        if (not isinstance(cfg, dict) or set(paged) - {"f32"}
                or not isinstance(cfg.get("kernel"), (str, type(None)))):
            raise CacheError(f"isa {isa}, paged_attention: expected f32 with a kernel name or null")
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
    plan = {}
    for dtype in DTYPES:
        isa = isa_in_use(dtype)
        cfg = doc["isa"].get(isa, {}).get("gemm", {}).get(dtype)
        if cfg is not None:
            plan[dtype] = (isa, cfg)
    if not plan:
        wanted = sorted({isa_in_use(d) for d in DTYPES})
        _ignore(path, f"it holds tuning for ISA {', '.join(doc['isa'])}, not for the ISA in use "
                      f"({', '.join(wanted)}; TILEGEN_ISA={os.environ.get('TILEGEN_ISA', '')!r})")
        return
    applied = []
    for dtype, (isa, cfg) in plan.items():
        _defaults[dtype] = current(dtype)
        try:
            apply(dtype, cfg["kc"], cfg["nc"], cfg.get("kernel"), cfg.get("stream_rows"),
                  cfg.get("b_inner_rows"))
            if dtype == "f32":
                paged = doc["isa"][isa].get("paged_attention", {}).get("f32", {})
                apply_paged(paged.get("kernel"))
        except ValueError as e:  # a kernel this build does not have: undo everything
            for done in list(_defaults):
                restore_defaults(done)
            _defaults.clear()
            _ignore(path, f"its {isa} {dtype} entry does not fit this build ({e})")
            return
        applied.append(f"{dtype} ({isa})")
    _set_status("applied", path, "applied " + ", ".join(applied), dtypes=sorted(plan))


def write(isa_entries: Dict[str, Dict[str, Any]], path: Optional[str] = None) -> str:
    """Writes (merges) entries {isa: {"gemm": {...}, ...}} into the cache for this machine and
    tilegen version; entries of other ISAs are kept when the file has the same key, otherwise
    the file is replaced. Atomic (a temporary file renamed over it). Returns the path."""
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
        doc["isa"][isa] = dict(entry, written=now)
    validate(doc)
    os.makedirs(os.path.dirname(path) or ".", exist_ok=True)
    tmp = f"{path}.{os.getpid()}.tmp"
    with open(tmp, "w", encoding="utf-8") as f:
        f.write("# tilegen tuning cache, written by `tilegen tune`; read by `import tilegen`\n"
                "# (TILEGEN_TUNING=off ignores it; delete it or run `tilegen tune --reset` to drop it)\n")
        yaml.safe_dump(doc, f, sort_keys=False, default_flow_style=None, width=100)
    os.replace(tmp, path)
    return path
