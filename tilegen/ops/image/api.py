"""Image filters with OpenCV's answers, on tilegen's generated kernels (filters.c):

    tg.image.filter2d(img, kernel, *, border="reflect101", border_value=None, out=None)
    tg.image.gaussian_blur(img, ksize, sigma, *, sigmaY=0, border=..., border_value=..., out=...)
    tg.image.box_blur(img, ksize, *, border=..., border_value=..., out=...)
    tg.image.unsharp_mask(img, ksize=5, sigma=1.0, amount=1.0, threshold=0, *, border=..., ...)

img is a uint8, uint16, float32 or float64 array of shape HxW or HxWxC (channels last and
interleaved, as OpenCV gives them; any strides), or a batch NxHxWxC (one call of the C library,
threaded over images and rows); the result has the image's shape and dtype (a new array, or
out= / dst=), and img is never modified unless it is out. Five or more dimensions is a
ValueError. A planar CxHxW array (torch's order) goes through np.moveaxis(img, 0, -1), and the
result back through np.moveaxis(out, -1, 0); given as it is, an array with more than 4 channels
and fewer rows than channels warns (ImageLayoutWarning) and runs as HxWxC. OpenCV's spellings
are accepted: ksize (width, height) or (0, 0) from sigma, sigmaX / sigmaY, borderType (a name or
a cv2.BORDER_* int), borderValue, dst. Borders: "reflect101" (OpenCV's default), "replicate",
"constant" (border_value, default zeros), "reflect" (edge pixel repeated), "wrap".
"""
from ._image import BORDERS, ImageLayoutWarning, box_blur, filter2d, gaussian_blur, unsharp_mask

__all__ = ["BORDERS", "ImageLayoutWarning", "box_blur", "filter2d", "gaussian_blur",
           "unsharp_mask"]
