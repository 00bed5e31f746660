"""Type stubs of the image op's compiled bindings (tilegen/ops/image/_image.pyx)."""
from typing import Any, Dict, List, Literal, Optional, Sequence, Tuple, TypeVar, Union

import numpy as np
import numpy.typing as npt

BORDERS: Dict[str, int]
CV_BORDERS: Dict[int, str]
CV_BORDER_ISOLATED: int
DTYPES: Dict[np.dtype[Any], int]
MAX_CHANNELS: int
BOX_U8_MAX_KSIZE: int
MAX_SIGMA: int
KINDS: Tuple[str, ...]
PLANAR_SUSPECT_CHANNELS: int

# uint8, uint16, float32 or float64, HxW, HxWxC or a stack NxHxWxC; the result has the image's
# shape and dtype (out= / dst=, when given, is returned).
_Img = TypeVar("_Img", bound=np.ndarray)
# a name, or OpenCV's cv2.BORDER_* int (0 constant, 1 replicate, 2 reflect, 3 wrap, 4 reflect101)
_Border = Union[Literal["reflect101", "replicate", "constant", "reflect", "wrap"], int]
_KSize = Union[int, Tuple[int, int]]
_Value = Union[float, Sequence[float], npt.NDArray[Any]]

class ImageLayoutWarning(UserWarning): ...

def kernel_names() -> Dict[str, str]: ...
def kernel_isas() -> List[str]: ...
def set_kernel_isa(isa: Optional[str] = ...) -> None: ...
def filter2d(img: _Img, kernel: npt.ArrayLike, *, border: Optional[_Border] = ...,
             borderType: Optional[_Border] = ..., border_value: Optional[_Value] = ...,
             borderValue: Optional[_Value] = ..., out: Optional[_Img] = ...,
             dst: Optional[_Img] = ...) -> _Img: ...
def gaussian_blur(img: _Img, ksize: _KSize, sigma: Optional[float] = ..., *,
                  sigmaX: Optional[float] = ..., sigmaY: Optional[float] = ...,
                  sigma_y: Optional[float] = ..., border: Optional[_Border] = ...,
                  borderType: Optional[_Border] = ..., border_value: Optional[_Value] = ...,
                  borderValue: Optional[_Value] = ..., out: Optional[_Img] = ...,
                  dst: Optional[_Img] = ...) -> _Img: ...
def box_blur(img: _Img, ksize: _KSize, *, border: Optional[_Border] = ...,
             borderType: Optional[_Border] = ..., border_value: Optional[_Value] = ...,
             borderValue: Optional[_Value] = ..., out: Optional[_Img] = ...,
             dst: Optional[_Img] = ...) -> _Img: ...
def unsharp_mask(img: _Img, ksize: int = ..., sigma: float = ..., amount: float = ...,
                 threshold: float = ..., *, border: Optional[_Border] = ...,
                 borderType: Optional[_Border] = ..., border_value: Optional[_Value] = ...,
                 borderValue: Optional[_Value] = ..., out: Optional[_Img] = ...,
                 dst: Optional[_Img] = ...) -> _Img: ...
