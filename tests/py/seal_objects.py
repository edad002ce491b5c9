"""Write SEAL objects (compr_mode none) for xehe's serialization tests.

usage: seal_objects.py OUTDIR N BITS...   (e.g. 4096 36 36 37)
Writes params.bin, sk.bin, pk.bin, rk.bin, gk.bin, gk_steps.bin, pt.bin, ct.bin (symmetric),
ct_pk.bin (public-key), ct_low.bin (last level), ct3.bin (size 3), and info.txt with
"name word word ..." lines (parms_ids, sizes, scales).
"""
import os
import sys

import seal

out, n, bits = sys.argv[1], int(sys.argv[2]), [int(b) for b in sys.argv[3:]]
p = seal.EncryptionParameters(seal.scheme_type.ckks)
p.set_poly_modulus_degree(n)
p.set_coeff_modulus(seal.CoeffModulus.Create(n, bits))
ctx = seal.SEALContext(p, True, seal.sec_level_type.none)
assert ctx.parameters_set(), ctx.parameter_error_message()


def w(name, data):
    with open(os.path.join(out, name), "wb") as f:
        f.write(data)


kg = seal.KeyGenerator(ctx)
sk = kg.secret_key()
pk = kg.create_public_key()
rk = kg.create_relin_keys()
gk = kg.create_galois_keys()
gk_steps = seal.GaloisKeys()
kg.create_galois_keys([1, -3], gk_steps)
enc = seal.Encryptor(ctx, pk, sk)
ev = seal.Evaluator(ctx)
ecd = seal.CKKSEncoder(ctx)
pt = seal.Plaintext()
ecd.encode(seal.VectorDouble([0.5, -1.25, 3.0]), 2.0 ** 25, pt)
ct = enc.encrypt_symmetric(pt)
ct_pk = enc.encrypt(pt)
ct_low = ct
while ct_low.parms_id() != ctx.last_parms_id():
    ct_low = ev.mod_switch_to_next(ct_low)
ct3 = ev.square(ct)

w("params.bin", p.to_bytes())
w("sk.bin", sk.to_string())
w("pk.bin", pk.to_string())
w("rk.bin", rk.to_string())
w("gk.bin", gk.to_string())
w("gk_steps.bin", gk_steps.to_string())
w("pt.bin", pt.to_bytes())
for name, c in [("ct", ct), ("ct_pk", ct_pk), ("ct_low", ct_low), ("ct3", ct3)]:
    w(name + ".bin", c.to_string())

lines = [
    "key_parms_id " + " ".join(map(str, ctx.key_context_data().parms_id())),
    "first_parms_id " + " ".join(map(str, ctx.first_parms_id())),
    "last_parms_id " + " ".join(map(str, ctx.last_parms_id())),
    "ct_size %d %d %d" % (ct.size(), ct3.size(), ct_low.coeff_modulus_size()),
    "ct_scale %r %r" % (ct.scale(), ct3.scale()),
    "rk_size %d" % rk.size(),
    "gk_size %d %d" % (gk.size(), gk_steps.size()),
]
w("info.txt", ("\n".join(lines) + "\n").encode())
