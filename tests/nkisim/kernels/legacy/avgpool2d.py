"""2-D average pooling (beta-1 API): channels on partitions, the window as a 5-D affine view
reduced over its two window axes."""

import neuronxcc.nki.language as nl
from neuronxcc import nki


@nki.jit
def avgpool2d_kernel(x, pool=2):
    C, H, W = x.shape
    Ho, Wo = H // pool, W // pool
    out = nl.ndarray((C, Ho, Wo), dtype=x.dtype, buffer=nl.shared_hbm)
    i_c, i_h, i_w = nl.mgrid[0:128, 0:H, 0:W]
    j_c, j_oh, j_kh, j_ow, j_kw = nl.mgrid[0:128, 0:Ho, 0:pool, 0:Wo, 0:pool]
    o_c, o_h, o_w = nl.mgrid[0:128, 0:Ho, 0:Wo]
    for c in nl.affine_range((C + 127) // 128):
        x_t = nl.load(x[c * 128 + i_c, i_h, i_w], mask=(c * 128 + i_c < C))
        windows = x_t[j_c, pool * j_oh + j_kh, pool * j_ow + j_kw]
        s = nl.sum(windows, axis=[2, 4], dtype=nl.float32)
        o_t = nl.multiply(s, 1.0 / (pool * pool), dtype=x.dtype)
        nl.store(out[c * 128 + o_c, o_h, o_w], value=o_t, mask=(c * 128 + o_c < C))
    return out
