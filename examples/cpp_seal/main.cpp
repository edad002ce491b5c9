// A Microsoft SEAL 4.x program evaluated through the xehe plugin (include/xehe/seal_plugin.hpp):
// SEAL makes the keys and encrypts; the plugin evaluates (on the GPU when one is usable, else
// on the CPU); SEAL decrypts. Every plugin result is compared byte for byte with SEAL's own
// evaluation of the same operation (both saved by SEAL, compr_mode none).
//
// Exit status 0 when every result is identical and the decrypted values are right.
#include <cmath>
#include <cstdio>
#include <functional>
#include <iostream>
#include <string>
#include <vector>

#include "seal/seal.h"
#include "xehe/seal_plugin.hpp"

namespace {

std::vector<seal::seal_byte> bytes(const seal::Ciphertext &c) {
    std::vector<seal::seal_byte> b(static_cast<size_t>(c.save_size(seal::compr_mode_type::none)));
    b.resize(static_cast<size_t>(c.save(b.data(), b.size(), seal::compr_mode_type::none)));
    return b;
}

int failures = 0;
int checks = 0;

void compare(const std::string &name, xehe::seal_plugin::Evaluator &plugin, seal::Ciphertext &got,
             const seal::Ciphertext &want) {
    plugin.download(got);
    checks++;
    bool same = bytes(got) == bytes(want);
    std::cout << (same ? "same  " : "DIFFER") << "  " << name << "\n";
    if (!same) failures++;
}

}  // namespace

int main() {
    const size_t n = 8192;
    seal::EncryptionParameters parms(seal::scheme_type::ckks);
    parms.set_poly_modulus_degree(n);
    parms.set_coeff_modulus(seal::CoeffModulus::Create(n, {60, 40, 40, 60}));
    seal::SEALContext context(parms);
    seal::KeyGenerator keygen(context);
    seal::PublicKey pk;
    keygen.create_public_key(pk);
    seal::RelinKeys rk;
    keygen.create_relin_keys(rk);
    seal::GaloisKeys gk;
    keygen.create_galois_keys(std::vector<int>{0, 1, -1, 4}, gk);
    seal::CKKSEncoder encoder(context);
    seal::Encryptor encryptor(context, pk);
    seal::Decryptor decryptor(context, keygen.secret_key());
    seal::Evaluator seal_eval(context);
    xehe::seal_plugin::Evaluator plugin(context);

    const size_t slots = encoder.slot_count();
    std::vector<double> x(slots), y(slots);
    for (size_t i = 0; i < slots; i++) {
        x[i] = static_cast<double>(i) / slots;
        y[i] = 0.5 - x[i];
    }
    const double scale = std::pow(2.0, 40);
    seal::Plaintext px, py;
    encoder.encode(x, scale, px);
    encoder.encode(y, scale, py);
    seal::Ciphertext cx, cy;
    encryptor.encrypt(px, cx);
    encryptor.encrypt(py, cy);

    // Listing 1 of the paper: mark with gpu, multiply, add, decrypt with SEAL's Decryptor.
    bool on_gpu = plugin.gpu(cx) && plugin.gpu(cy);
    std::cout << "plugin device: " << (on_gpu ? "GPU" : "CPU (" + plugin.gpu_error() + ")") << "\n";
    seal::Ciphertext prod, sum;
    plugin.multiply(cx, cy, prod);
    plugin.add(prod, prod, sum);
    seal::Plaintext plain;
    plugin.decrypt(decryptor, sum, plain);
    std::vector<double> got;
    encoder.decode(plain, got);
    double max_err = 0;
    for (size_t i = 0; i < slots; i++) max_err = std::max(max_err, std::fabs(got[i] - 2 * x[i] * y[i]));
    std::cout << "listing 1: 2xy, max error " << max_err << "\n";
    if (!(max_err < 1e-4)) failures++;

    // Every operation, plugin vs SEAL, byte for byte (results written back by download()).
    seal::Ciphertext want, r;
    seal_eval.multiply(cx, cy, want);
    compare("multiply", plugin, prod, want);
    seal_eval.add(want, want, want);
    compare("add", plugin, sum, want);
    seal_eval.sub(cx, cy, want);
    plugin.sub(cx, cy, r);
    compare("sub", plugin, r, want);
    seal_eval.negate(cx, want);
    plugin.negate(cx, r);
    compare("negate", plugin, r, want);
    seal_eval.square(cx, want);
    plugin.square(cx, r);
    compare("square", plugin, r, want);
    seal_eval.add_plain(cx, py, want);
    plugin.add_plain(cx, py, r);
    compare("add_plain", plugin, r, want);
    seal_eval.sub_plain(cx, py, want);
    plugin.sub_plain(cx, py, r);
    compare("sub_plain", plugin, r, want);
    seal_eval.multiply_plain(cx, py, want);
    plugin.multiply_plain(cx, py, r);
    compare("multiply_plain", plugin, r, want);

    // A chain on the device: relinearize, rescale, rotate, conjugate, mod switch, without
    // downloads in between (only the final compare writes back).
    seal::Ciphertext chain_seal, chain;
    seal_eval.multiply(cx, cy, chain_seal);
    seal_eval.relinearize_inplace(chain_seal, rk);
    plugin.multiply(cx, cy, chain);
    plugin.relinearize_inplace(chain, rk);
    compare("relinearize", plugin, chain, chain_seal);
    seal_eval.rescale_to_next_inplace(chain_seal);
    seal_eval.rotate_vector_inplace(chain_seal, 1, gk);
    seal_eval.rotate_vector_inplace(chain_seal, -1, gk);
    seal_eval.rotate_vector_inplace(chain_seal, 3, gk);  // no key for 3: NAF 4 - 1
    seal_eval.complex_conjugate_inplace(chain_seal, gk);
    plugin.rescale_to_next_inplace(chain);
    plugin.rotate_vector_inplace(chain, 1, gk);
    plugin.rotate_vector_inplace(chain, -1, gk);
    plugin.rotate_vector_inplace(chain, 3, gk);
    plugin.complex_conjugate_inplace(chain, gk);
    compare("rescale_to_next, rotate 1/-1/3, complex_conjugate", plugin, chain, chain_seal);
    seal_eval.mod_switch_to_next(cx, want);
    plugin.mod_switch_to_next(cx, r);
    compare("mod_switch_to_next", plugin, r, want);
    seal_eval.rescale_to(prod, context.last_parms_id(), want);
    plugin.rescale_to(prod, context.last_parms_id(), r);
    compare("rescale_to", plugin, r, want);

    // A SEAL object modified by the application after the plugin cached it: reloaded.
    encryptor.encrypt(py, cx);
    seal_eval.add(cx, cy, want);
    plugin.add(cx, cy, r);
    compare("add after the application re-encrypted an operand", plugin, r, want);

    std::cout << checks - failures << " of " << checks << " results identical to SEAL\n";
    if (failures) {
        std::cout << "C++ SEAL example: FAILED\n";
        return 1;
    }
    std::cout << "C++ SEAL example: OK\n";
    return 0;
}
