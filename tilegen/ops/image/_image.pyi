"""Type stubs of the image op's compiled bindings (tilegen/ops/image/_image.pyx)."""
from typing import Any, Dict, List, Literal, Optional, Tuple, TypeVar, Union

import numpy as np
import numpy.typing as npt

BORDERS: Dict[str, int]
MAX_CHANNELS: int
BOX_U8_MAX_KSIZE: int
KINDS: Tuple[str, ...]
PLANAR_SUSPECT_CHANNELS: int

# uint8 or float32, HxW, HxWxC or a stack NxHxWxC; the result has the image's shape and dtype.
_Img = TypeVar("_Img", bound=np.ndarray)
_Border = Literal["reflect101", "replicate", "constant"]
_KSize = Union[int, Tuple[int, int]]

class ImageLayoutWarning(UserWarning): ...

def kernel_names() -> Dict[str, str]: ...
def kernel_isas() -> List[str]: ...
def set_kernel_isa(isa: Optional[str] = ...) -> None: ...
def filter2d(img: _Img, kernel: npt.ArrayLike, *, border: _Border = ...) -> _Img: ...
def gaussian_blur(img: _Img, ksize: _KSize, sigma: float, *, border: _Border = ...) -> _Img: ...
def box_blur(img: _Img, ksize: _KSize, *, border: _Border = ...) -> _Img: ...
def unsharp_mask(img: _Img, ksize: _KSize = ..., sigma: float = ..., amount: float = ...,
                 threshold: float = ..., *, border: _Border = ...) -> _Img: ...
