#!/usr/bin/env python3
"""Derives the composite step of the ReLU circuits (`SignStage::W1`, `W2`, `W3` in
src/apps/nn/compile.rs): odd polynomials of degrees 7, 7 and 3 (depth 3 + 3 + 2, as Cheon-Kim-Kim's
g3 g3 f1 that they replace) whose composite s = (1 + w3(w2(w1(t))))/2 minimizes the ReLU's error
max |t| * |s(t) - H(t)| over t in [-R, R] (t = x / B, B the calibrated bound times the margin),
each stage kept within [-1, 1] there (a penalty), R = 1.15 so that an image whose values pass
the calibrated bound by up to 15 % (times the margin) still gets the step's sign.

The sign's own error near 0 matters little for ReLU, whose error is |x| times it: weighting by
|t| moves the approximation's effort from the transition to the bulk of the values. Nelder-Mead
from g3 g3 f1, restarted six times; then every stage is scaled into [-1, 1] on the image of
[-1, 1] (what bootstrapping between stages needs). Needs numpy and scipy; prints the
coefficients of t, t^3, t^5, t^7 per stage.
"""
import numpy as np
from scipy.optimize import minimize

R = 1.15
G3 = np.array([4589, -16577, 25614, -12860]) / 1024.0
F1 = np.array([3, -1]) / 2.0
T = np.linspace(-R, R, 8001)
H = (T > 0).astype(float)


def odd(c, t):
    """sum_k c[k] t^(2k+1)"""
    r, p, t2 = np.zeros_like(t), t.copy(), t * t
    for a in c:
        r += a * p
        p = p * t2
    return r


def stages(params, t):
    u = odd(params[:4], t)
    v = odd(params[4:8], u)
    return u, v, odd(params[8:10], v)


def objective(params):
    u, v, w = stages(params, T)
    err = np.abs(T) * np.abs((1 + w) / 2 - H)
    penalty = sum(100 * np.sum(np.maximum(np.abs(z) - 1, 0) ** 2) for z in (u, v, w))
    return err.max() + penalty


best = np.concatenate([G3, G3, F1])
for _ in range(6):
    best = minimize(objective, best, method="Nelder-Mead",
                    options={"maxiter": 20000, "maxfev": 20000, "xatol": 1e-9, "fatol": 1e-12}).x

# Scale every stage into [-1, 1] on the image of [-1, 1] (a few parts in 10^5 at most).
t = np.linspace(-1, 1, 2000001)
out = []
for k, c in enumerate((best[:4], best[4:8], best[8:10])):
    top = np.abs(odd(c, t)).max()
    c = c / max(top, 1.0) * (1 - 1e-12)
    out.append(c)
    t = odd(c, t)
err = np.abs(T) * np.abs((1 + odd(out[2], odd(out[1], odd(out[0], T)))) / 2 - H)
print(f"max |t| |s(t) - H(t)| on [-{R}, {R}]: {err.max():.6f}")
for k, c in enumerate(out):
    print(f"W{k + 1}: [" + ", ".join(f"{a:.17e}" for a in c) + "]")
