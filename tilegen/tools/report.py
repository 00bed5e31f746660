"""Plain-text report of `tilegen.runtime_info()`, shared by `tilegen info` and `tg.show_config()`.

Pure formatting: it takes the dict and never imports the compiled core, so it can be tested
with any dict. Missing keys are skipped and unknown keys are listed at the end, so the report
keeps working while runtime_info() grows.
"""
from __future__ import annotations

from typing import Any, List, Mapping, Tuple

from tilegen.dsl.spec import spec_from_name

# Top-level keys with a dedicated row below; anything else is printed generically at the end.
_KNOWN = {"version", "numpy_version", "arch", "cpu_brand", "features", "caches", "isa_cap",
          "isas_available", "kernels", "threads", "library", "tuning"}


def _words(value: Any) -> str:
    if isinstance(value, (list, tuple)):
        return " ".join(str(v) for v in value) or "(none)"
    return str(value)


# Per-kernel keys shown in their own form; the tile (mr, nr) is already in the kernel's name.
_KERNEL_KNOWN = {"isa", "kernel", "kernels", "kernels_by_rows", "mc", "kc", "nc", "mr", "nr"}


def _rows_summary(by_rows: List[str]) -> str:
    """[<1x32 kernel>, <4x32>, <4x32>] -> "for m = 1: 1x32, 2-3: 4x32" (entry i serves m = i+1)."""
    runs: List[List[Any]] = []
    for m, name in enumerate(by_rows, start=1):
        if runs and runs[-1][2] == name:
            runs[-1][1] = m
        else:
            runs.append([m, m, name])
    parts = []
    for lo, hi, name in runs:
        try:
            tile = spec_from_name(name).tile
        except ValueError:
            tile = name
        parts.append(f"{lo}{'' if lo == hi else f'-{hi}'}: {tile}")
    return "for m = " + ", ".join(parts)


def _kernel_lines(k: Mapping[str, Any]) -> List[str]:
    """The lines under a chosen kernel: row-count table, blocking, then any other detail
    (a nested mapping, e.g. one per A layout, is shown the same way, indented)."""
    lines = []
    by_rows = k.get("kernels_by_rows", k.get("kernels"))
    if by_rows:
        lines.append(_rows_summary(list(by_rows)))
    blocks = [f"{b.upper()} {k[b]}" for b in ("mc", "kc", "nc") if b in k]
    if blocks:
        lines.append("blocks: " + ", ".join(blocks))
    for key, value in k.items():
        if key in _KERNEL_KNOWN:
            continue
        if isinstance(value, Mapping):
            name = value.get("kernel", "")
            lines.append(f"{key}: {'none registered' if name is None else name}".rstrip())
            lines += ["  " + line for line in _kernel_lines(value)]
        else:
            lines.append(f"{key}: {_words(value)}")
    return lines


def _kernel_rows(kernels: Mapping[str, Any]) -> List[Tuple[str, str]]:
    rows: List[Tuple[str, str]] = []
    for op, by_dtype in kernels.items():
        if not isinstance(by_dtype, Mapping):
            rows.append((op, str(by_dtype)))
            continue
        for dtype, k in by_dtype.items():
            label = f"{op} {dtype}"
            if not isinstance(k, Mapping):
                rows.append((label, str(k)))
                continue
            head = str(k.get("kernel", "?"))
            if k.get("isa"):
                head += f"  ({k['isa']})"
            rows.append((label, head))
            rows += [("", line) for line in _kernel_lines(k)]
    return rows


def _tuning(t: Any) -> List[str]:
    """runtime_info()["tuning"]: whether the `tilegen tune` cache was applied, from where, and
    what each op's knobs were set to, with the gain tune measured over the built-in choice."""
    if not isinstance(t, Mapping):
        return [_words(t)]
    state, detail, path = t.get("status", "?"), t.get("detail"), t.get("file")
    if state == "applied":
        lines = [f"{detail or 'applied'} from {path}"]
        measured = t.get("measured") or {}
        for op, values in (t.get("chosen") or {}).items():
            for key, value in values.items():
                m = measured.get(op, {}).get("knobs", {}).get(key, {})
                rates, why = m.get("rates", {}), ""
                base = next((k for k in rates if k.endswith("(built-in)")), None)
                if base and m.get("chosen") in rates and rates[base]:
                    gain = 100 * (rates[m["chosen"]] / rates[base] - 1)
                    why = f" ({gain:+.1f}% over {base}, noise {100 * m.get('noise', 0):.1f}%)"
                lines.append(f"{op} {key} = {value}{why}")
        return lines
    if state == "ignored":
        return [f"ignored {path}: {detail}"]
    return [f"{state} ({detail})" if detail else str(state)]


def _size(n: int) -> str:
    return f"{n >> 20} MiB" if n >= 1 << 20 and n % (1 << 20) == 0 else f"{n >> 10} KiB"


def _caches(c: Any) -> str:
    """{"l1d": 49152, "l2": 2097152, "l3": 0, "source": "sysfs"} -> "L1d 48 KiB, L2 2 MiB (sysfs)"."""
    if not isinstance(c, Mapping):
        return str(c)
    parts = [f"{label} {_size(int(c[key]))}" for key, label in (("l1d", "L1d"), ("l2", "L2"),
                                                                   ("l3", "L3")) if c.get(key)]
    return ", ".join(parts) + (f" ({c['source']})" if c.get("source") else "")


def format_runtime_info(info: Mapping[str, Any]) -> str:
    """The readable, aligned report of a runtime_info() dict."""
    rows: List[Tuple[str, str]] = []

    def add(label: str, key: str, fmt=_words) -> None:
        if key in info:
            rows.append((label, fmt(info[key])))

    versions = []
    if "version" in info:
        versions.append(f"tilegen {info['version']}")
    if "numpy_version" in info:
        versions.append(f"numpy {info['numpy_version']}")
    if versions:
        rows.append(("versions", ", ".join(versions)))
    add("CPU", "cpu_brand")
    add("arch", "arch")
    features = info.get("features")
    if isinstance(features, Mapping):
        if "detected" in features:
            rows.append(("features", _words(features["detected"])))
        if "os_enabled" in features:
            rows.append(("OS-enabled", _words(features["os_enabled"])))
    elif features is not None:
        rows.append(("features", _words(features)))
    add("caches", "caches", _caches)
    # None means no cap: TILEGEN_ISA is unset, the best ISA the CPU supports is used.
    add("ISA cap", "isa_cap", lambda v: "none (TILEGEN_ISA not set)" if v is None else str(v))
    add("ISAs available", "isas_available")
    kernels = info.get("kernels")
    if isinstance(kernels, Mapping):
        rows += _kernel_rows(kernels)
    threads = info.get("threads")
    if isinstance(threads, Mapping):
        text = str(threads.get("num_threads", "?"))
        if threads.get("backend"):
            text += f", {threads['backend']}"
        rows.append(("threads", text))
    elif threads is not None:
        rows.append(("threads", str(threads)))
    add("library", "library")
    if "tuning" in info:
        first, *more = _tuning(info["tuning"])
        rows.append(("tuning", first))
        rows += [("", line) for line in more]
    for key in sorted(set(info) - _KNOWN):
        rows.append((key, _words(info[key])))

    width = max((len(label) for label, _ in rows), default=0)
    return "\n".join(f"{label:<{width}}  {value}".rstrip() for label, value in rows)
