#!/usr/bin/env python3
"""SEAL around xehe's bootstrapping: Microsoft SEAL (seal-python 4.4) makes the secret key and the
ciphertext, xehe bootstraps (`xehe keygen bootstrap`, `xehe eval --expr 'bootstrap(x)'`), SEAL
decrypts.

Usage:
  bootstrap_roundtrip.py make OUTDIR N BITS [top]
      BITS: comma-separated coeff_modulus bit sizes (the preset's, special prime last; `xehe
      bench bootstrap` and BootstrappingParameters::coeff_modulus_bits give them). Writes
      OUTDIR/parms.bin, secret_key.bin, x.bin (uniform random complex slots in [-1, 1]^2,
      encrypted with SEAL's public key at scale 2^40 and mod-switched to the last level, or
      left at the first data level with `top`: a word-size preset's lowest level is no level of
      SEAL's chain) and
      values.json (the slots). SEAL needs sec_level_type.none for these parameters (beyond its
      128-bit table); the context is created so.
  bootstrap_roundtrip.py check OUTDIR RESULT.bin
      SEAL loads RESULT.bin, decrypts it with the secret key, decodes, and prints JSON with the
      precision in bits (mean and minimum over the slots, real and imaginary parts apart), the
      result's chain index and scale.
"""
import json
import os
import sys

try:
    import numpy as np
    import seal
except ImportError as e:  # pragma: no cover
    print(f"bootstrap_roundtrip.py: {e}; pip install seal-python==4.4.0 numpy", file=sys.stderr)
    sys.exit(3)

COMPR = seal.compr_mode_type.none


def context(n, bits):
    parms = seal.EncryptionParameters(seal.scheme_type.ckks)
    parms.set_poly_modulus_degree(n)
    parms.set_coeff_modulus(seal.CoeffModulus.Create(n, bits))
    return parms, seal.SEALContext(parms, True, seal.sec_level_type.none)


def make(out, n, bits, top=False):
    os.makedirs(out, exist_ok=True)
    parms, ctx = context(n, bits)
    assert ctx.parameters_set(), ctx.parameter_error_message()
    keygen = seal.KeyGenerator(ctx)
    sk = keygen.secret_key()
    pk = keygen.create_public_key()
    encoder = seal.CKKSEncoder(ctx)
    slots = encoder.slot_count()
    rng = np.random.default_rng(20261123)
    z = rng.uniform(-1, 1, slots) + 1j * rng.uniform(-1, 1, slots)
    pt = encoder.encode_complex(z, 2.0 ** 40)
    ct = seal.Encryptor(ctx, pk).encrypt(pt)
    if not top:
        seal.Evaluator(ctx).mod_switch_to_inplace(ct, ctx.last_parms_id())
    parms.save(os.path.join(out, "parms.bin"), COMPR)
    sk.save(os.path.join(out, "secret_key.bin"))
    ct.save(os.path.join(out, "x.bin"), COMPR)
    with open(os.path.join(out, "values.json"), "w") as f:
        json.dump({"n": n, "bits": bits, "re": z.real.tolist(), "im": z.imag.tolist()}, f)


def bits(err):
    err = np.abs(err)
    return -np.log2(np.where(err == 0, 2.0 ** -53, err))


def check(out, result):
    v = json.load(open(os.path.join(out, "values.json")))
    parms = seal.EncryptionParameters(seal.scheme_type.ckks)
    parms.load(os.path.join(out, "parms.bin"))
    ctx = seal.SEALContext(parms, True, seal.sec_level_type.none)
    sk = seal.SecretKey()
    sk.load(ctx, os.path.join(out, "secret_key.bin"))
    ct = seal.Ciphertext()
    ct.load(ctx, result)
    pt = seal.Decryptor(ctx, sk).decrypt(ct)
    got = np.asarray(seal.CKKSEncoder(ctx).decode_complex(pt))
    want = np.asarray(v["re"]) + 1j * np.asarray(v["im"])
    re, im = bits(got.real - want.real), bits(got.imag - want.imag)
    print(json.dumps({
        "real_mean": float(re.mean()), "real_min": float(re.min()),
        "imag_mean": float(im.mean()), "imag_min": float(im.min()),
        "chain_index": ctx.get_context_data(ct.parms_id()).chain_index(),
        "scale": ct.scale(), "slots": int(len(got)),
    }))


if __name__ == "__main__":
    if len(sys.argv) in (5, 6) and sys.argv[1] == "make" and sys.argv[5:] in ([], ["top"]):
        make(sys.argv[2], int(sys.argv[3]), [int(b) for b in sys.argv[4].split(",")], len(sys.argv) == 6)
    elif len(sys.argv) == 4 and sys.argv[1] == "check":
        check(sys.argv[2], sys.argv[3])
    else:
        print(__doc__, file=sys.stderr)
        sys.exit(2)
