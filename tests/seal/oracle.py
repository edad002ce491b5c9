#!/usr/bin/env python3
"""SEAL oracle for xehe: golden corpus generator and checker.

Uses Microsoft SEAL through the `seal` module of seal-python (`pip install seal-python==4.4.0
numpy`). xehe's Rust integration tests run it and compare xehe's results with SEAL's byte for
byte (SEAL serialization, compression `none`).

Usage:
  oracle.py gen OUTDIR [--quick] [--sets NAME,...]
      Writes one folder per parameter set, OUTDIR/<set>/, with SEAL-serialized inputs, keys and
      the result of every deterministic CKKS Evaluator operation, plus manifest.json describing
      them (see MANIFEST FORMAT below). --quick keeps only the N=4096 and N=8192 sets.
  oracle.py decrypt SETDIR CIPHERTEXT.bin [--slots K]
      Loads the ciphertext with SETDIR/parms.bin, decrypts it with SETDIR/secret_key.bin and
      prints JSON: {"slots": [[re, im], ...first K (default 8)], "scale", "parms_id",
      "chain_index", "size"}. A ciphertext in coefficient form is moved to NTT form first.
  oracle.py check-load SETDIR KIND FILE
      Loads FILE as KIND (parms, ciphertext, plaintext, secret_key, public_key, relin_keys,
      galois_keys) under SETDIR/parms.bin with SEAL's own `load`, which runs SEAL's validity
      checks. Prints a JSON summary and exits 0, or prints the error and exits 1.

MANIFEST FORMAT (OUTDIR/<set>/manifest.json)
  set, seal_wheel_version, seal_header_version ([major, minor] read from the files' headers),
  poly_modulus_degree, coeff_modulus_bits, coeff_modulus (key level primes, in order),
  parms_ids {key, first, last} (4 u64 each), chain [{chain_index, parms_id, coeff_modulus}],
  scale (the scale of a, b, p), slot_count, galois_steps (SEAL steps given to
  create_galois_keys; 0 means conjugation), galois_elts (the elements stored in galois_keys.bin),
  files {name: {kind, parms_id, chain_index, scale?, size?, is_ntt_form?, sha256, bytes}},
  vectors {name: {file, dtype, count, description}}: raw value files (*.f64le, see below),
  encodes [{output, method, input, scale, description}]: input is a *.f64le file name or the
  scalar itself; ops [{op, seal, inputs, args, output}]: args may hold relin_keys/galois_keys
  (file names), steps, galois_elt, parms_id, levels_down, and naf (for a rotation whose step
  has no key: SEAL's NAF steps, in the order SEAL applies them); the transform_to_ntt entry's
  output is a.bin itself (the round trip through transform_from_ntt is exact);
  decrypts [{input, output, decoded, first_slots, expected_first_slots, max_abs_error}]:
  output is the decrypted Plaintext file (null in core sets), decoded its decoded values,
  skipped: op/encode names left out of this set (see CORE_SKIP).
  All SEAL objects are saved with compr_mode none.

  *.f64le files: `count` complex numbers (slot_count except for short inputs), each as
  (re, im), IEEE double, little endian; real inputs are stored with im = 0.
  Inputs a/b/p are random (numpy default_rng seeded per set; the values are stored, so no
  generator needs reproducing). Keys and encryptions use SEAL's own randomness, so every run
  writes a different corpus; every result in one corpus is computed from that corpus's inputs.
"""
import hashlib
import json
import os
import sys
import time

try:
    import numpy as np
    import seal
except ImportError as e:  # pragma: no cover - reported to the caller
    print(f"oracle.py: cannot import python SEAL oracle ({e}); "
          "install with: pip install seal-python==4.4.0 numpy", file=sys.stderr)
    sys.exit(3)

COMPR = seal.compr_mode_type.none

