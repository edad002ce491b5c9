"""CKKS basics with seal-python's API: evaluate PI * x^3 + 0.4 * x + 1 on encrypted x.

The flow of SEAL's `5_ckks_basics` example, written against seal-python 4.4's names. The import
below is the only xehe-specific line: replace it with `from seal import *` and the same script
runs on seal-python (tests/test_examples.py runs it both ways).

    python examples/ckks_basics.py
"""

import math

from xehe.seal import *  # seal-python: from seal import *


def show_parameters(context):
    data = context.key_context_data()
    parms = data.parms()
    bits = [m.bit_count() for m in parms.coeff_modulus()]
    print("/ Encryption parameters")
    print(f"| scheme: {'ckks' if parms.scheme() == scheme_type.ckks else 'other'}")
    print(f"| poly_modulus_degree: {parms.poly_modulus_degree()}")
    print(f"| coeff_modulus: {sum(bits)} bits ({' + '.join(map(str, bits))})")
    print("\\")


def show(label, values, count=4, precision=7):
    head = ", ".join(f"{v:.{precision}f}" for v in values[:count])
    tail = ", ".join(f"{v:.{precision}f}" for v in values[-count:])
    print(f"{label}: [{head}, ..., {tail}]")


def main():
    # N = 8192 with primes 60 | 40 40 | 60: the 40-bit primes are the two rescalings of x^3,
    # the first 60-bit prime keeps the integer part, the last one is the special prime.
    parms = EncryptionParameters(scheme_type.ckks)
    poly_modulus_degree = 8192
    parms.set_poly_modulus_degree(poly_modulus_degree)
    parms.set_coeff_modulus(CoeffModulus.Create(poly_modulus_degree, [60, 40, 40, 60]))
    scale = 2.0**40
    context = SEALContext(parms)
    show_parameters(context)

    keygen = KeyGenerator(context)
    public_key = keygen.create_public_key()
    relin_keys = keygen.create_relin_keys()
    encryptor = Encryptor(context, public_key)
    evaluator = Evaluator(context)
    decryptor = Decryptor(context, keygen.secret_key())
    encoder = CKKSEncoder(context)
    slot_count = encoder.slot_count()
    print(f"slots: {slot_count}")

    # x_i evenly spaced in [0, 1], one per slot.
    inputs = [i / (slot_count - 1) for i in range(slot_count)]
    show("input", inputs)

    plain_pi = encoder.encode(math.pi, scale)
    plain_04 = encoder.encode(0.4, scale)
    plain_one = encoder.encode(1.0, scale)
    x_encrypted = encryptor.encrypt(encoder.encode(inputs, scale))

    # x^2, relinearized, rescaled: scale ~ 2^40, one level down.
    x2 = evaluator.square(x_encrypted)
    evaluator.relinearize_inplace(x2, relin_keys)
    evaluator.rescale_to_next_inplace(x2)
    print(f"x^2: level {context.get_context_data(x2.parms_id()).chain_index()}, scale 2^{math.log2(x2.scale()):.4f}")

    # PI * x at the first level, rescaled to the level of x^2.
    pi_x = evaluator.multiply_plain(x_encrypted, plain_pi)
    evaluator.rescale_to_next_inplace(pi_x)

    # PI * x^3 = (PI * x) * x^2, one more level down.
    x3 = evaluator.multiply(x2, pi_x)
    evaluator.relinearize_inplace(x3, relin_keys)
    evaluator.rescale_to_next_inplace(x3)
    print(f"PI*x^3: level {context.get_context_data(x3.parms_id()).chain_index()}, scale 2^{math.log2(x3.scale()):.4f}")

    # 0.4 * x, rescaled once.
    x1 = evaluator.multiply_plain(x_encrypted, plain_04)
    evaluator.rescale_to_next_inplace(x1)

    # The three terms must share a level and a scale before they can be added. The scales are
    # all close to 2^40 (the primes are close to 2^40): set them to exactly 2^40.
    last = x3.parms_id()
    evaluator.mod_switch_to_inplace(x1, last)
    evaluator.mod_switch_to_inplace(plain_one, last)
    x3.scale(scale)
    x1.scale(scale)

    result = evaluator.add(x3, x1)
    evaluator.add_plain_inplace(result, plain_one)

    decoded = encoder.decode(decryptor.decrypt(result))
    expected = [math.pi * x**3 + 0.4 * x + 1.0 for x in inputs]
    show("expected", expected)
    show("computed", list(decoded))
    error = max(abs(a - b) for a, b in zip(decoded, expected))
    print(f"max abs error: {error:.3e}")
    assert error < 1e-3, error


if __name__ == "__main__":
    main()
