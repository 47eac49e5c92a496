// A kernel template whose element type is deduced from the launch's arguments (no template
// arguments written): `scale_rows<<<...>>>(out, (floatX*)inp, ...)` instantiates T = bf16.
// The row length comes from an enum in a namespace (`cfg::Tile::COLS`, `cfg::ROWS`).
#include <cuda_bf16.h>
#include <cuda_runtime.h>

typedef __nv_bfloat16 floatX;

namespace cfg {
enum Tile : int { ROWS = 4, COLS = 64 };
}

template <typename T>
__global__ void scale_rows(T* out, const T* inp, const float* gain, int R) {
    int r = blockIdx.x * cfg::ROWS + threadIdx.y;
    int c = threadIdx.x;
    if (r < R) {
        out[r * cfg::Tile::COLS + c] = (T)((float)inp[r * cfg::COLS + c] * gain[r]);
    }
}

void launch_scale_rows(floatX* out, const void* inp, const float* gain, int R) {
    dim3 block(cfg::COLS, cfg::ROWS);
    scale_rows<<<(R + cfg::ROWS - 1) / cfg::ROWS, block>>>(out, (floatX*)inp, gain, R);
}