# name, N, coeff_modulus bits, log2(scale), galois steps (0 = conjugation), in --quick
PARAM_SETS = [
    # Scale 2^25: a product (2^50) fits the 60-bit first level; at 2^20 rotations decrypt
    # with errors near 0.3.
    dict(name="n4096", n=4096, bits=[40, 20, 40], log_scale=25,
         steps=[1, -1, 2, 4, 0], quick=True),
    dict(name="n8192", n=8192, bits=[60, 40, 40, 60], log_scale=40,
         steps=[1, -1, 2, 4, 0], quick=True),
    # Word-size primes (below 2^30, the 32-bit path's bound), scale 2^25 (below the last
    # level's one 30-bit prime, as mod_switch_to needs); two data primes, so that rescale_to
    # the last level is one rescale of a product (2^50 → 2^20).
    dict(name="n8192w30", n=8192, bits=[30] * 3, log_scale=25,
         steps=[1, -1, 2, 4, 0], quick=True),
    # 60,40x7,60 (400 bits) as in design.md: 60,40x8,60 is 440 bits, above the 438 that
    # SEAL's default security level (tc128) allows for N=16384.
    # The large sets are "core" sets: see CORE_SKIP. Each of their Galois keys is 20+ MB, so
    # N=16384 has only step 1 and N=32768 step 1 and conjugation; rotate -1 / 3 (NAF) and
    # apply_galois are covered by the small sets.
    dict(name="n16384", n=16384, bits=[60] + [40] * 7 + [60], log_scale=40,
         steps=[1], quick=False, core=True),
    dict(name="n32768", n=32768, bits=[60] + [40] * 5 + [60], log_scale=40,
         steps=[1, 0], quick=False, core=True),
]

# Left out of core sets to keep the corpus small (about 210 MB in all): element-wise
# operations whose code does not depend on N, repeats of a code path already covered at that N,
# and the decrypted plaintexts (their decoded values are kept).
CORE_SKIP = {
    "negate", "add", "sub", "add_many", "add_plain", "sub_plain", "multiply_plain",
    "multiply_plain_int", "p_int", "square", "rescale_to_next_a", "multiply_relin_a",
    "mod_switch_to_plain", "encode_complex_full", "encode_real_short", "encode_scalar_complex",
    "encode_int_neg", "decrypt_plaintexts",
}


def fail(msg, code=1):
    print(f"oracle.py: {msg}", file=sys.stderr)
    sys.exit(code)


def make_parms(n, bits):
    parms = seal.EncryptionParameters(seal.scheme_type.ckks)
    parms.set_poly_modulus_degree(n)
    parms.set_coeff_modulus(seal.CoeffModulus.Create(n, bits))
    return parms


def make_context(parms):
    ctx = seal.SEALContext(parms, True, seal.sec_level_type.tc128)
    if not ctx.parameters_set():
        fail(f"SEAL rejects the parameters: {ctx.parameter_error_message()}")
    return ctx


def chain_of(ctx):
    out = []
    cd = ctx.key_context_data()
    while cd is not None:
        out.append(dict(chain_index=cd.chain_index(), parms_id=list(cd.parms_id()),
                        coeff_modulus=[m.value() for m in cd.parms().coeff_modulus()]))
        cd = cd.next_context_data()
    return out


def write_f64le(path, values):
    np.asarray(values, dtype=np.complex128).astype("<c16").tofile(path)


def first_slots(values, k=8):
    return [[float(z.real), float(z.imag)] for z in np.asarray(values)[:k]]


