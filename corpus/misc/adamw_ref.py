"""Reference for adamw_update (float64 on the fp32 scalars, rounded to float32)."""

import numpy as np


def reference(
    inputs: dict[str, np.ndarray], scalars: dict[str, int | float]
) -> dict[str, np.ndarray]:
    s = {k: float(np.float32(v)) for k, v in scalars.items()}
    g = inputs["grads"].astype(np.float64)
    p = inputs["params"].astype(np.float64)
    m = s["beta1"] * inputs["m"].astype(np.float64) + (1.0 - s["beta1"]) * g
    v = s["beta2"] * inputs["v"].astype(np.float64) + (1.0 - s["beta2"]) * g * g
    m_hat = m / s["beta1_corr"]
    v_hat = v / s["beta2_corr"]
    p = p - s["lr"] * (m_hat / (np.sqrt(v_hat) + s["eps"]) + s["weight_decay"] * p)
    return {"params": p.astype(np.float32), "m": m.astype(np.float32), "v": v.astype(np.float32)}
