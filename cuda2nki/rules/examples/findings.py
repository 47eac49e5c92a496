"""Examples for the port findings (C2N5xxx): `cuda2nki check` of the corpus's flawed ports."""

from __future__ import annotations

from cuda2nki.rules.examples.base import Example


def _corpus(kernel: str, port: str, exit_code: int | None = 1) -> Example:
    suite, name = kernel.split("/")
    return Example(
        argv=(
            "check",
            f"{{CORPUS}}/{suite}/{name}.cu",
            f"{{CORPUS}}/{suite}/ports/{port}.py",
            "--seeds",
            "1",
        ),
        exit_code=exit_code,
    )


BIG_TILE = """\
import nki
import nki.isa as nisa
import nki.language as nl


@nki.jit
def vector_add(a, b):
    (N,) = a.shape
    out = nl.ndarray((N,), dtype=a.dtype, buffer=nl.shared_hbm)
    whole = nl.ndarray((1, 60000), dtype=a.dtype, buffer=nl.sbuf)
    scratch = nl.ndarray((1, 60000), dtype=a.dtype, buffer=nl.sbuf)
    a_t = nl.ndarray((1, N), dtype=a.dtype, buffer=nl.sbuf)
    b_t = nl.ndarray((1, N), dtype=b.dtype, buffer=nl.sbuf)
    nisa.dma_copy(dst=a_t, src=a.reshape((1, N)))
    nisa.dma_copy(dst=b_t, src=b.reshape((1, N)))
    nisa.tensor_tensor(dst=a_t, data1=a_t, data2=b_t, op=nl.add)
    nisa.dma_copy(dst=out.reshape((1, N)), src=a_t)
    return out
"""

EXAMPLES = {
    "C2N5001": _corpus("basic/vector_add", "vector_add_flaw_literal_thread"),
    "C2N5002": _corpus("linalg/matmul_tiled", "matmul_tiled_flaw_vector_engine"),
    "C2N5003": _corpus("norm/softmax_naive", "softmax_naive_flaw_missing_tail"),
    "C2N5004": _corpus("linalg/matmul_tiled", "matmul_tiled_flaw_bf16_accum"),
    "C2N5005": _corpus("linalg/matmul_tiled", "matmul_tiled_flaw_bf16_inputs"),
    "C2N5006": _corpus("norm/softmax_naive", "softmax_naive_flaw_reload_inner"),
    "C2N5007": _corpus("linalg/transpose_shared", "transpose_shared_flaw_tiny_dma"),
    "C2N5008": _corpus("linalg/transpose_shared", "transpose_shared_flaw_tiny_dma"),
    "C2N5009": _corpus("linalg/matmul_tiled", "matmul_tiled_flaw_retranspose"),
    "C2N5010": _corpus("activation/gelu_tanh", "gelu_tanh_flaw_per_element_dma"),
    "C2N5011": _corpus("reduce/row_max_warp", "row_max_warp_flaw_warp_lanes"),
    "C2N5014": _corpus("misc/nll_gather", "nll_gather_flaw_whole_rows"),
    "C2N5013": Example(
        argv=(
            "check",
            "{CORPUS}/activation/gelu_tanh.cu",
            "{CORPUS}/activation/ports/gelu_tanh_flaw_per_element_dma.py",
            "--seeds",
            "1",
            "--ignore",
            "C2N5010",
        ),
        exit_code=1,
    ),
    "C2N5012": Example(
        files={"port.py": BIG_TILE},
        argv=("check", "{CORPUS}/basic/vector_add.cu", "port.py", "--seeds", "1"),
        exit_code=1,
    ),
}

NO_EXAMPLE: dict[str, str] = {}
