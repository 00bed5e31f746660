"""A user's script, checked with `mypy --strict` against the installed tilegen (tests/test_typing.py)."""
import numpy as np
import numpy.typing as npt

import tilegen as tg


def scaled_product(a: npt.NDArray[np.float32], b: npt.NDArray[np.float32]) -> np.ndarray:
    c = np.zeros((a.shape[0], b.shape[1]), np.float32)
    tg.set_num_threads(2)
    out: np.ndarray = tg.gemm(a, b, c, alpha=2.0, beta=0.5, activation="relu", overwrite_c=True)
    return out


def report() -> str:
    info = tg.runtime_info()
    threads: int = tg.get_num_threads()
    paths = [tg.get_include(), tg.get_library(), tg.get_cmake_dir(), tg.get_pkgconfig_dir()]
    return f"{info['version']} {threads} {' '.join(paths)}"


a = np.ones((4, 3), np.float32)
b = np.ones((3, 5), np.float32)
product = tg.matmul(a, b, dtype=np.float64)
dotted = tg.dot(a, b)
x = np.ones((1, 2, 5, 5), np.float32)
y = np.empty((1, 3, 5, 5), np.float32)
conv: np.ndarray = tg.conv2d(x, np.ones((3, 2, 3, 3), np.float32), padding=1,
                             padding_mode="reflect", out=y)
up: np.ndarray = tg.conv_transpose2d(x, np.ones((2, 4, 2, 2), np.float32), stride=2)
q = np.ones((2, 4, 8), np.float32)
att = tg.attention(q, q, q, causal=True, out=np.empty_like(q))
print(scaled_product(a, b).shape, report(), product.shape, dotted.shape, tg.__version__,
      conv.shape, up.shape, att.shape)
