"""Device functions defined elsewhere in the migrated tree (not next to the declaring file):
searched from the nearest directory outwards, up to the tree's root, never in another program."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from cuda2nki.frontend import parse_file
from cuda2nki.frontend.headers import searching_tree
from cuda2nki.simt import run_kernel

USER = """#include <cuda_runtime.h>
{proto}
__global__ void bend(const float* src, float* dst, int len) {{
    for (int t = blockIdx.x * blockDim.x + threadIdx.x; t < len; t += gridDim.x * blockDim.x)
        dst[t] = {call};
}}
"""


def _definition(name: str, gain: float, spelling: str) -> str:
    return spelling.format(name=name, gain=gain)


SPELLINGS = [
    "__device__ float {name}(float q) {{ return q * {gain}f; }}\n",
    "__host__ __device__\nfloat {name}(float q)\n{{\n    return {gain}f * q;\n}}\n",
    'extern "C" __device__ float {name}(float q) {{ return q * {gain}f; }}\n',
    "#define GAIN_K {gain}f\nstatic __device__ float unit(float q) {{ return q; }}\n"
    "__device__ float {name}(float q) {{ return unit(q) * GAIN_K; }}\n",
]


def _gain(tu, name: str = "bend") -> float:
    xs = np.arange(6, dtype=np.float32) + 1
    got = run_kernel(
        tu, name, grid=(1,), block=(4,), args={"src": xs, "dst": np.zeros(6, np.float32), "len": 6}
    )["dst"]
    return float(got[0] / xs[0])


def _write(root: Path, files: dict[str, str]) -> None:
    for rel, text in files.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text)


@pytest.mark.parametrize("spelling", SPELLINGS)
@pytest.mark.parametrize(
    ("user", "near", "far"),
    [
        # a helper folder beside the program's, and one at the tree's top
        ("apps/filter/main.cu", "apps/common/curve.cu", "shared/curve.cu"),
        # a helper folder below the program's folder's parent, deeper
        ("prog/src/run.cu", "prog/lib/math/curve.cu", "other_lib/curve.cu"),
    ],
)
def test_the_nearest_definition_of_the_tree_is_linked(tmp_path, spelling, user, near, far):
    _write(
        tmp_path,
        {
            user: USER.format(proto="__device__ float curve(float);", call="curve(src[t])"),
            near: _definition("curve", 3.0, spelling),
            far: _definition("curve", 7.0, spelling),
        },
    )
    with searching_tree(tmp_path):
        tu = parse_file(tmp_path / user)
    assert tu.rejected == {}, tu.diagnostics
    notes = [d for d in tu.diagnostics if d.code == "C2N1007"]
    assert notes and {Path(d.loc.file) for d in notes} == {tmp_path / near}
    assert _gain(tu) == pytest.approx(3.0)


def test_a_definition_beside_the_file_wins_over_the_tree(tmp_path):
    _write(
        tmp_path,
        {
            "a/b/k.cu": USER.format(proto="__device__ float tone(float v);", call="tone(src[t])"),
            "a/b/tone.cu": _definition("tone", 2.0, SPELLINGS[0]),
            "a/tone.cu": _definition("tone", 5.0, SPELLINGS[0]),
        },
    )
    with searching_tree(tmp_path):
        tu = parse_file(tmp_path / "a/b/k.cu")
    assert _gain(tu) == pytest.approx(2.0)


@pytest.mark.parametrize(
    "elsewhere",
    [
        # another program's file (it has a main): never linked
        "int main(int argc, char** argv) { return 0; }\n" + _definition("tone", 5.0, SPELLINGS[0]),
        "int main() {\n  return 0;\n}\n" + _definition("tone", 5.0, SPELLINGS[1]),
    ],
)
def test_another_programs_definition_is_not_linked(tmp_path, elsewhere):
    _write(
        tmp_path,
        {
            "one/k.cu": USER.format(proto="__device__ float tone(float v);", call="tone(src[t])"),
            "two/main.cu": elsewhere,
        },
    )
    with searching_tree(tmp_path):
        tu = parse_file(tmp_path / "one/k.cu")
    assert [d.code for d in tu.rejected["bend"]] == ["C2N1021"]


def test_outside_a_migrated_tree_only_the_directory_is_searched(tmp_path):
    _write(
        tmp_path,
        {
            "one/k.cu": USER.format(proto="__device__ float tone(float v);", call="tone(src[t])"),
            "util/tone.cu": _definition("tone", 5.0, SPELLINGS[0]),
        },
    )
    assert [d.code for d in parse_file(tmp_path / "one/k.cu").rejected["bend"]] == ["C2N1021"]
    with searching_tree(tmp_path / "one"):  # the definition lies outside the tree
        tu = parse_file(tmp_path / "one/k.cu")
    assert [d.code for d in tu.rejected["bend"]] == ["C2N1021"]
