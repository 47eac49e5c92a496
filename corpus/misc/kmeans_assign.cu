// k-means assignment step: each thread scans all centroids for the nearest one (squared
// Euclidean distance, first minimum wins) and stores its index.
#include <cfloat>
#include <cuda_runtime.h>

__global__ void kmeans_assign(const float* points, const float* centroids, int* membership,
                              int npoints, int nclusters, int nfeatures) {
    int pid = blockIdx.x * blockDim.x + threadIdx.x;
    if (pid >= npoints) return;
    int best = 0;
    float best_dist = FLT_MAX;
    for (int c = 0; c < nclusters; c++) {
        float dist = 0.0f;
        for (int f = 0; f < nfeatures; f++) {
            float diff = points[pid * nfeatures + f] - centroids[c * nfeatures + f];
            dist += diff * diff;
        }
        if (dist < best_dist) {
            best_dist = dist;
            best = c;
        }
    }
    membership[pid] = best;
}

void launch_kmeans_assign(const float* points, const float* centroids, int* membership,
                          int npoints, int nclusters, int nfeatures) {
    kmeans_assign<<<(npoints + 127) / 128, 128>>>(points, centroids, membership, npoints,
                                                  nclusters, nfeatures);
}
