"""Reference for csr_node_sum (float64 mean of each node's edge weights; 0 edges -> 0)."""

import numpy as np


def reference(
    inputs: dict[str, np.ndarray], scalars: dict[str, int | float]
) -> dict[str, np.ndarray]:
    nodes = inputs["g_graph_nodes"].astype(np.int64)
    w = inputs["g_weights"].astype(np.float64)
    out = np.zeros(len(nodes))
    for i, (start, count) in enumerate(nodes):
        out[i] = w[start : start + count].sum() / max(count, 1)
    return {"g_sum": out.astype(np.float32)}