class Corpus:
    """Writes one parameter set's folder and collects its manifest."""

    def __init__(self, outdir, spec):
        self.dir = os.path.join(outdir, spec["name"])
        os.makedirs(self.dir, exist_ok=True)
        self.spec = spec
        self.parms = make_parms(spec["n"], spec["bits"])
        self.ctx = make_context(self.parms)
        self.chain = chain_of(self.ctx)
        self.index = {tuple(c["parms_id"]): c["chain_index"] for c in self.chain}
        self.files = {}
        self.vectors = {}
        self.encodes = []
        self.ops = []
        self.decrypts = []
        self.header_version = None

    # -- files -------------------------------------------------------------------------------

    def _record(self, name, kind, meta):
        path = os.path.join(self.dir, name)
        data = open(path, "rb").read()
        if len(data) < 16 or data[0:2] != b"\x5e\xa1" or data[5] != 0:
            fail(f"{path}: not an uncompressed SEAL file")
        version = [data[3], data[4]]
        if self.header_version is None:
            self.header_version = version
        elif self.header_version != version:
            fail(f"{path}: header version {version} differs from {self.header_version}")
        meta.update(kind=kind, sha256=hashlib.sha256(data).hexdigest(), bytes=len(data))
        self.files[name] = meta
        return name

    def save_ct(self, ct, name):
        ct.save(os.path.join(self.dir, name), COMPR)
        pid = tuple(ct.parms_id())
        return self._record(name, "ciphertext", dict(
            parms_id=list(pid), chain_index=self.index[pid], scale=ct.scale(), size=ct.size(),
            is_ntt_form=ct.is_ntt_form()))

    def save_pt(self, pt, name):
        pt.save(os.path.join(self.dir, name), COMPR)
        pid = tuple(pt.parms_id())
        return self._record(name, "plaintext", dict(
            parms_id=list(pid), chain_index=self.index[pid], scale=pt.scale(),
            is_ntt_form=pt.is_ntt_form(), coeff_count=pt.coeff_count()))

    def save_key(self, key, kind, name):
        # Keys' save() in this wheel takes no compression argument; its default is none
        # (checked in _record from the header).
        key.save(os.path.join(self.dir, name))
        pid = tuple(key.parms_id())
        meta = dict(parms_id=list(pid), chain_index=self.index[pid])
        if kind in ("relin_keys", "galois_keys"):
            meta["size"] = key.size()
        return self._record(name, kind, meta)

    def save_vector(self, name, values, description):
        fname = f"{name}.f64le"
        write_f64le(os.path.join(self.dir, fname), values)
        self.vectors[name] = dict(file=fname, dtype="complex f64 little endian (re, im)",
                                  count=len(values), description=description)
        return fname

    # -- the corpus --------------------------------------------------------------------------

    def generate(self):
        spec, ctx = self.spec, self.ctx
        core = spec.get("core", False)
        skip = CORE_SKIP if core else set()
        n = spec["n"]
        scale = 2.0 ** spec["log_scale"]
        slots = n // 2
        first_bits = sum(spec["bits"][:-1])

        self.parms.save(os.path.join(self.dir, "parms.bin"), COMPR)
        self._record("parms.bin", "parms", dict(parms_id=self.chain[0]["parms_id"],
                                                chain_index=self.chain[0]["chain_index"]))

        keygen = seal.KeyGenerator(ctx)
        sk = keygen.secret_key()
        pk = keygen.create_public_key()
        rk = keygen.create_relin_keys()
        gk = seal.GaloisKeys()
        keygen.create_galois_keys(spec["steps"], gk)
        self.save_key(sk, "secret_key", "secret_key.bin")
        self.save_key(pk, "public_key", "public_key.bin")
        self.save_key(rk, "relin_keys", "relin_keys.bin")
        self.save_key(gk, "galois_keys", "galois_keys.bin")
        galois_elts = sorted(e for e in range(1, 2 * n, 2) if gk.has_key(e))

        encoder = seal.CKKSEncoder(ctx)
        encryptor = seal.Encryptor(ctx, pk)
        decryptor = seal.Decryptor(ctx, sk)
        ev = seal.Evaluator(ctx)

        # ---- encoder known answers (fixed, documented inputs) -------------------------------
        i = np.arange(slots, dtype=np.float64)
        real_full = ((i * 37) % 101 - 50) / 64.0
        cplx_full = real_full + 1j * (((i * 53) % 97 - 48) / 32.0)
        short = np.array([0.5, -1.25, 3.0, 0.0, 2.5])
        big_mult = 2.0 ** min(first_bits - spec["log_scale"] - 20, 300)
        real_big = ((i * 37) % 101 - 50) * big_mult
        encode_inputs = [
            ("encode_real_full", "encode", real_full, scale,
             "x[i] = ((i*37) mod 101 - 50) / 64 for i in 0..slot_count"),
            ("encode_complex_full", "encode_complex", cplx_full, scale,
             "z[i] = ((i*37) mod 101 - 50)/64 + 1j*((i*53) mod 97 - 48)/32"),
            ("encode_real_short", "encode", short, scale,
             "[0.5, -1.25, 3.0, 0.0, 2.5] (5 values; SEAL fills the other slots with 0)"),
            ("encode_real_big", "encode", real_big, scale,
             f"x[i] = ((i*37) mod 101 - 50) * 2^{int(np.log2(big_mult))}: coefficients above "
             "64 bits (SEAL's wide-integer encode paths)"),
        ]
        for name, method, values, sc, desc in encode_inputs:
            if name in skip:
                continue
            vfile = self.save_vector(f"{name}_input", values, desc)
            if method == "encode":
                pt = encoder.encode(np.asarray(values, dtype=np.float64), sc)
            else:
                pt = encoder.encode_complex(np.asarray(values, dtype=np.complex128), sc)
            out = self.save_pt(pt, f"{name}.bin")
            self.encodes.append(dict(output=out, method=f"CKKSEncoder.{method}", input=vfile,
                                     input_count=len(values), scale=sc, description=desc))
        for name, value, sc, method, desc in [
            ("encode_scalar_real", 3.25, scale, "encode(double)",
             "the double 3.25 (SEAL's single-double path: no FFT)"),
            ("encode_scalar_complex", complex(1.5, -0.75), scale, "encode(complex)",
             "the complex 1.5-0.75j, repeated in every slot"),
            ("encode_int", 7, 1.0, "encode(int64)", "the integer 7, exact, scale 1"),
            ("encode_int_neg", -5, 1.0, "encode(int64)", "the integer -5, exact, scale 1"),
        ]:
            if name in skip:
                continue
            if isinstance(value, complex):
                pt = encoder.encode_complex(value, sc)
                shown = [value.real, value.imag]
            elif isinstance(value, int):
                pt = encoder.encode(value)
                shown = value
            else:
                pt = encoder.encode(value, sc)
                shown = value
            out = self.save_pt(pt, f"{name}.bin")
            self.encodes.append(dict(output=out, method=f"CKKSEncoder.{method}", input=shown,
                                     scale=sc, description=desc))

        # ---- inputs --------------------------------------------------------------------------
        rng = np.random.default_rng(20240000 + n)
        va = rng.uniform(-1, 1, slots) + 1j * rng.uniform(-1, 1, slots)
        vb = rng.uniform(-1, 1, slots) + 1j * rng.uniform(-1, 1, slots)
        vp = rng.uniform(-1, 1, slots) + 1j * rng.uniform(-1, 1, slots)
        self.save_vector("a_input", va, "random, re and im uniform in [-1, 1)")
        self.save_vector("b_input", vb, "random, re and im uniform in [-1, 1)")
        self.save_vector("p_input", vp, "random, re and im uniform in [-1, 1)")
        pa = encoder.encode_complex(va, scale)
        pb = encoder.encode_complex(vb, scale)
        p = encoder.encode_complex(vp, scale)
        self.save_pt(p, "p.bin")
        self.encodes.append(dict(output="p.bin", method="CKKSEncoder.encode_complex",
                                 input="p_input.f64le", input_count=slots, scale=scale,
                                 description="the plaintext operand of the *_plain ops"))
        self.save_vector("p_decoded", encoder.decode_complex(p),
                         "CKKSEncoder.decode_complex(p.bin)")
        self.encodes.append(dict(output="p_decoded.f64le", method="CKKSEncoder.decode_complex",
                                 input="p.bin", description="decoder known answer"))
        p_int = encoder.encode(3)
        if "p_int" not in skip:
            self.save_pt(p_int, "p_int.bin")
            self.encodes.append(dict(output="p_int.bin", method="CKKSEncoder.encode(int64)",
                                     input=3, scale=1.0, description="scale-1 plaintext "
                                                                     "(integer 3) for multiply_plain"))
        a = encryptor.encrypt(pa)
        b = encryptor.encrypt(pb)
        self.save_ct(a, "a.bin")
        self.save_ct(b, "b.bin")

        first_pid = list(ctx.first_parms_id())
        last_pid = list(ctx.last_parms_id())
        next_pid = self.chain[2]["parms_id"] if len(self.chain) > 2 else None
        two_down = self.chain[3]["parms_id"] if len(self.chain) > 3 else last_pid
        galois_step1 = self._elt_from_step(1)
        conj = 2 * n - 1
        # apply_galois with an explicit element: step 2's element where there is a key for it,
        # else step 1's.
        explicit_elt = self._elt_from_step(2) if 2 in spec["steps"] else galois_step1

        expected = {}
        R, G = "relin_keys.bin", "galois_keys.bin"

        def op(name, seal_name, fn, inputs, args=None, plain_out=False, expect=None):
            if name in skip:
                return None
            t = fn()
            out = f"{name}.bin"
            (self.save_pt if plain_out else self.save_ct)(t, out)
            self.ops.append(dict(op=name, seal=f"Evaluator.{seal_name}", inputs=inputs,
                                 args=args or {}, output=out))
            if expect is not None:
                expected[out] = (t, expect)
            return t

        op("negate", "negate", lambda: ev.negate(a), ["a.bin"], expect=-va)
        op("add", "add", lambda: ev.add(a, b), ["a.bin", "b.bin"], expect=va + vb)
        op("sub", "sub", lambda: ev.sub(a, b), ["a.bin", "b.bin"], expect=va - vb)
        op("add_many", "add_many", lambda: ev.add_many([a, b, a]),
           ["a.bin", "b.bin", "a.bin"], expect=2 * va + vb)
        op("add_plain", "add_plain", lambda: ev.add_plain(a, p), ["a.bin", "p.bin"],
           expect=va + vp)
        op("sub_plain", "sub_plain", lambda: ev.sub_plain(a, p), ["a.bin", "p.bin"],
           expect=va - vp)
        op("multiply_plain", "multiply_plain", lambda: ev.multiply_plain(a, p),
           ["a.bin", "p.bin"], expect=va * vp)
        op("multiply_plain_int", "multiply_plain", lambda: ev.multiply_plain(a, p_int),
           ["a.bin", "p_int.bin"], expect=3 * va)
        prod = op("multiply", "multiply", lambda: ev.multiply(a, b), ["a.bin", "b.bin"],
                  expect=va * vb)
        op("square", "square", lambda: ev.square(a), ["a.bin"], expect=va * va)
        relin = op("relinearize", "relinearize", lambda: ev.relinearize(prod, rk),
                   ["multiply.bin"], {"relin_keys": R}, expect=va * vb)
        mrr = op("multiply_relin_rescale", "multiply+relinearize+rescale_to_next",
                 lambda: ev.rescale_to_next(ev.relinearize(ev.multiply(a, b), rk)),
                 ["a.bin", "b.bin"], {"relin_keys": R}, expect=va * vb)
        op("rescale_to_next", "rescale_to_next", lambda: ev.rescale_to_next(relin),
           ["relinearize.bin"], expect=va * vb)
        op("rescale_to_next_a", "rescale_to_next", lambda: ev.rescale_to_next(a), ["a.bin"])
        levels = self.index[tuple(first_pid)] - self.index[tuple(two_down)]
        if levels >= 2 and "multiply_relin_a" not in skip:
            # Scale S^3, so that dropping two primes leaves about S.
            cube = op("multiply_relin_a", "multiply+relinearize",
                      lambda: ev.relinearize(ev.multiply(relin, a), rk),
                      ["relinearize.bin", "a.bin"], {"relin_keys": R}, expect=va * vb * va)
            op("rescale_to", "rescale_to", lambda: ev.rescale_to(cube, two_down),
               ["multiply_relin_a.bin"], {"parms_id": two_down, "levels_down": levels},
               expect=va * vb * va)
        else:
            # Scale S^2 / (two primes) is about 1 when levels == 2: bit-exact comparable, but
            # too imprecise to decrypt, so no expected values then.
            op("rescale_to", "rescale_to", lambda: ev.rescale_to(relin, two_down),
               ["relinearize.bin"], {"parms_id": two_down, "levels_down": levels},
               expect=va * vb if levels < 2 else None)
        op("mod_switch_to_next", "mod_switch_to_next", lambda: ev.mod_switch_to_next(a),
           ["a.bin"], expect=va)
        op("mod_switch_to", "mod_switch_to", lambda: ev.mod_switch_to(a, last_pid), ["a.bin"],
           {"parms_id": last_pid}, expect=va)
        op("mod_switch_to_next_plain", "mod_switch_to_next(Plaintext)",
           lambda: ev.mod_switch_to_next(p), ["p.bin"], plain_out=True)
        op("mod_switch_to_plain", "mod_switch_to(Plaintext)",
           lambda: ev.mod_switch_to(p, last_pid), ["p.bin"], {"parms_id": last_pid},
           plain_out=True)
        # add_plain below the first level, at the exact (non power of two) scale of mrr.
        p_low = ev.mod_switch_to_next(encoder.encode_complex(vp, mrr.scale()))
        self.save_pt(p_low, "p_low.bin")
        self.encodes.append(dict(output="p_low.bin", method="CKKSEncoder.encode_complex "
                                 "then Evaluator.mod_switch_to_next", input="p_input.f64le",
                                 input_count=slots, scale=mrr.scale(),
                                 description="p at the level and scale of "
                                             "multiply_relin_rescale.bin"))
        op("add_plain_low", "add_plain", lambda: ev.add_plain(mrr, p_low),
           ["multiply_relin_rescale.bin", "p_low.bin"], expect=va * vb + vp)

        for steps in (1, -1, 3):
            elt = self._elt_from_step(steps)
            if not gk.has_key(elt) and not self._naf_available(steps, gk):
                continue
            args = {"steps": steps, "galois_keys": G}
            if not gk.has_key(elt):
                args["naf"] = self._naf(steps)
            name = f"rotate_{steps}" if steps > 0 else f"rotate_m{-steps}"
            op(name, "rotate_vector", lambda s=steps: ev.rotate_vector(a, s, gk), ["a.bin"],
               args, expect=np.roll(va, -steps))
        if not gk.has_key(conj):
            skip = skip | {"complex_conjugate"}
        op("complex_conjugate", "complex_conjugate", lambda: ev.complex_conjugate(a, gk),
           ["a.bin"], {"galois_keys": G, "galois_elt": conj}, expect=np.conj(va))
        if explicit_elt == galois_step1 and core:
            skip = skip | {"apply_galois"}  # would repeat rotate_1
        op("apply_galois", "apply_galois", lambda: ev.apply_galois(a, explicit_elt, gk),
           ["a.bin"], {"galois_elt": explicit_elt, "galois_keys": G},
           expect=np.roll(va, -(2 if explicit_elt != galois_step1 else 1)))
        ntt_back = op("transform_from_ntt", "transform_from_ntt",
                      lambda: ev.transform_from_ntt(a), ["a.bin"])
        again = ev.transform_to_ntt(ntt_back)
        if again.to_string() != a.to_string():
            fail(f"{spec['name']}: transform_to_ntt(transform_from_ntt(a)) != a")
        self.ops.append(dict(op="transform_to_ntt", seal="Evaluator.transform_to_ntt",
                             inputs=["transform_from_ntt.bin"], args={}, output="a.bin"))

        # ---- decryptions (deterministic given the secret key) ------------------------------
        expected["a.bin"] = (a, va)
        expected["b.bin"] = (b, vb)
        decrypted = ["a.bin", "multiply.bin", "multiply_relin_rescale.bin", "rotate_1.bin"]
        if not core:
            decrypted += ["b.bin", "relinearize.bin", "rotate_3.bin", "complex_conjugate.bin",
                          "rescale_to.bin", "mod_switch_to.bin"]
        for fname in decrypted:
            if fname not in expected:
                continue
            ct, want = expected[fname]
            pt = decryptor.decrypt(ct)
            base = fname[:-4]
            pname = None
            if "decrypt_plaintexts" not in skip:
                pname = self.save_pt(pt, f"decrypt_{base}.bin")
            got = encoder.decode_complex(pt)
            dname = self.save_vector(f"decrypt_{base}_decoded", got,
                                     f"CKKSEncoder.decode_complex(decrypt_{base}.bin)")
            err = float(np.max(np.abs(got - want)))
            self.decrypts.append(dict(input=fname, output=pname, decoded=dname,
                                      first_slots=first_slots(got),
                                      expected_first_slots=first_slots(want),
                                      max_abs_error=err))
        # Self-check of the oracle: every recorded result decrypts to what it should.
        for fname, (ct, want) in expected.items():
            got = encoder.decode_complex(decryptor.decrypt(ct))
            err = float(np.max(np.abs(got - want)))
            tol = 1e-4 if spec["log_scale"] >= 30 else 0.1
            if not err < tol:
                fail(f"{spec['name']}/{fname}: decrypts with max error {err} (> {tol})")

        self.write_manifest(scale, galois_elts, sorted(skip))

    def _elt_from_step(self, step):
        n = self.spec["n"]
        m = 2 * n
        if step == 0:
            return m - 1
        s = step if step > 0 else n // 2 + step
        return pow(3, s, m)

    @staticmethod
    def _naf(value):
        res, sign, v, i = [], value < 0, abs(value), 0
        while v:
            z = (2 - (v & 3)) if (v & 1) else 0
            v = (v - z) >> 1
            if z:
                res.append((-z if sign else z) * (1 << i))
            i += 1
        return res

    def _naf_available(self, steps, gk):
        parts = self._naf(steps)
        return len(parts) > 1 and all(gk.has_key(self._elt_from_step(s)) for s in parts)

    def write_manifest(self, scale, galois_elts, skipped):
        spec, ctx = self.spec, self.ctx
        manifest = dict(
            set=spec["name"],
            seal_wheel_version=seal.__version__,
            seal_header_version=self.header_version,
            poly_modulus_degree=spec["n"],
            coeff_modulus_bits=spec["bits"],
            coeff_modulus=self.chain[0]["coeff_modulus"],
            parms_ids=dict(key=list(ctx.key_context_data().parms_id()),
                           first=list(ctx.first_parms_id()), last=list(ctx.last_parms_id())),
            chain=self.chain,
            scale=scale,
            slot_count=spec["n"] // 2,
            galois_steps=spec["steps"],
            galois_elts=galois_elts,
            files=self.files,
            vectors=self.vectors,
            encodes=self.encodes,
            ops=self.ops,
            decrypts=self.decrypts,
            skipped=skipped,
        )
        with open(os.path.join(self.dir, "manifest.json"), "w") as f:
            json.dump(manifest, f, indent=1)
            f.write("\n")


