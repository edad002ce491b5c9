#!/usr/bin/env python3
"""A SEAL program deeper than its modulus chain, kept alive by xehe's bootstrapping: the shape
of a real user's program, not a fresh encryption at an ideal scale.

Microsoft SEAL (seal-python 4.4) makes the keys and runs the program with its own Evaluator,
RelinKeys and rescales; the step is y <- (y^2 + u) / 2 with a fresh plaintext u each time (two
levels: a square with relinearization and rescale, then a product with 0.5 and a rescale), so
the scales are the ones SEAL's rescales produce (2^80 / q, never exactly 2^40). Whenever fewer
than two levels are left, the ciphertext goes to xehe for a bootstrap, through one door:

  cli     `xehe keygen bootstrap` once (from SEAL's secret key), then `xehe eval --expr
          'bootstrap(x)'` per bootstrap (SEAL bytes in and out); with --compare-cpu the same
          bootstrap also runs with --device cpu and the two outputs must be byte-identical.
  python  the xehe module in-process: keys from SEAL's secret key, `Bootstrapper.bootstrap`
          on the ciphertext loaded from SEAL's bytes.

The program encrypts at 2^40 and moves to the top of the user levels (the preset's 40-bit primes
above q_0), where every bootstrap lands. Checked after every bootstrap, with SEAL decrypting: the chain index is the preset's output
level, the scale exactly 2^40, and the precision of the bootstrap (its output against its
decrypted input, bits over the slots, real and imaginary parts apart) is stated beside the
fresh-input figure measured through the same door (a fresh SEAL encryption at 2^40, mod-switched
to the last level, against its slots). At the end the result is compared with the same program
on plain complex doubles.

Usage:
  deep_program.py DOOR OUTDIR N BITS LEVELS [--xehe BIN] [--device DEV] [--compare-cpu]
                  [--max-bootstraps K] [--keys FILE] [--check [--within BITS] [--depth-factor F]]
      BITS: the preset's coeff_modulus bit sizes, comma-separated, special prime last.
      LEVELS: the levels the program consumes in all (two per step).
Prints one JSON object per bootstrap, then a summary object {"summary": ...}. With --check it
exits 1 unless the program used at least --depth-factor (default 3) times the chain's depth
(all its primes: the user's and the bootstrapping's) and every bootstrap
landed at the output level, at exactly 2^40, within --within bits (default 1) of the fresh
figure (mean and minimum, real and imaginary), and against the plain program within --within
bits of min(its input's precision against the plain program, the fresh figure): a bootstrap
never costs a result more than the input itself carried; equal to the CPU's bytes with
--compare-cpu.
"""
import argparse
import json
import os
import subprocess
import sys
import time

try:
    import numpy as np
    import seal
except ImportError as e:  # pragma: no cover
    print(f"deep_program.py: {e}; pip install seal-python==4.4.0 numpy", file=sys.stderr)
    sys.exit(3)

COMPR = seal.compr_mode_type.none
SCALE = 2.0 ** 40


def bits(err):
    err = np.abs(err)
    return -np.log2(np.where(err == 0, 2.0 ** -53, err))


def precision(want, got):
    re, im = bits(got.real - want.real), bits(got.imag - want.imag)
    return {"real_mean": float(re.mean()), "real_min": float(re.min()),
            "imag_mean": float(im.mean()), "imag_min": float(im.min())}


class Seal:
    """The user's side: SEAL's own objects."""

    def __init__(self, n, bits_):
        self.bits = bits_
        self.parms = seal.EncryptionParameters(seal.scheme_type.ckks)
        self.parms.set_poly_modulus_degree(n)
        self.parms.set_coeff_modulus(seal.CoeffModulus.Create(n, bits_))
        self.ctx = seal.SEALContext(self.parms, True, seal.sec_level_type.none)
        assert self.ctx.parameters_set(), self.ctx.parameter_error_message()
        kg = seal.KeyGenerator(self.ctx)
        self.sk = kg.secret_key()
        self.encryptor = seal.Encryptor(self.ctx, kg.create_public_key())
        self.rk = kg.create_relin_keys()
        self.ev = seal.Evaluator(self.ctx)
        self.encoder = seal.CKKSEncoder(self.ctx)
        self.decryptor = seal.Decryptor(self.ctx, self.sk)
        self.slots = self.encoder.slot_count()

    def level(self, ct):
        return self.ctx.get_context_data(ct.parms_id()).chain_index()

    def decrypt(self, ct):
        return np.asarray(self.encoder.decode_complex(self.decryptor.decrypt(ct)))

    def plain(self, z, parms_id, scale):
        pt = self.encoder.encode_complex(z, scale)
        self.ev.mod_switch_to_inplace(pt, parms_id)
        return pt

    def step(self, ct, u):
        """y <- (y^2 + u) / 2 in SEAL, two levels."""
        sq = self.ev.square(ct)
        self.ev.relinearize_inplace(sq, self.rk)
        self.ev.rescale_to_next_inplace(sq)
        self.ev.add_plain_inplace(sq, self.plain(u, sq.parms_id(), sq.scale()))
        self.ev.multiply_plain_inplace(sq, self.plain(np.full(self.slots, 0.5 + 0j), sq.parms_id(), SCALE))
        self.ev.rescale_to_next_inplace(sq)
        return sq

    def from_bytes(self, data):
        ct = seal.Ciphertext()
        ct.load_bytes(self.ctx, data)
        return ct


