#!/usr/bin/env python3
"""Make the fuzz targets' seed corpus (fuzz/corpus/<target>/).

SEAL's own objects come from Microsoft SEAL through seal-python 4.4 (N = 64, four 30-bit
primes, no security level: the context of fuzz/targets.rs, a few KiB each). Then the Rust
generator (make_corpus.rs) re-saves them seeded and zlib / zstd-compressed (the seal-python
wheel has neither compression) and writes xehe's own formats (hybrid and bootstrapping keys),
expressions and the C ABI target's inputs.

Usage (from the repository root): python3 fuzz/make_corpus.py
"""
import pathlib
import subprocess
import sys

import seal

N = 64
BITS = [30, 30, 30, 30]  # = SEAL_BITS of fuzz/targets.rs

root = pathlib.Path(__file__).resolve().parent
corpus = root / "corpus"


def write(target, name, obj):
    d = corpus / target
    d.mkdir(parents=True, exist_ok=True)
    obj.save(str(d / name))  # SEAL's save, uncompressed


parms = seal.EncryptionParameters(seal.scheme_type.ckks)
parms.set_poly_modulus_degree(N)
parms.set_coeff_modulus(seal.CoeffModulus.Create(N, BITS))
ctx = seal.SEALContext(parms, True, seal.sec_level_type.none)
assert ctx.parameters_set(), ctx.parameter_error_message()

keygen = seal.KeyGenerator(ctx)
sk = keygen.secret_key()
pk = keygen.create_public_key()
rk = keygen.create_relin_keys()
gk = seal.GaloisKeys()
keygen.create_galois_keys([1], gk)
encoder = seal.CKKSEncoder(ctx)
pt = encoder.encode([0.5 * i for i in range(N // 2)], 2.0**20)
ct = seal.Encryptor(ctx, pk).encrypt(pt)
evaluator = seal.Evaluator(ctx)
ct3 = evaluator.square(ct)  # size 3
low = evaluator.mod_switch_to_next(ct)  # the next level
pt_low = evaluator.mod_switch_to_next(encoder.encode(1.25, 2.0**20))

write("encryption_parameters", "seal-params", parms)
write("seal_header", "seal-params", parms)
write("plaintext", "seal-plain", pt)
write("plaintext", "seal-plain-level1", pt_low)
write("ciphertext", "seal-ct", ct)
write("ciphertext", "seal-ct-size3", ct3)
write("ciphertext", "seal-ct-level1", low)
write("secret_key", "seal-sk", sk)
write("public_key", "seal-pk", pk)
write("relin_keys", "seal-rk", rk)
write("galois_keys", "seal-gk", gk)

# The rest is derived from these by xehe itself.
subprocess.run(
    ["cargo", "run", "--release", "--manifest-path", str(root / "Cargo.toml"),
     "--bin", "make_corpus", "--", str(corpus)],
    check=True,
)
print("corpus:", sum(1 for _ in corpus.rglob("*") if _.is_file()), "files", file=sys.stderr)
