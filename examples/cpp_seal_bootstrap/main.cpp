// A Microsoft SEAL 4.x program deeper than its modulus chain: SEAL makes the keys, encrypts,
// evaluates (its own seal::Evaluator, RelinKeys, rescale_to_next) and decrypts; whenever the
// ciphertext reaches the last level, the xehe plugin bootstraps it (include/xehe/seal_plugin.hpp,
// xehe::seal_plugin::Bootstrapper), on the GPU when asked and usable.
//
// The parameters are the INSECURE N = 2^12 bootstrapping preset's primes (tests and examples
// only: no security at all); SEAL accepts them with sec_level_type::none. The computation is
//
//     y <- ((y + u_k) / 2)^2,   k = 0, 1, ..., steps - 1,
//
// with a fresh plaintext u_k each step, on 2048 slots of values in [0, 1]: one level a step,
// 3x the chain's depth by default. It is checked against the same computation on doubles; the
// program prints the precision (-log2 of the absolute error over the slots) after each bootstrap
// and at the end, and exits non-zero when the final minimum is below --min-bits.
//
// Usage: xehe_cpp_seal_bootstrap [--gpu] [--steps N] [--min-bits B]
//                                [--keys FILE --secret-key FILE] [--save-keys FILE]
//   --gpu           mark the ciphertext for the GPU (the plugin's gpu()): bootstraps run there;
//                   fails when no GPU is usable. Also XEHE_EXAMPLE_GPU=1.
//   --steps N       steps of the loop (default 3 x the chain's depth).
//   --min-bits B    fail below B bits of minimum precision (default 18).
//   --keys FILE     load the bootstrapping keys (`xehe keygen bootstrap`, or --save-keys)
//                   instead of generating them from SEAL's secret key; the secret key must be
//                   the one they were made from, so this goes with --secret-key.
//   --secret-key F  load SEAL's secret key from F (SEAL's SecretKey::save) instead of making one.
//   --save-keys F   save the generated bootstrapping keys (and the secret key to F.sk).
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <fstream>
#include <iostream>
#include <limits>
#include <string>
#include <vector>

#include "seal/seal.h"
#include "xehe/seal_plugin.hpp"

namespace {

struct Options {
    bool gpu = false;
    long steps = -1;
    double min_bits = 18.0;
    std::string keys, secret_key, save_keys;
};

Options parse(int argc, char **argv) {
    Options o;
    const char *env = std::getenv("XEHE_EXAMPLE_GPU");
    o.gpu = env && std::string(env) == "1";
    for (int i = 1; i < argc; i++) {
        std::string a = argv[i];
        auto value = [&]() -> std::string {
            if (i + 1 >= argc) throw std::invalid_argument(a + " needs a value");
            return argv[++i];
        };
        if (a == "--gpu") {
            o.gpu = true;
        } else if (a == "--steps") {
            o.steps = std::stol(value());
        } else if (a == "--min-bits") {
            o.min_bits = std::stod(value());
        } else if (a == "--keys") {
            o.keys = value();
        } else if (a == "--secret-key") {
            o.secret_key = value();
        } else if (a == "--save-keys") {
            o.save_keys = value();
        } else {
            throw std::invalid_argument("unknown argument " + a);
        }
    }
    if (!o.keys.empty() && o.secret_key.empty()) {
        throw std::invalid_argument("--keys needs --secret-key (the key the bootstrapping keys were made from)");
    }
    return o;
}

/// Deterministic values in [0, 1] (xorshift), one stream per seed.
std::vector<double> uniform01(std::size_t n, std::uint64_t seed) {
    std::uint64_t s = seed * 0x9E3779B97F4A7C15ULL | 1;
    std::vector<double> v(n);
    for (auto &x : v) {
        s ^= s << 13;
        s ^= s >> 7;
        s ^= s << 17;
        x = static_cast<double>(s >> 11) / 9007199254740992.0;
    }
    return v;
}

struct Precision {
    double mean_bits, min_bits;
};

/// -log2 of the absolute error per slot: mean and minimum.
Precision precision(const std::vector<double> &want, const std::vector<double> &got) {
    double sum = 0, worst = std::numeric_limits<double>::infinity();
    for (std::size_t i = 0; i < want.size(); i++) {
        double err = std::max(std::abs(want[i] - got[i]), 1e-30);
        double bits = -std::log2(err);
        sum += bits;
        worst = std::min(worst, bits);
    }
    return {sum / static_cast<double>(want.size()), worst};
}

std::size_t level(const seal::SEALContext &context, const seal::Ciphertext &ct) {
    return context.get_context_data(ct.parms_id())->chain_index();
}

}  // namespace

