"""`tilegen bench --op image`: tg.image filters against OpenCV (cv2, threads matched with
cv2.setNumThreads by the worker) on a 1080p colour image (uint8, 3 channels) and its float32
grayscale.

The rate is Mpixel/s (pixels of the image per second, whatever its channel count): a filter's
cost is per pixel, and flops would make the uint8 fixed-point passes and the float passes
incomparable. Every timed call is the whole Python call, allocating its result, for both
libraries (cv2 returns a new array too). The image is a smooth random field (the kind of content
photographs have), the same in both workers.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Callable, List, Optional, Tuple

from tilegen.ops.plugins import case_dict, placed

NAME = "image"
LIBS = ("tilegen", "cv2")
RATIO_VS = ("cv2",)
UNIT, UNIT_SCALE = "Mpixel/s", 1e6


@dataclass(frozen=True)
class Case:
    """One filter call on an H x W x C image."""

    group: str            # the filter
    filt: str             # gaussian | box | filter2d | unsharp
    dtype: str            # u8 | f32
    h: int
    w: int
    c: int
    ksize: int
    sigma: float = 0.0

    @property
    def id(self) -> str:
        return f"image-{self.filt}{self.ksize}-{self.dtype}x{self.c}-{self.w}x{self.h}"

    @property
    def label(self) -> str:
        what = {"gaussian": f"Gaussian {self.ksize}x{self.ksize} s{self.sigma:g}",
                "box": f"box {self.ksize}x{self.ksize}",
                "filter2d": f"filter2D {self.ksize}x{self.ksize}",
                "unsharp": f"unsharp {self.ksize}x{self.ksize} s{self.sigma:g}"}[self.filt]
        return f"{what} {self.dtype} x{self.c} {self.w}x{self.h}"

    @property
    def work(self) -> int:
        return self.h * self.w

    size = None

    def runs_on(self, lib: str) -> bool:
        return lib in LIBS

    def as_dict(self) -> dict:
        return case_dict(self)

    def operands(self, seed: int = 0):
        """(img, kernel): a smooth random image (sums of random blobs, like photo content) and
        filter2d's kernel (a sharpening 3x3, or a random ksize x ksize)."""
        import numpy as np

        rng = np.random.default_rng(seed)
        small = rng.uniform(0, 255, (self.h // 8 + 2, self.w // 8 + 2, self.c))
        rows = np.linspace(0, small.shape[0] - 1.001, self.h)
        cols = np.linspace(0, small.shape[1] - 1.001, self.w)
        base = small[rows.astype(int)][:, cols.astype(int)]  # blocky field
        noise = rng.normal(0, 12, base.shape)
        img = np.clip(base + noise, 0, 255)
        if self.c == 1:
            img = img[..., 0]
        img = img.astype(np.uint8) if self.dtype == "u8" else (img / 255).astype(np.float32)
        if self.ksize == 3:
            kernel = np.array([[0, -1, 0], [-1, 5, -1], [0, -1, 0]], np.float32)
        else:
            kernel = rng.standard_normal((self.ksize, self.ksize)).astype(np.float32) / self.ksize
        return placed(img), kernel

    def check(self, operands, result) -> Optional[str]:
        """None when `result` matches OpenCV's (uint8: within 1 and equal on 99.9%; float32:
        within 1e-5 of the magnitude), else what is wrong."""
        import numpy as np

        try:
            import cv2
        except ImportError:  # no reference here: check the shape and dtype only
            cv2 = None
        img, kernel = operands
        result = np.asarray(result)
        if result.shape != img.shape or result.dtype != img.dtype:
            return f"shape/dtype {result.shape} {result.dtype}, expected {img.shape} {img.dtype}"
        if cv2 is None:
            return None
        want = _cv2_call(cv2, self, img, kernel)()
        if self.dtype == "u8":
            diff = np.abs(result.astype(np.int16) - want)
            if diff.max() > 1 or (diff == 0).mean() < 0.999:
                return f"max difference {diff.max()}, {(diff == 0).mean():.5f} equal to OpenCV"
            return None
        scale = np.abs(img).max() * (np.abs(kernel).sum() if self.filt == "filter2d" else 3)
        err = np.abs(result.astype(np.float64) - want).max()
        return None if err <= 1e-5 * scale else f"max error {err:.3g} vs OpenCV"


def _cv2_call(cv2, case: Case, img, kernel) -> Callable[[], object]:
    k = case.ksize
    if case.filt == "gaussian":
        return lambda: cv2.GaussianBlur(img, (k, k), case.sigma)
    if case.filt == "box":
        return lambda: cv2.blur(img, (k, k))
    if case.filt == "filter2d":
        return lambda: cv2.filter2D(img, -1, kernel)
    # unsharp, amount 1 and threshold 0: 2 img - blur (addWeighted rounds and saturates)
    return lambda: cv2.addWeighted(img, 2.0, cv2.GaussianBlur(img, (k, k), case.sigma), -1.0, 0)


HD = (1080, 1920)


def cases(quick: bool = False) -> List[Case]:
    """The targets (1080p: Gaussian 5x5 s1.1 and box 5x5 on uint8 x3, filter2D 3x3 on float32
    grayscale) and their neighbours; quick: the same filters on a small image."""
    h, w = (120, 160) if quick else HD
    out = [Case("gaussian", "gaussian", "u8", h, w, 3, 5, 1.1),
           Case("box", "box", "u8", h, w, 3, 5),
           Case("filter2d", "filter2d", "f32", h, w, 1, 3)]
    if quick:
        return out
    return out + [Case("gaussian", "gaussian", "f32", h, w, 1, 5, 1.1),
                  Case("gaussian", "gaussian", "u8", h, w, 1, 9, 2.0),
                  Case("box", "box", "f32", h, w, 1, 5),
                  Case("box", "box", "u8", h, w, 3, 21),
                  Case("filter2d", "filter2d", "u8", h, w, 3, 3),
                  Case("filter2d", "filter2d", "f32", h, w, 1, 7),
                  Case("unsharp", "unsharp", "u8", h, w, 3, 5, 1.0)]


def make_call(lib: str, case: Case, operands, threads: int = 1
              ) -> Tuple[Callable[[], object], Callable[[object], object]]:
    img, kernel = operands
    same = lambda r: r  # noqa: E731
    if lib == "tilegen":
        import tilegen

        f, k = tilegen.image, case.ksize
        call = {"gaussian": lambda: f.gaussian_blur(img, k, case.sigma),
                "box": lambda: f.box_blur(img, k),
                "filter2d": lambda: f.filter2d(img, kernel),
                "unsharp": lambda: f.unsharp_mask(img, k, case.sigma, 1.0, 0)}[case.filt]
        return call, same
    if lib == "cv2":
        import cv2

        return _cv2_call(cv2, case, img, kernel), same
    raise ValueError(f"lib: {lib!r} does not run {NAME}; allowed: {', '.join(LIBS)}")


def shape_note() -> Tuple[str, ...]:
    return ("images are W x H, uint8 (u8) or float32 (f32), x C interleaved channels; "
            "Mpixel/s = H*W / time",
            "every call allocates its result (tilegen and cv2 alike); reflect101 borders",
            "unsharp: amount 1, threshold 0; cv2 as addWeighted(img, 2, GaussianBlur(img), -1)")
