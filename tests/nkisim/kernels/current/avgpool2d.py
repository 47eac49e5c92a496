"""2-D average pooling (window = stride = pool), channels on partitions, window via an access pattern."""

import nki
import nki.isa as nisa
import nki.language as nl


@nki.jit
def avgpool2d_kernel(x, pool=2):
    C, H, W = x.shape
    Ho, Wo = H // pool, W // pool
    P = nl.tile_size.pmax
    out = nl.ndarray((C, Ho, Wo), dtype=x.dtype, buffer=nl.shared_hbm)
    for c in range(0, C, P):
        ch = min(P, C - c)
        x_t = nl.ndarray((ch, H, W), dtype=x.dtype, buffer=nl.sbuf)
        nisa.dma_copy(dst=x_t, src=x[c : c + ch, :, :])
        # [p, oh, ow, kh, kw] -> x_t[p, oh*pool + kh, ow*pool + kw]
        windows = x_t.ap(
            pattern=[[H * W, ch], [pool * W, Ho], [pool, Wo], [W, pool], [1, pool]], offset=0
        )
        s = nl.ndarray((ch, Ho, Wo), dtype=nl.float32, buffer=nl.sbuf)
        nisa.tensor_reduce(dst=s, op=nl.add, data=windows, axis=(3, 4))
        o_t = nl.ndarray((ch, Ho, Wo), dtype=x.dtype, buffer=nl.sbuf)
        nisa.tensor_scalar(dst=o_t, data=s, op0=nl.multiply, operand0=1.0 / (pool * pool))
        nisa.dma_copy(dst=out[c : c + ch, :, :], src=o_t)
    return out
