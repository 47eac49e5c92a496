"""NKI port of transpose_shared: odata = idata.T.

A strip of up to 128 rows x 2048 columns comes in with one DMA; its 128 x 128 blocks are
transposed on the tensor engine (SBUF -> PSUM) and gathered into one output tile whose partition
p holds output rows p, p + 128, p + 256, ... of the strip, so the whole strip goes out with one
strided DMA (the CUDA padded shared-memory tile becomes the SBUF strip). A narrow input
(width < 128) is done the other way round: whole output rows (up to 2048 long) are assembled in
SBUF from the transposed row tiles and stored with one DMA."""

import nki
import nki.isa as nisa
import nki.language as nl


@nki.jit
def transpose_shared(idata):
    height, width = idata.shape
    P = nl.tile_size.pmax
    CW = 16 * P
    odata = nl.ndarray((width, height), dtype=idata.dtype, buffer=nl.shared_hbm)
    if width < P:
        for h0 in range(0, height, CW):
            hc = min(CW, height - h0)
            res = nl.ndarray((width, CW), dtype=idata.dtype, buffer=nl.sbuf)
            for r in range(h0, h0 + hc, P):
                rows = min(P, h0 + hc - r)
                blk = nl.ndarray((P, width), dtype=idata.dtype, buffer=nl.sbuf)
                nisa.dma_copy(dst=blk[0:rows, :], src=idata[r : r + rows, :])
                blk_t = nl.ndarray((width, P), dtype=idata.dtype, buffer=nl.psum)
                nisa.nc_transpose(dst=blk_t[:, 0:rows], data=blk[0:rows, :])
                nisa.tensor_copy(dst=res[:, r - h0 : r - h0 + rows], src=blk_t[:, 0:rows])
            nisa.dma_copy(dst=odata[:, h0 : h0 + hc], src=res[:, 0:hc])
        return odata
    for r in range(0, height, P):
        rows = min(P, height - r)
        for c in range(0, width, CW):
            cw = min(CW, width - c)
            full, tail = cw // P, cw % P
            strip = nl.ndarray((P, CW), dtype=idata.dtype, buffer=nl.sbuf)
            nisa.dma_copy(dst=strip[0:rows, 0:cw], src=idata[r : r + rows, c : c + cw])
            if full:
                res = nl.ndarray((P, full, P), dtype=idata.dtype, buffer=nl.sbuf)
                for j in range(full):
                    blk_t = nl.ndarray((P, P), dtype=idata.dtype, buffer=nl.psum)
                    nisa.nc_transpose(dst=blk_t[:, 0:rows], data=strip[0:rows, j * P : (j + 1) * P])
                    nisa.tensor_copy(dst=res[:, j, 0:rows], src=blk_t[:, 0:rows])
                # odata[c + j*128 + p, r + i] <- res[p, j, i]
                dst = odata.ap(
                    pattern=[[height, P], [P * height, full], [1, rows]], offset=c * height + r
                )
                nisa.dma_copy(dst=dst, src=res[:, :, 0:rows])
            if tail:
                c0 = full * P
                blk_t = nl.ndarray((P, P), dtype=idata.dtype, buffer=nl.psum)
                nisa.nc_transpose(dst=blk_t[0:tail, 0:rows], data=strip[0:rows, c0 : c0 + tail])
                res_t = nl.ndarray((P, P), dtype=idata.dtype, buffer=nl.sbuf)
                nisa.tensor_copy(dst=res_t[0:tail, 0:rows], src=blk_t[0:tail, 0:rows])
                nisa.dma_copy(
                    dst=odata[c + c0 : c + c0 + tail, r : r + rows], src=res_t[0:tail, 0:rows]
                )
    return odata