# ---- commands ------------------------------------------------------------------------------

def cmd_gen(argv):
    if not argv:
        fail("usage: oracle.py gen OUTDIR [--quick] [--sets NAME,...]", 2)
    outdir, quick, only = argv[0], False, None
    rest = argv[1:]
    while rest:
        a = rest.pop(0)
        if a == "--quick":
            quick = True
        elif a == "--sets" and rest:
            only = rest.pop(0).split(",")
        else:
            fail(f"gen: unknown argument {a!r}", 2)
    os.makedirs(outdir, exist_ok=True)
    names = []
    for spec in PARAM_SETS:
        if quick and not spec["quick"]:
            continue
        if only is not None and spec["name"] not in only:
            continue
        t0 = time.time()
        Corpus(outdir, spec).generate()
        names.append(spec["name"])
        size = sum(os.path.getsize(os.path.join(outdir, spec["name"], f))
                   for f in os.listdir(os.path.join(outdir, spec["name"])))
        print(f"{spec['name']}: {size / 2**20:.1f} MiB in {time.time() - t0:.1f} s",
              file=sys.stderr)
    if only is not None and set(only) - set(names):
        fail(f"gen: unknown or skipped sets {sorted(set(only) - set(names))}", 2)
    with open(os.path.join(outdir, "sets.json"), "w") as f:
        json.dump(names, f)
        f.write("\n")


