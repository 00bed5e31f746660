"""Image filters with OpenCV's answers, on tilegen's generated kernels (filters.c):

    tg.image.filter2d(img, kernel, *, border="reflect101")
    tg.image.gaussian_blur(img, ksize, sigma, *, border="reflect101")
    tg.image.box_blur(img, ksize, *, border="reflect101")
    tg.image.unsharp_mask(img, ksize=5, sigma=1.0, amount=1.0, threshold=0, *, border=...)

img is a uint8 or float32 array of shape HxW or HxWxC (channels last and interleaved, as OpenCV
gives them; any strides), or a stack of such images NxHxWxC (a batch: each image filtered alone,
one after the other, each call threaded over bands of its rows); the result is a new array of the
same shape and dtype, and img is never modified. Five or more dimensions is a ValueError. A planar CxHxW array (torch's order) goes through np.moveaxis(img, 0, -1), and the
result back through np.moveaxis(out, -1, 0); given as it is, an array with more than 4 channels
and fewer rows than channels warns (ImageLayoutWarning) and runs as HxWxC. Borders:
"reflect101" (OpenCV's default), "replicate", "constant" (zeros).
"""
from ._image import BORDERS, ImageLayoutWarning, box_blur, filter2d, gaussian_blur, unsharp_mask

__all__ = ["BORDERS", "ImageLayoutWarning", "box_blur", "filter2d", "gaussian_blur",
           "unsharp_mask"]
