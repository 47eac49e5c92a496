"""Examples for the port findings (C2N5xxx): `cuda2nki check` of the corpus's flawed ports."""

from __future__ import annotations

from cuda2nki.rules.examples.base import Example


def _corpus(kernel: str, port: str, exit_code: int | None = 1) -> Example:
    suite, name = kernel.split("/")
    return Example(
        argv=(
            "check",
            f"{{ROOT}}/corpus/{suite}/{name}.cu",
            f"{{ROOT}}/corpus/{suite}/ports/{port}.py",
            "--seeds",
            "1",
        ),
        exit_code=exit_code,
    )


EXAMPLES = {
    "C2N5001": _corpus("basic/vector_add", "vector_add_flaw_literal_thread"),
    "C2N5002": _corpus("linalg/matmul_tiled", "matmul_tiled_flaw_vector_engine"),
    "C2N5003": _corpus("norm/softmax_naive", "softmax_naive_flaw_missing_tail"),
    "C2N5004": _corpus("linalg/matmul_tiled", "matmul_tiled_flaw_bf16_accum"),
    "C2N5005": _corpus("linalg/matmul_tiled", "matmul_tiled_flaw_bf16_inputs"),
    "C2N5006": _corpus("norm/softmax_naive", "softmax_naive_flaw_reload_inner"),
    "C2N5007": _corpus("linalg/transpose_shared", "transpose_shared_flaw_tiny_dma"),
    "C2N5008": _corpus("linalg/transpose_shared", "transpose_shared_flaw_tiny_dma"),
    "C2N5010": _corpus("activation/gelu_tanh", "gelu_tanh_flaw_per_element_dma"),
    "C2N5012": _corpus("norm/rmsnorm", "rmsnorm_flaw_sbuf_overflow"),
}

NO_EXAMPLE = {
    "C2N5009": "not raised yet: no check detects avoidable transposes",
    "C2N5011": "not raised yet: no check detects warp-sized logic",
    "C2N5013": "not raised yet: suppressed findings are counted in the report, not as a finding",
}
