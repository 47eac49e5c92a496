#include <cstdio>
#include <cstdlib>

void diffuse_step(const float *u, float *v, float k, int width, int height);

int main(int argc, char **argv)
{
    if (argc < 3) {
        fprintf(stderr, "usage: %s WIDTH HEIGHT [K]\n", argv[0]);
        return 1;
    }
    int width = atoi(argv[1]);
    int height = atoi(argv[2]);
    float k = argc > 3 ? (float)atof(argv[3]) : 0.125f;
    float *u, *v;
    cudaMalloc(&u, (size_t)width * height * sizeof(float));
    cudaMalloc(&v, (size_t)width * height * sizeof(float));
    diffuse_step(u, v, k, width, height);
    cudaFree(u);
    cudaFree(v);
    return 0;
}
