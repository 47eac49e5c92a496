// Graph step over an array of node structs (BFS style): each node holds the first edge and the
// edge count; a thread sums the weights of its node's edges. The struct is copied to a local,
// and read in place through a pointer.
#include <cuda_runtime.h>

struct Node {
    int starting;
    int no_of_edges;
};

__global__ void node_weight_sum(const Node* g_graph_nodes, const float* g_weights,
                                float* g_sum, int no_of_nodes) {
    unsigned int tid = blockIdx.x * blockDim.x + threadIdx.x;
    if (tid < no_of_nodes) {
        Node nd = g_graph_nodes[tid];
        float acc = 0.0f;
        for (int e = nd.starting; e < nd.starting + nd.no_of_edges; e++) acc += g_weights[e];
        const Node* p = g_graph_nodes + tid;
        g_sum[tid] = acc / (float)(p->no_of_edges > 0 ? p->no_of_edges : 1);
    }
}

void launch_node_weight_sum(const Node* nodes, const float* w, float* sum, int n) {
    node_weight_sum<<<(n + 255) / 256, 256>>>(nodes, w, sum, n);
}
