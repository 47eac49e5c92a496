// Cells with a nested struct member, an int count and a bool flag, read through a const
// reference to the array element behind an early-return guard: nested members flatten to
// joined names (`cells_span`, a record of two floats), the flag is a bool tensor.
#include <cuda_runtime.h>

struct Span {
    float lo;
    float hi;
};

struct Cell {
    Span span;
    int count;
    bool active;
};

__global__ void cell_density(const Cell* cells, float* density, int ncells) {
    int c = threadIdx.x + blockDim.x * blockIdx.x;
    if (c >= ncells) return;
    const Cell& cell = cells[c];
    float width = cell.span.hi - cell.span.lo;
    density[c] = cell.active ? (float)cell.count / width : 0.0f;
}

void launch_cell_density(const Cell* cells, float* density, int ncells) {
    dim3 block(64);
    dim3 grid((ncells + block.x - 1) / block.x);
    cell_density<<<grid, block>>>(cells, density, ncells);
}
