// Pointwise product of two spectra scaled by 1/n, as the step between a forward and an
// inverse FFT in a convolution; the numbers are cufftComplex and the arithmetic goes through
// the cuComplex.h helpers, one thread per element.
#include <cufft.h>
#include <cuComplex.h>

__global__ void complex_pointwise_scale(cufftComplex *signal, const cufftComplex *filter,
                                        int size, float scale) {
    const int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < size) {
        cuFloatComplex prod = cuCmulf(signal[i], filter[i]);
        signal[i] = make_cuFloatComplex(cuCrealf(prod) * scale, cuCimagf(prod) * scale);
    }
}

void convolve_spectra(cufftComplex *d_signal, const cufftComplex *d_filter, int size) {
    const int block = 128;
    complex_pointwise_scale<<<(size + block - 1) / block, block>>>(d_signal, d_filter, size,
                                                                  1.0f / size);
}
