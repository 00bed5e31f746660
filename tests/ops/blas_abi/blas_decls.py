"""The BLAS/CBLAS entry points as the C sources of tilegen/ops/blas_abi define them: each source is
preprocessed with TG_BLAS_API as a marker, and every marked definition's head becomes a
declaration in tilegen_cblas.h's spelling (complex values as tilegen_complex_float/_double, so
the header also serves C++). test_blas_header.py holds the header to exactly these."""
import re
import subprocess
from pathlib import Path
from typing import Dict, List

ROOT = Path(__file__).resolve().parents[3]
BLAS = ROOT / "tilegen" / "ops" / "blas_abi"
SOURCES = ["blas_errors.c", "blas_s.c", "blas_d.c", "blas_c.c", "blas_z.c", "sbgemm.c"]
MARK = "TG_EXPORT_MARK__"


def include_args() -> List[str]:
    dirs = [ROOT / "tilegen" / "include", ROOT / "tilegen" / "generated", ROOT / "tilegen" / "core"]
    dirs += sorted(p for p in (ROOT / "tilegen" / "ops").iterdir() if p.is_dir())
    return [f"-I{d}" for d in dirs]


def normalize(head: str) -> str:
    head = re.sub(r"__attribute__\s*\(\(\s*weak\s*\)\)\s*", "", head)
    head = re.sub(r"\s+", " ", head).strip()
    head = head.replace("float _Complex", "tilegen_complex_float")
    head = head.replace("double _Complex", "tilegen_complex_double")
    head = re.sub(r"\s*\*\s*", "* ", head).replace("* )", "*)").replace("* ,", "*,")
    head = re.sub(r"\s+,", ",", head)
    head = re.sub(r"\(\s+", "(", head)
    head = re.sub(r"\s+\)", ")", head)
    return head


def definitions(cc: str = "gcc") -> Dict[str, List[str]]:
    """source file -> the normalized heads ("ret name(params)") of its exported functions."""
    out = {}
    for src in SOURCES:
        r = subprocess.run([cc, "-std=gnu11", "-E", "-P", f"-DTG_BLAS_API={MARK}",
                            *include_args(), str(BLAS / src)],
                           capture_output=True, text=True, check=True)
        heads = re.findall(rf"{MARK}\s+([^{{;]*?\))\s*\{{", r.stdout, re.S)
        out[src] = [normalize(h) for h in heads]
    return out


def name_of(head: str) -> str:
    return re.search(r"(\w+)\s*\(", head).group(1)


def header_block(defs: Dict[str, List[str]]) -> str:
    lines = []
    for src, heads in defs.items():
        lines.append(f"/* {src} */")
        lines += [f"TILEGEN_API {h};" for h in heads]
    return "\n".join(lines) + "\n"


def wrap(line: str, width: int = 100) -> str:
    """One declaration per line, broken after commas and aligned under its parenthesis."""
    if len(line) <= width:
        return line
    head, rest = line.split("(", 1)
    indent = " " * (len(head) + 1)
    parts = [p.strip() for p in rest.split(",")]
    out, cur = [], head + "("
    for i, p in enumerate(parts):
        piece = p + ("," if i < len(parts) - 1 else "")
        if len(cur) + len(piece) + 1 > width and not cur.endswith("("):
            out.append(cur.rstrip())
            cur = indent + piece
        else:
            cur += ("" if cur.endswith("(") or cur == indent else " ") + piece
    out.append(cur)
    return "\n".join(out)


def rewrite_header() -> None:
    """Replaces the generated block of tilegen_cblas.h with the definitions' declarations."""
    path = BLAS / "tilegen_cblas.h"
    text = path.read_text()
    block = "\n".join(wrap(x) for x in header_block(definitions()).splitlines()) + "\n"
    begin, end = "/* BEGIN GENERATED DECLARATIONS */\n", "/* END GENERATED DECLARATIONS */"
    i, j = text.index(begin) + len(begin), text.index(end)
    path.write_text(text[:i] + block + text[j:])


if __name__ == "__main__":  # python tests/ops/blas_abi/blas_decls.py: rewrite the header's block
    rewrite_header()