def load_set(setdir):
    parms = seal.EncryptionParameters(seal.scheme_type.ckks)
    parms.load(os.path.join(setdir, "parms.bin"))
    return parms, make_context(parms)


def cmd_decrypt(argv):
    if len(argv) not in (2, 4) or (len(argv) == 4 and argv[2] != "--slots"):
        fail("usage: oracle.py decrypt SETDIR CIPHERTEXT.bin [--slots K]", 2)
    setdir, path = argv[0], argv[1]
    k = int(argv[3]) if len(argv) == 4 else 8
    try:
        _, ctx = load_set(setdir)
        sk = seal.SecretKey()
        sk.load(ctx, os.path.join(setdir, "secret_key.bin"))
        ct = seal.Ciphertext()
        ct.load(ctx, path)
        ev = seal.Evaluator(ctx)
        if not ct.is_ntt_form():
            ct = ev.transform_to_ntt(ct)
        pt = seal.Decryptor(ctx, sk).decrypt(ct)
        values = seal.CKKSEncoder(ctx).decode_complex(pt)
    except Exception as e:  # SEAL raises ValueError/RuntimeError/... from C++
        fail(f"decrypt {path}: {type(e).__name__}: {e}")
    pid = list(ct.parms_id())
    print(json.dumps(dict(slots=first_slots(values, k), scale=ct.scale(), parms_id=pid,
                          chain_index=ctx.get_context_data(pid).chain_index(),
                          size=ct.size())))


