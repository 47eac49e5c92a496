"""Surface objects in the interpreter: reads and writes at byte x-coordinates, the boundary
modes clamp (coordinates clamped into the surface) and zero (reads zero, writes dropped),
scalar and vector texels, the pointer and the returning forms of the reads; pinned against
values computed by hand."""

from __future__ import annotations

import numpy as np

from tests.simt.simt_helpers import f32, run


def test_inout_surface_read_then_written_in_place() -> None:
    src = (
        "__global__ void k(cudaSurfaceObject_t s, float gain) {\n"
        "  int x = threadIdx.x, y = threadIdx.y;\n"
        "  float v;\n  surf2Dread(&v, s, x * sizeof(float), y);\n"
        "  surf2Dwrite(v * gain + y, s, x * 4, y);\n}\n"
    )
    img = np.arange(6, dtype=np.float32).reshape(2, 3)
    got = run(src, block=(3, 2), s=img, s_width=3, s_height=2, gain=2.0)["s"]
    np.testing.assert_array_equal(got.reshape(2, 3), img * 2 + np.array([[0], [1]]))


def test_clamp_and_zero_boundaries_of_reads() -> None:
    src = (
        "__global__ void k(float* out, cudaSurfaceObject_t s) {\n"
        "  int i = threadIdx.x;\n"
        "  out[2 * i] = surf1Dread<float>(s, (i - 1) * 4, cudaBoundaryModeClamp);\n"
        "  out[2 * i + 1] = surf1Dread<float>(s, (i + 1) * 4, cudaBoundaryModeZero);\n}\n"
    )
    got = run(src, block=(3,), out=np.zeros(6, np.float32), s=f32(10, 20, 30), s_width=3)["out"]
    np.testing.assert_array_equal(got, [10, 20, 10, 30, 20, 0])


def test_zero_boundary_drops_the_write_and_vector_texels() -> None:
    src = (
        "__global__ void k(cudaSurfaceObject_t s) {\n"
        "  int i = threadIdx.x;\n"
        "  uchar2 v = make_uchar2(i, 200 + i);\n"
        "  surf1Dwrite(v, s, (i - 1) * sizeof(uchar2), cudaBoundaryModeZero);\n}\n"
    )
    before = np.full((3, 2), 7, np.uint8)
    got = run(src, block=(4,), s=before, s_width=3)["s"]
    np.testing.assert_array_equal(got.reshape(3, 2), [[1, 201], [2, 202], [3, 203]])


def test_trap_mode_accesses_outside_read_the_nearest_texel_and_drop_writes() -> None:
    src = (
        "__global__ void k(float* out, cudaSurfaceObject_t s) {\n"
        "  int i = threadIdx.x;\n"
        "  out[i] = surf1Dread<float>(s, (i + 2) * 4);\n"
        "  surf1Dwrite(1.0f + i, s, (i + 2) * 4);\n}\n"
    )
    got = run(src, block=(2,), out=np.zeros(2, np.float32), s=f32(5, 6, 7), s_width=3)
    np.testing.assert_array_equal(got["out"], [7, 7])
    np.testing.assert_array_equal(got["s"], [5, 6, 1])
