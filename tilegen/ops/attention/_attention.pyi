"""Type stubs of the attention op's compiled bindings (tilegen/ops/attention/_attention.pyx)."""
from typing import Any, Dict, List, Literal, Optional, Union

import numpy as np
import numpy.typing as npt

CAUSAL: Dict[str, int]

def kernel_name() -> Optional[str]: ...
def kernels() -> List[str]: ...
def set_kernel(name: Optional[str] = ...) -> None: ...
def _force_plain(on: bool) -> None: ...
def attention(q: npt.ArrayLike, k: npt.ArrayLike, v: npt.ArrayLike, *,
              mask: Optional[npt.ArrayLike] = ...,
              causal: Union[bool, np.bool_, Literal["bottom_right", "top_left"]] = ...,
              scale: Optional[float] = ...,
              out: Optional[npt.NDArray[np.floating[Any]]] = ...) -> npt.NDArray[np.floating[Any]]: ...
