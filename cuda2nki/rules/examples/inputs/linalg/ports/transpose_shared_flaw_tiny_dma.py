"""Flawed port of transpose_shared: the CUDA 32 x 32 shared-memory tile is kept as the NKI tile,
so every DMA moves 32 partitions x 128 bytes and each block is transposed on the vector engine
(32 x 32 limit). Correct output; about 16x more DMAs than 128 x 128 blocks, each far below
the 512 B per-partition efficiency floor.

EXPECT: pass; C2N5007 C2N5008 (128 B per partition per DMA); C2N5011 (32-wide loops: the warp-sized CUDA tile)
"""

import nki
import nki.isa as nisa
import nki.language as nl

TILE = 32


@nki.jit
def transpose_shared(idata):
    height, width = idata.shape
    odata = nl.ndarray((width, height), dtype=idata.dtype, buffer=nl.shared_hbm)
    for r in range(0, height, TILE):
        rows = min(TILE, height - r)
        for c in range(0, width, TILE):
            cols = min(TILE, width - c)
            blk = nl.ndarray((TILE, TILE), dtype=idata.dtype, buffer=nl.sbuf)
            nisa.dma_copy(dst=blk[0:rows, 0:cols], src=idata[r : r + rows, c : c + cols])
            blk_t = nl.ndarray((TILE, TILE), dtype=idata.dtype, buffer=nl.sbuf)
            nisa.nc_transpose(
                dst=blk_t[0:cols, 0:rows], data=blk[0:rows, 0:cols], engine=nisa.engine.vector
            )
            nisa.dma_copy(dst=odata[c : c + cols, r : r + rows], src=blk_t[0:cols, 0:rows])
    return odata
