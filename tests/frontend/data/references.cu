__device__ void welford(float& mean, float& m2, int& n, float x) {
    n += 1;
    float d = x - mean;
    mean += d / n;
    m2 += d * (x - mean);
}
template <typename T> __device__ void swap2(T& a, T& b) { T t = a; a = b; b = t; }
__device__ float scaled(const float& v, float s) { return v * s; }
__global__ void k(float* out, const float* in, int len) {
    float mean = 0.0f, m2 = 0.0f;
    int n = 0;
    for (int i = 0; i < len; ++i) welford(mean, m2, n, in[i]);
    float& slot = out[threadIdx.x];
    slot = mean;
    const float& c = in[0] * 2.0f;
    swap2(mean, m2);
    out[1] = scaled(m2 + 1.0f, c);
}
