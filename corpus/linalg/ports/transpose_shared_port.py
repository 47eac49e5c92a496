"""NKI port of transpose_shared: odata = idata.T in 128 x 128 blocks transposed on the tensor
engine (the CUDA padded shared-memory tile becomes an SBUF -> PSUM transpose)."""

import nki
import nki.isa as nisa
import nki.language as nl


@nki.jit
def transpose_shared(idata):
    height, width = idata.shape
    P = nl.tile_size.pmax
    odata = nl.ndarray((width, height), dtype=idata.dtype, buffer=nl.shared_hbm)
    for r in range(0, height, P):
        rows = min(P, height - r)
        for c in range(0, width, P):
            cols = min(P, width - c)
            blk = nl.ndarray((P, P), dtype=idata.dtype, buffer=nl.sbuf)
            nisa.dma_copy(dst=blk[0:rows, 0:cols], src=idata[r : r + rows, c : c + cols])
            blk_t = nl.ndarray((P, P), dtype=idata.dtype, buffer=nl.psum)
            nisa.nc_transpose(dst=blk_t[0:cols, 0:rows], data=blk[0:rows, 0:cols])
            res = nl.ndarray((P, P), dtype=idata.dtype, buffer=nl.sbuf)
            nisa.tensor_copy(dst=res[0:cols, 0:rows], src=blk_t[0:cols, 0:rows])
            nisa.dma_copy(dst=odata[c : c + cols, r : r + rows], src=res[0:cols, 0:rows])
    return odata
