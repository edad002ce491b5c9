#!/usr/bin/env python3
"""Oracle for tests/encoder.rs: encode and decode with Microsoft SEAL (seal-python).

Usage: ckks_encode.py DIR

DIR/spec.txt, one item per line:
    params <poly_modulus_degree> <bit,bit,...>
    <name> <kind> <scale_bits> <level> [<int_value>]
kind: real | complex | real_const | complex_const | int_const
scale_bits: the f64 scale as the decimal of its IEEE-754 bits (exact)
level: how many times to mod-switch the first-level plaintext down
Inputs: DIR/<name>.in, little-endian f64 (complex: re, im interleaved); constants hold one value.
Outputs: DIR/<name>.pt (Plaintext.save, compression none), DIR/<name>.dec (decode, f64),
DIR/<name>.decc (decode_complex, complex128), or DIR/<name>.err (the exception text of the
encoding); DIR/<name>.decerr holds the exception text when only decoding fails.
"""
import os
import struct
import sys

import numpy as np
import seal


def f64_from_bits(s):
    return struct.unpack("<d", struct.pack("<Q", int(s)))[0]


def main(d):
    lines = [l.split() for l in open(os.path.join(d, "spec.txt")) if l.strip()]
    ctx = enc = ev = None
    for item in lines:
        if item[0] == "params":
            n = int(item[1])
            bits = [int(b) for b in item[2].split(",")]
            p = seal.EncryptionParameters(seal.scheme_type.ckks)
            p.set_poly_modulus_degree(n)
            p.set_coeff_modulus(seal.CoeffModulus.Create(n, bits))
            ctx = seal.SEALContext(p)
            enc = seal.CKKSEncoder(ctx)
            ev = seal.Evaluator(ctx)
            continue
        name, kind, scale, level = item[0], item[1], f64_from_bits(item[2]), int(item[3])
        path = os.path.join(d, name)
        try:
            if kind == "int_const":
                pt = enc.encode(int(item[4]))
            else:
                raw = np.fromfile(path + ".in", dtype="<f8")
                if kind == "real":
                    pt = enc.encode(raw, scale)
                elif kind == "complex":
                    pt = enc.encode_complex(raw.view(np.complex128), scale)
                elif kind == "real_const":
                    pt = enc.encode(float(raw[0]), scale)
                elif kind == "complex_const":
                    pt = enc.encode_complex(complex(raw[0], raw[1]), scale)
                else:
                    raise SystemExit("unknown kind " + kind)
            for _ in range(level):
                ev.mod_switch_to_next_inplace(pt)
        except Exception as e:  # SEAL's std::invalid_argument etc.
            with open(path + ".err", "w") as f:
                f.write(str(e))
            continue
        pt.save(path + ".pt", seal.compr_mode_type.none)
        try:
            dec = enc.decode(pt)
            decc = enc.decode_complex(pt)
        except Exception as e:
            with open(path + ".decerr", "w") as f:
                f.write(str(e))
            continue
        np.asarray(dec, dtype="<f8").tofile(path + ".dec")
        np.asarray(decc, dtype="<c16").tofile(path + ".decc")


if __name__ == "__main__":
    main(sys.argv[1])