class CliDoor:
    """`xehe keygen bootstrap` once, `xehe eval --expr 'bootstrap(x)'` per bootstrap."""

    def __init__(self, s, out, xehe, device, compare_cpu, keys):
        self.s, self.out, self.xehe, self.device, self.compare_cpu = s, out, xehe, device, compare_cpu
        self.parms = os.path.join(out, "parms.bin")
        s.parms.save(self.parms, COMPR)
        self.keys = keys or os.path.join(out, "bk.bin")
        self.keygen_s = 0.0
        if not keys:
            sk = os.path.join(out, "secret_key.bin")
            s.sk.save(sk)
            t = time.time()
            said = self.run(["keygen", "bootstrap", "--params", self.parms, "--secret-key", sk, "--out", self.keys])
            self.keygen_s = time.time() - t
            sys.stderr.write(said)
        self.count = 0

    def run(self, args):
        p = subprocess.run([self.xehe] + args, capture_output=True, text=True)
        if p.returncode != 0:
            sys.stderr.write(p.stdout + p.stderr)
            raise SystemExit(f"xehe {' '.join(args[:2])} failed ({p.returncode})")
        return p.stdout + p.stderr

    def eval(self, x, device, out):
        said = self.run(["eval", "--params", self.parms, "--bootstrap-keys", self.keys, "--input", f"x={x}",
                         "--expr", "bootstrap(x)", "--out", out, "--device", device])
        if self.count == 1:  # what xehe eval reports (key loading, device), once per device
            sys.stderr.write(f"xehe eval --device {device}:\n{said}")
        with open(out, "rb") as f:
            return f.read()

    def bootstrap(self, ct):
        self.count += 1
        x = os.path.join(self.out, f"in{self.count}.bin")
        ct.save(x, COMPR)
        t = time.time()
        data = self.eval(x, self.device, os.path.join(self.out, f"out{self.count}.bin"))
        info = {"seconds": time.time() - t}
        if self.compare_cpu:
            cpu = self.eval(x, "cpu", os.path.join(self.out, f"cpu{self.count}.bin"))
            info["equal_to_cpu"] = cpu == data
        return self.s.from_bytes(data), info


