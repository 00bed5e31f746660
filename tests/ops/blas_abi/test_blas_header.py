"""tilegen_cblas.h declares exactly the BLAS entry points tilegen/ops/blas_abi defines, with the
same parameter lists (the definitions are the source: blas_decls.py derives the declarations
from the preprocessed C), and the header compiles as C and C++, alone and after the reference
<cblas.h>."""
import re
import shutil
import subprocess

import pytest

import cprog
from blas_decls import BLAS, definitions, header_block


def generated_block(text: str) -> str:
    m = re.search(r"/\* BEGIN GENERATED DECLARATIONS \*/\n(.*?)/\* END GENERATED DECLARATIONS \*/",
                  text, re.S)
    assert m, "tilegen_cblas.h has no generated block"
    return m.group(1)


def decls(block: str) -> list:
    return [re.sub(r"\s+", " ", d).strip() for d in re.findall(r"TILEGEN_API ([^;]*);", block)]


def test_header_declares_exactly_the_definitions():
    if not shutil.which("gcc"):
        pytest.skip("gcc is not on PATH")
    want = decls(header_block(definitions()))
    got = decls(generated_block((BLAS / "tilegen_cblas.h").read_text()))
    assert got == want, (f"declared, not defined: {sorted(set(got) - set(want))[:5]}\n"
                         f"defined, not declared: {sorted(set(want) - set(got))[:5]}\n"
                         "rewrite the block with: python tests/ops/blas_abi/blas_decls.py")


@pytest.mark.parametrize("lang,before", [("c", ""), ("c", "#include <cblas.h>\n"),
                                         ("c++", "")])
def test_header_compiles(tmp_path, lang, before):
    import tilegen as tg
    if before and not cprog.netlib_blas_dir():
        pytest.skip("no reference cblas.h (install libblas-dev)")
    src = tmp_path / ("h.c" if lang == "c" else "h.cpp")
    src.write_text(before + '#include "tilegen_cblas.h"\nint main(void) { return 0; }\n')
    compiler = "gcc" if lang == "c" else "g++"
    if not shutil.which(compiler):
        pytest.skip(f"{compiler} is not on PATH")
    r = subprocess.run([compiler, "-Wall", "-Werror", "-fsyntax-only", f"-I{tg.get_include()}",
                        str(src)], capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
