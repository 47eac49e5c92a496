"""The common forms of real GEMMs, stencils, reductions and gathers port through a recogniser on
both targets and match the SIMT interpreter on every test shape of their bindings (>= 3 shapes,
ragged sizes among them).  Each form comes in several spellings: names, index orders, guards,
block sizes, 1-D or 2-D thread indexing."""

from __future__ import annotations

import pytest

from tests.port.acceptance import CORPUS, check_kernel

TARGETS = ["nki", "legacy"]

FORMS = (
    # GEMMs accumulating into global memory with the scale inside every term
    "linalg/gemm_beta_inplace",  # c *= beta; c += alpha * a * b, #define strides, 2-D grid
    "linalg/syrk_flat",  # c += a[i, k] * a[j, k] * ALPHA, flat index split by / and %
    "linalg/mm_scaled_rows_x",  # tmp = 0; tmp += (alpha * A) * B, rows on threadIdx.x
    # two products summed per step: one PSUM accumulator each, added by the epilogue
    "linalg/syr2k_flat",  # c += alpha * a[i, k] * b[j, k] + alpha * b[i, k] * a[j, k], 2-D grid
    "linalg/syr2k_gridstride",  # acc += A * B; acc += B * A, flat grid-stride, scales at the end
    "linalg/cgemm_planes",  # re += xr * yr - xi * yi (a difference), two outputs, early return
    # one slice of a 3-D result per launch, the slice a scalar argument
    "linalg/doitgen_slice",  # sum[r * (nq * np) + q * np + p], zeroed then summed in place
    "linalg/head_proj_slice",  # y[head * rows * dv + i * dv + j], flat index split by / and %
    "linalg/step_proj_mid",  # y[(b * T + t) * N + n], fixed middle dim, W[n, k], bias epilogue
    # compare-and-move (arg-max / arg-min) trees over shared memory
    "misc/shared_best_pairs",  # v[t+s] > v[t]: value and position in one buffer, tie by shape
    "reduce/block_argmin_ties",  # k2 < k || (k2 == k && p2 < p): separate arrays, 256 threads
    # column sums through a shared-memory tree with an epilogue reading one value per column
    "reduce/bias_grad_tree",  # dbias[o] = dbias[o] + shared[0], alias x = dout + o
    "reduce/col_mean_bias_tree",  # out[col] = buf[0] * inv_rows + bias[col]
    "reduce/col_grad_accum_tree",  # grad[j] += red[0], while loop, 512 threads
    # column sums whose terms read a per-column value (deviations from a given mean)
    "reduce/col_std_eps",  # std[j] += (data[i, j] - mean[j])^2 in place, sqrt, epsilon clamp
    "reduce/col_var_gridstride",  # d = x[r, c] - mu[c]; acc += d * d, grid-stride columns
    "reduce/col_abs_dev",  # scale[j] * sum |a[i, j] - center[j]|, early return
    # per-row or per-column sums added across blocks with global atomics
    "reduce/row_sum_atomic_blocks",  # atomicAdd(&out[r], x[r * C + j] * w[r]), row on blockIdx.y
    "reduce/col_sum_atomic_grid",  # atomicAdd(dbias + oc, dout[bt * OC + oc]), 2-D grid
    "reduce/row_partial_tree_atomic",  # shared tree per 256-wide chunk, thread 0 atomicAdds
    # elementwise over a flat index whose row and column come from / and %
    "basic/bias_add_flat",  # out[i] += bias[i % OC], grid-stride over B * T * OC
    "norm/rownorm_apply_flat",  # mean[idx / C], weight[idx % C], guarded
    "basic/row_col_affine_macro",  # rowscale[t / COLS] and colshift[t % COLS], #define COLS
    # stencils over flat offsets with #define strides and shifts in both dims
    "stencil/conv3x3_macro_strides",  # A[(i - 1) * NJ + (j + 1)], 2-D grid, runtime rows
    "stencil/box3x3_flat_macro",  # flat index split by / and %, early return
    "stencil/advect_skew_macro",  # (i + 1) * NC + (j - 2), rows on threadIdx.x
    # short loops whose index is only used as a value (a weight or an offset per step)
    "reduce/ramp_weighted_taps",  # (float)(k + 1) in a device helper, the element read in the loop
    "reduce/step_decay_rows",  # acc += x * (0.5f * j), #define bound, early return
    "reduce/index_bias_cols",  # total + (a + tap), no cast, 2-D block
    # the same loops with the step count a runtime argument
    "reduce/step_weight_runtime_rows",  # j < steps, rows on blockIdx.y, early return
    "reduce/tap_bias_inclusive",  # t <= ntap - 1, 2-D block, one guard for both dims
    "reduce/countdown_ramp_rows",  # k = n - 1 down to 0, (float)(k + 1), rows on threadIdx.y
    # warp-shuffle softmax through a row alias
    "norm/softmax_warp_row_alias",  # x = inp + row * C, y = out + row * C, inline butterflies
    "norm/softmax_repoint_out",  # x re-pointed from inp to out, warp helpers, __shfl_sync
    "norm/causal_softmax_alias",  # (N, T, T) rows, reductions bounded by i <= t
)


@pytest.mark.parametrize("target", TARGETS)
@pytest.mark.parametrize("rel", FORMS)
def test_form_ports_through_a_recogniser(rel, target, tmp_path) -> None:
    out = check_kernel(CORPUS / f"{rel}.cu", target, tmp_path)
    assert out.status == "match", out
    assert len(out.shapes) >= 3
