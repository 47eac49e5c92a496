// Bucketing with a fixed capacity: every key takes the next slot of its bucket (an atomicAdd
// whose old value is the slot) and records its position there while the bucket has room; the
// bucket sizes keep counting past the capacity (overflow shows as size > capacity).
#include <cuda_runtime.h>

#define SLOTS_PER_BUCKET 16

__global__ void bucket_slots(const int* keys, int* bucket_size, int* bucket_items, int num_keys,
                             int num_buckets) {
    int gid = threadIdx.x + blockIdx.x * blockDim.x;
    if (gid >= num_keys) return;
    int key = keys[gid];
    if (key < 0) return;
    int b = key % num_buckets;
    int slot = atomicAdd(bucket_size + b, 1);
    if (slot < SLOTS_PER_BUCKET) bucket_items[b * SLOTS_PER_BUCKET + slot] = gid;
}

void launch_bucket_slots(const int* keys, int* bucket_size, int* bucket_items, int num_keys,
                         int num_buckets) {
    cudaMemset(bucket_size, 0, num_buckets * sizeof(int));
    bucket_slots<<<(num_keys + 127) / 128, 128>>>(keys, bucket_size, bucket_items, num_keys,
                                                  num_buckets);
}
