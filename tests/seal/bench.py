#!/usr/bin/env python3
"""Time Microsoft SEAL (seal-python) on the CKKS operations xehe benchmarks, and print JSON.

Usage: bench.py N BITS(comma-separated) REPS
Median milliseconds per call (keys built outside the timed loop): multiply_relinearize,
rotate_1, rescale_to_next, multiply, add, multiply_plain, ntt_inverse_limbs (transform_from_ntt
of a size-2 ciphertext, i.e. 2*k inverse NTTs).
"""
import json, statistics, sys, time
import seal

n, bits, reps = int(sys.argv[1]), [int(b) for b in sys.argv[2].split(",")], int(sys.argv[3])
p = seal.EncryptionParameters(seal.scheme_type.ckks)
p.set_poly_modulus_degree(n)
p.set_coeff_modulus(seal.CoeffModulus.Create(n, bits))
ctx = seal.SEALContext(p)
kg = seal.KeyGenerator(ctx)
pk = kg.create_public_key()
rk = kg.create_relin_keys()
gk = seal.GaloisKeys()
kg.create_galois_keys([1], gk)
enc, ev, ce = seal.Encryptor(ctx, pk), seal.Evaluator(ctx), seal.CKKSEncoder(ctx)
scale = 2.0 ** 40
pt = ce.encode([0.5] * (n // 2), scale)
a, b = enc.encrypt(pt), enc.encrypt(pt)
prod = ev.relinearize(ev.multiply(a, b), rk)


def med(f):
    f()
    ts = []
    for _ in range(reps):
        s = time.perf_counter()
        f()
        ts.append((time.perf_counter() - s) * 1e3)
    return statistics.median(ts)


out = {
    "seal_version": getattr(seal, "__version__", "?"),
    "multiply_relinearize": med(lambda: ev.relinearize(ev.multiply(a, b), rk)),
    "rotate_1": med(lambda: ev.rotate_vector(a, 1, gk)),
    "rescale_to_next": med(lambda: ev.rescale_to_next(prod)),
    "multiply": med(lambda: ev.multiply(a, b)),
    "add": med(lambda: ev.add(a, b)),
    "multiply_plain": med(lambda: ev.multiply_plain(a, pt)),
    "ntt_inverse_limbs": med(lambda: ev.transform_from_ntt(a)),
}
print(json.dumps(out))
