"""Image filters with OpenCV's answers, on tilegen's generated kernels (filters.c):

    tg.image.filter2d(img, kernel, *, border="reflect101")
    tg.image.gaussian_blur(img, ksize, sigma, *, border="reflect101")
    tg.image.box_blur(img, ksize, *, border="reflect101")
    tg.image.unsharp_mask(img, ksize=5, sigma=1.0, amount=1.0, threshold=0, *, border=...)

img is a uint8 or float32 array of shape HxW or HxWxC (channels interleaved, any strides); the
result is a new array of the same shape and dtype, and img is never modified. Borders:
"reflect101" (OpenCV's default), "replicate", "constant" (zeros).
"""
from ._image import BORDERS, box_blur, filter2d, gaussian_blur, unsharp_mask

__all__ = ["BORDERS", "box_blur", "filter2d", "gaussian_blur", "unsharp_mask"]
