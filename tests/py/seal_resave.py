"""Load xehe-written SEAL objects with SEAL and save them again (compr_mode none).

usage: seal_resave.py DIR N BITS... -- KIND:FILE...
KIND is ct, pk or rk; each FILE is loaded (validated by SEAL) and written to FILE.seal.
Used to check that SEAL expands seeds in xehe's seeded objects to the same data as xehe.
"""
import os
import sys

import seal

d = sys.argv[1]
sep = sys.argv.index("--")
n, bits = int(sys.argv[2]), [int(b) for b in sys.argv[3:sep]]
p = seal.EncryptionParameters(seal.scheme_type.ckks)
p.set_poly_modulus_degree(n)
p.set_coeff_modulus(seal.CoeffModulus.Create(n, bits))
ctx = seal.SEALContext(p, True, seal.sec_level_type.none)
for arg in sys.argv[sep + 1:]:
    kind, name = arg.split(":")
    obj = {"ct": seal.Ciphertext, "pk": seal.PublicKey, "rk": seal.RelinKeys}[kind]()
    path = os.path.join(d, name)
    obj.load(ctx, path)
    with open(path + ".seal", "wb") as f:
        f.write(obj.to_string())