int main(int argc, char **argv) try {
    Options opt = parse(argc, argv);

    // SEAL parameters from the preset's primes (CoeffModulus::Create picks the same primes).
    auto preset = xehe::seal_plugin::bootstrapping_preset("n12");
    seal::EncryptionParameters parms(seal::scheme_type::ckks);
    parms.set_poly_modulus_degree(preset.poly_modulus_degree);
    parms.set_coeff_modulus(seal::CoeffModulus::Create(preset.poly_modulus_degree, preset.bit_sizes));
    seal::SEALContext context(parms, true, seal::sec_level_type::none);
    std::cout << "parameters: N = " << preset.poly_modulus_degree << ", " << preset.bit_sizes.size()
              << " primes" << (preset.insecure ? " (INSECURE test preset)" : "") << "\n";

    seal::SecretKey secret_key;
    if (!opt.secret_key.empty()) {
        std::ifstream in(opt.secret_key, std::ios::binary);
        if (!in) throw std::runtime_error("cannot read " + opt.secret_key);
        secret_key.load(context, in);
    }
    seal::KeyGenerator keygen = opt.secret_key.empty() ? seal::KeyGenerator(context)
                                                       : seal::KeyGenerator(context, secret_key);
    secret_key = keygen.secret_key();
    seal::PublicKey public_key;
    keygen.create_public_key(public_key);
    seal::RelinKeys relin_keys;
    keygen.create_relin_keys(relin_keys);
    seal::CKKSEncoder encoder(context);
    seal::Encryptor encryptor(context, public_key);
    seal::Decryptor decryptor(context, secret_key);
    seal::Evaluator evaluator(context);

    // The plugin: an xehe evaluator bound to the SEAL context, and the bootstrapper with keys
    // made from SEAL's own secret key (or loaded from a file).
    xehe::seal_plugin::Evaluator plugin(context);
    auto t0 = std::chrono::steady_clock::now();
    xehe::seal_plugin::Bootstrapper boot = opt.keys.empty()
                                               ? xehe::seal_plugin::Bootstrapper(plugin, secret_key)
                                               : xehe::seal_plugin::Bootstrapper(plugin, opt.keys);
    std::cout << "bootstrapping keys " << (opt.keys.empty() ? "generated" : "loaded") << " and bootstrapper made in "
              << std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count() << " s\n";
    if (!opt.save_keys.empty()) {
        boot.save_keys(opt.save_keys);
        std::ofstream sk(opt.save_keys + ".sk", std::ios::binary);
        secret_key.save(sk);
        std::cout << "saved " << opt.save_keys << " and " << opt.save_keys << ".sk\n";
    }

    const double scale = std::pow(2.0, 40);
    const std::size_t slots = encoder.slot_count();
    const std::size_t chain_depth = context.first_context_data()->chain_index();
    const long steps = opt.steps >= 0 ? opt.steps : static_cast<long>(3 * chain_depth);
    if (boot.output_scale() != scale) throw std::logic_error("the bootstrapper's output scale is not 2^40");
    std::cout << "chain depth " << chain_depth << ", " << boot.output_level()
              << " levels after each bootstrap; " << steps << " steps\n";

    // y_0 at the bootstrapper's output level (where the user levels start), scale 2^40.
    std::vector<double> y = uniform01(slots, 1);
    seal::Plaintext plain;
    encoder.encode(y, boot.output_parms_id(), scale, plain);
    seal::Ciphertext ct;
    encryptor.encrypt(plain, ct);

    if (opt.gpu) {
        if (!plugin.gpu(ct)) throw std::runtime_error("--gpu: no GPU is usable: " + plugin.gpu_error());
        std::cout << "bootstrapping on the GPU (the plugin's device; XEHE_DEVICE chooses it)\n";
    } else {
        std::cout << "bootstrapping on the CPU (--gpu or XEHE_EXAMPLE_GPU=1 for the GPU)\n";
    }

    std::size_t bootstraps = 0;
    double boot_seconds = 0;
    bool fresh = true;  // ct is at exactly 2^40 (freshly encrypted or bootstrapped)
    std::vector<double> got;
    for (long k = 0; k < steps; k++) {
        if (level(context, ct) == 0) {
            auto start = std::chrono::steady_clock::now();
            boot.bootstrap_inplace(ct);  // written back: SEAL's objects below use it directly
            boot_seconds += std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
            bootstraps++;
            decryptor.decrypt(ct, plain);
            encoder.decode(plain, got);
            got.resize(slots);
            Precision p = precision(y, got);
            std::cout << "step " << k << ": bootstrap " << bootstraps << " -> level " << level(context, ct)
                      << ", scale 2^" << std::log2(ct.scale()) << "; precision mean " << p.mean_bits << " min "
                      << p.min_bits << " bits\n";
            if (ct.scale() != scale) {
                throw std::logic_error("a bootstrapped ciphertext must be at scale exactly 2^40, is 2^" +
                                       std::to_string(std::log2(ct.scale())));
            }
            fresh = true;
        }
        // y + u_k: right after a bootstrap the ciphertext is at the program's scale, 2^40, so a
        // plaintext encoded at `scale` adds directly; between bootstraps rescaling leaves it at
        // a nearby scale, which u_k is encoded at.
        std::vector<double> u = uniform01(slots, 1000 + static_cast<std::uint64_t>(k));
        encoder.encode(u, ct.parms_id(), fresh ? scale : ct.scale(), plain);
        evaluator.add_plain_inplace(ct, plain);
        // / 2, exactly and without a level: the same coefficients read at twice the scale.
        ct.scale() *= 2;
        // ^2, relinearize, rescale: one level.
        evaluator.square_inplace(ct);
        evaluator.relinearize_inplace(ct, relin_keys);
        evaluator.rescale_to_next_inplace(ct);
        fresh = false;
        for (std::size_t i = 0; i < slots; i++) {
            double h = (y[i] + u[i]) / 2;
            y[i] = h * h;
        }
    }

    decryptor.decrypt(ct, plain);
    encoder.decode(plain, got);
    got.resize(slots);
    Precision p = precision(y, got);
    std::cout << "depth " << steps << " (" << static_cast<double>(steps) / static_cast<double>(chain_depth)
              << "x the chain's " << chain_depth << "), " << bootstraps << " bootstraps";
    if (bootstraps > 0) std::cout << " (" << 1e3 * boot_seconds / static_cast<double>(bootstraps) << " ms each)";
    std::cout << "\nfinal precision over " << slots << " slots: mean " << p.mean_bits << " bits, min " << p.min_bits
              << " bits (threshold " << opt.min_bits << ")\n";
    if (!(p.min_bits >= opt.min_bits)) {
        std::cout << "C++ SEAL bootstrap example: FAILED (precision below the threshold)\n";
        return 1;
    }
    std::cout << "C++ SEAL bootstrap example: OK\n";
    return 0;
} catch (const std::exception &e) {
    std::cerr << "error: " << e.what() << "\n";
    std::cout << "C++ SEAL bootstrap example: FAILED\n";
    return 1;
}