class PythonDoor:
    """The xehe module in-process: SEAL's secret key and ciphertexts as bytes."""

    def __init__(self, s, params_name):
        import xehe
        from xehe.seal import Ciphertext, SecretKey

        self.s, self.Ciphertext = s, Ciphertext
        params = xehe.BootstrappingParameters.preset(params_name)
        self.ctx = params.context()
        sk = SecretKey()
        sk.load_bytes(self.ctx, s.sk.to_string())
        t = time.time()
        self.boot = xehe.Bootstrapper(self.ctx, xehe.BootstrappingKeys.generate(self.ctx, params, sk))
        self.keygen_s = time.time() - t

    def bootstrap(self, ct):
        x = self.Ciphertext()
        x.load_bytes(self.ctx, ct.to_string())
        t = time.time()
        out = self.boot.bootstrap(x)
        return self.s.from_bytes(out.to_bytes()), {"seconds": time.time() - t}


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("door", choices=["cli", "python"])
    ap.add_argument("out")
    ap.add_argument("n", type=int)
    ap.add_argument("bits")
    ap.add_argument("levels", type=int)
    ap.add_argument("--xehe", default="xehe")
    ap.add_argument("--device", default="cpu")
    ap.add_argument("--compare-cpu", action="store_true")
    ap.add_argument("--max-bootstraps", type=int, default=None)
    ap.add_argument("--keys", default=None, help="bootstrapping keys made before (cli door)")
    ap.add_argument("--check", action="store_true", help="exit 1 unless every bootstrap meets the contract")
    ap.add_argument("--within", type=float, default=1.0, help="bits below the fresh figure allowed (--check)")
    ap.add_argument("--depth-factor", type=float, default=3.0,
                    help="levels the program must use, in chain depths (--check; 0: any)")
    a = ap.parse_args()
    os.makedirs(a.out, exist_ok=True)
    s = Seal(a.n, [int(b) for b in a.bits.split(",")])
    door = (CliDoor(s, a.out, a.xehe, a.device, a.compare_cpu, a.keys) if a.door == "cli"
            else PythonDoor(s, str(a.n)))
    rng = np.random.default_rng(20261124)

    def uniform(r):
        return r * (rng.uniform(-1, 1, s.slots) + 1j * rng.uniform(-1, 1, s.slots))

    # The fresh-input figure, through the same door.
    z = uniform(1.0)
    fresh_ct = s.encryptor.encrypt(s.encoder.encode_complex(z, SCALE))
    s.ev.mod_switch_to_inplace(fresh_ct, s.ctx.last_parms_id())
    out, _ = door.bootstrap(fresh_ct)
    fresh = precision(z, s.decrypt(out))
    output_level = s.level(out)

    # The user's levels: the preset's 40-bit primes above q_0 (the primes above them are the
    # bootstrapping's); a program encrypts and moves to the top of them, as after a bootstrap.
    user_levels = next(i for i, b in enumerate(s.bits[1:]) if b != 40)
    y = uniform(0.7)
    ct = s.encryptor.encrypt(s.encoder.encode_complex(y, SCALE))
    full_depth = s.level(ct)
    while s.level(ct) > user_levels:
        s.ev.mod_switch_to_next_inplace(ct)
    used, boots, stopped_early = 0, [], False
    while used < a.levels:
        if s.level(ct) < 2:
            if a.max_bootstraps is not None and len(boots) >= a.max_bootstraps:
                stopped_early = True
                break
            before = s.decrypt(ct)
            rec = {"bootstrap": len(boots) + 1, "levels_used": used, "chain_index_in": s.level(ct),
                   "log2_scale_in": float(np.log2(ct.scale()))}
            ct, info = door.bootstrap(ct)
            rec.update(info)
            rec.update({"chain_index_out": s.level(ct), "scale_out": ct.scale(),
                        "scale_out_is_2_40": ct.scale() == SCALE})
            rec.update(precision(before, s.decrypt(ct)))
            rec["vs_plain_in"] = precision(y, before)
            rec["vs_plain"] = precision(y, s.decrypt(ct))
            print(json.dumps(rec), flush=True)
            boots.append(rec)
        u = uniform(0.5)
        ct = s.step(ct, u)
        y = (y * y + u) / 2
        used += 2
    summary = {"door": a.door, "n": a.n, "user_levels": user_levels, "chain_depth": full_depth, "levels_used": used,
               "bootstraps": len(boots), "output_level": output_level, "fresh": fresh,
               "final_vs_plain": precision(y, s.decrypt(ct)), "keygen_seconds": door.keygen_s,
               "stopped_early": stopped_early}
    print(json.dumps({"summary": summary}), flush=True)
    if a.check:
        failures = check(summary, boots, a.within, a.depth_factor)
        for f in failures:
            print(f"CHECK FAILED: {f}", file=sys.stderr)
        print(f"check: {len(boots)} bootstraps, {len(failures)} failures (within {a.within} bit of the fresh figure)")
        sys.exit(1 if failures else 0)


def check(summary, boots, within, depth_factor):
    """What every bootstrap of the program must satisfy (module docs)."""
    fresh, out = summary["fresh"], []
    if summary["levels_used"] < depth_factor * summary["chain_depth"]:
        out.append(f"the program used {summary['levels_used']} levels, under {depth_factor} x {summary['chain_depth']}")
    for b in boots:
        at = f"bootstrap {b['bootstrap']} (chain index {b['chain_index_in']}, scale 2^{b['log2_scale_in']:.9f})"
        if b["chain_index_out"] != summary["output_level"]:
            out.append(f"{at}: chain index {b['chain_index_out']}, not {summary['output_level']}")
        if not b["scale_out_is_2_40"]:
            out.append(f"{at}: scale {b['scale_out']!r}, not 2^40")
        if b.get("equal_to_cpu") is False:
            out.append(f"{at}: the device's result differs from the CPU's")
        for k in ("real_mean", "real_min", "imag_mean", "imag_min"):
            if b[k] < fresh[k] - within:
                out.append(f"{at}: {k} {b[k]:.2f} bits, fresh {fresh[k]:.2f}")
            # Against the plain program: no worse than the input was, or than a fresh input.
            floor = min(b["vs_plain_in"][k], fresh[k]) - within
            if b["vs_plain"][k] < floor:
                out.append(f"{at}: {k} against plain doubles {b['vs_plain'][k]:.2f} bits, its input "
                           f"{b['vs_plain_in'][k]:.2f}, fresh {fresh[k]:.2f}")
    for k in ("real_mean", "imag_mean"):
        if summary["final_vs_plain"][k] < fresh[k] - within:
            out.append(f"final result against plain doubles: {k} {summary['final_vs_plain'][k]:.2f}, fresh {fresh[k]:.2f}")
    return out


if __name__ == "__main__":
    main()