def cmd_check_load(argv):
    kinds = ("parms", "ciphertext", "plaintext", "secret_key", "public_key", "relin_keys",
             "galois_keys")
    if len(argv) != 3 or argv[1] not in kinds:
        fail(f"usage: oracle.py check-load SETDIR KIND FILE  (KIND: {', '.join(kinds)})", 2)
    setdir, kind, path = argv
    summary = dict(kind=kind)
    try:
        if kind == "parms":
            parms = seal.EncryptionParameters(seal.scheme_type.ckks)
            parms.load(path)
            ctx = make_context(parms)
            summary.update(poly_modulus_degree=parms.poly_modulus_degree(),
                           coeff_modulus=[m.value() for m in parms.coeff_modulus()],
                           parms_id=list(ctx.key_context_data().parms_id()))
        else:
            _, ctx = load_set(setdir)
            cls = dict(ciphertext=seal.Ciphertext, plaintext=seal.Plaintext,
                       secret_key=seal.SecretKey, public_key=seal.PublicKey,
                       relin_keys=seal.RelinKeys, galois_keys=seal.GaloisKeys)[kind]
            obj = cls()
            obj.load(ctx, path)
            summary["parms_id"] = list(obj.parms_id())
            if kind in ("ciphertext", "plaintext"):
                summary.update(scale=obj.scale(), is_ntt_form=obj.is_ntt_form())
            if kind in ("ciphertext", "relin_keys", "galois_keys"):
                summary["size"] = obj.size()
    except Exception as e:
        fail(f"check-load {kind} {path}: {type(e).__name__}: {e}")
    print(json.dumps(summary))


def main(argv):
    cmds = {"gen": cmd_gen, "decrypt": cmd_decrypt, "check-load": cmd_check_load}
    if len(argv) < 2 or argv[1] not in cmds:
        print(__doc__, file=sys.stderr)
        return 2
    cmds[argv[1]](argv[2:])
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
