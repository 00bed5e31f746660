"""Lowering: from a KernelSpec to the concrete plan its family's template renders.

The plan fixes the vector layout of the register tile, the unroll, the tail strategy and the
register allocation; each family lowers its own kernels (dsl/ops/<family>.py). The spec has
already refused what the register file cannot hold.
"""
from __future__ import annotations

from typing import TYPE_CHECKING, Any

from .ops import RegisterBudget

if TYPE_CHECKING:  # pragma: no cover
    from .spec import KernelSpec


def register_budget(spec: "KernelSpec") -> RegisterBudget:
    return spec.family.register_budget(spec)


def lower(spec: "KernelSpec") -> Any:
    return spec.family.lower(spec)


__all__ = ["RegisterBudget", "lower", "register_budget"]
