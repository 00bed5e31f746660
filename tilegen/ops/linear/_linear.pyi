from typing import Any, List, Optional

import numpy as np
import numpy.typing as npt

def kernels(fmt: str) -> List[str]: ...

class PackedLayer:
    out_features: int
    in_features: int
    def __init__(self, quant: int, out_features: int, in_features: int,
                 weight: npt.NDArray[Any], bias: Optional[npt.NDArray[np.float32]],
                 act: int) -> None: ...
    @property
    def weight_bytes(self) -> int: ...
    def run(self, x: npt.NDArray[np.float32],
            y: npt.NDArray[np.float32]) -> npt.NDArray[np.float32]: ...
