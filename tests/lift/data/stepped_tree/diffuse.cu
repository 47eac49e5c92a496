// A 2-D diffusion step whose host rounds the grid down to whole 16x16 tiles: the kernel has no
// bound guard, so it is only ever run at multiples of 16.  Its launcher is called from main.cu.
#define TILE 16

__global__ void diffuse(const float *u, float *v, float k, int width, int height)
{
    int col = blockIdx.x * TILE + threadIdx.x;
    int row = blockIdx.y * TILE + threadIdx.y;
    int at = row * width + col;
    float here = u[at];
    float right = col + 1 < width ? u[at + 1] : here;
    float below = row + 1 < height ? u[at + width] : here;
    v[at] = here + k * (right + below - 2.0f * here);
}

void diffuse_step(const float *u, float *v, float k, int width, int height)
{
    dim3 tile(TILE, TILE);
    dim3 tiles(width / TILE, height / TILE);
    diffuse<<<tiles, tile>>>(u, v, k, width, height);
}
