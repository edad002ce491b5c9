// xehe SEAL plugin: a header-only C++ adapter over the C ABI (xehe.h) that gives Microsoft SEAL
// 4.x applications an evaluator taking seal::Ciphertext / seal::Plaintext objects and running
// it with xehe, on the GPU when one is usable (XeHE paper, §III-A Fig. 1-2, Listing 1):
//
//     xehe::seal_plugin::Evaluator gpu_eval(context);   // context: seal::SEALContext
//     gpu_eval.gpu(x); gpu_eval.gpu(y);                  // mark (paper: x.gpu())
//     gpu_eval.multiply(x, y, z);                        // runs on the GPU, stays there
//     gpu_eval.relinearize_inplace(z, relin_keys);
//     gpu_eval.add_inplace(z, z);
//     gpu_eval.decrypt(decryptor, z, plain);             // writes z back, SEAL decrypts
//
// Device copies are kept lazily (§III-D) in a cache keyed by the SEAL object's address:
//
// - An operand is converted once (SEAL save, compr_mode none -> xehe load) and reused while its
//   content is unchanged. Content check: a 64-bit FNV-1a fingerprint of the object's metadata
//   (parms_id, size, scale, NTT form) and data words, recomputed on each use and compared with
//   the fingerprint of the SEAL content the cache last synchronized with. A changed
//   fingerprint means the application modified the SEAL object (or a new object lives at the
//   address): the entry is reloaded from SEAL.
// - A destination receives its result in xehe (on the GPU if an operand was there); the SEAL
//   object is stale until download(ct), download_all() or decrypt() writes it back (xehe save
//   -> SEAL load, SEAL's validity checks included). Do not modify a stale SEAL object other
//   than through the plugin: a fingerprint change on a stale entry throws std::logic_error.
//   Metadata of stale objects: parms_id() / scale() / size() of the plugin.
// - Keys (seal::RelinKeys, seal::GaloisKeys) and plaintexts are converted on first use and
//   cached by address, with the same fingerprint check for plaintexts and a (parms_id, size)
//   check for keys (keys are treated as immutable).
// - forget(obj) drops an entry (call it before destroying a SEAL object that is stale, or to
//   free device memory); the plugin's destructor drops all.
//
// Bootstrapping (xehe addition, not a SEAL feature): xehe::seal_plugin::Bootstrapper makes the
// bootstrapping keys from the application's seal::SecretKey (serialized with SEAL, handed to
// xehe) or loads them from `xehe keygen bootstrap`'s file, and refreshes a ciphertext that ran
// out of levels. The SEAL parameters must be a preset's (xehe_bootstrapping_preset; SEAL needs
// sec_level_type::none for them):
//
//     xehe::seal_plugin::Bootstrapper boot(gpu_eval, keygen.secret_key());
//     gpu_eval.gpu(y);                                   // optional: bootstrap on the GPU
//     boot.bootstrap_inplace(y);                         // y: size 2, any level, e.g. the last
//     seal_eval.square_inplace(y);                       // SEAL's own Evaluator goes on
//
// Unlike the Evaluator's operations, bootstrap() writes its destination back at once (the SEAL
// object is current, usable by seal::Evaluator), keeping the device copy in the cache, and the
// destination inherits the operand's gpu() mark.
//
// Errors: every xehe failure throws xehe::seal_plugin::Error (a std::runtime_error with the
// XeheStatus and xehe_last_error()); SEAL's own exceptions pass through. Thread safety: one
// Evaluator may be used from several threads; its cache is guarded by a mutex and the C API is
// thread-safe, but (as with SEAL) a SEAL object must not be written by two threads at once.
// Ownership: the plugin never takes ownership of SEAL objects; it owns its xehe handles.
#ifndef XEHE_SEAL_PLUGIN_HPP
#define XEHE_SEAL_PLUGIN_HPP

#include <cstdint>
#include <cstring>
#include <memory>
#include <mutex>
#include <stdexcept>
#include <string>
#include <unordered_map>
#include <vector>

#include "seal/seal.h"
#include "xehe.h"

namespace xehe {
namespace seal_plugin {

/// A failed xehe call: the status and the library's message.
class Error : public std::runtime_error {
public:
    Error(XeheStatus status, const std::string &what)
        : std::runtime_error(what + ": " + xehe_status_name(static_cast<int32_t>(status)) + ": " +
                             xehe_last_error()),
          status_(status) {}
    XeheStatus status() const noexcept { return status_; }

private:
    XeheStatus status_;
};

namespace detail {

inline void check(XeheStatus s, const char *what) {
    if (s != XEHE_STATUS_OK) throw Error(s, what);
}

/// Owning xehe handle with its destroy function.
template <class T, XeheStatus (*Destroy)(T *)>
class Handle {
public:
    Handle() = default;
    explicit Handle(T *h) : h_(h) {}
    Handle(Handle &&o) noexcept : h_(o.h_) { o.h_ = nullptr; }
    Handle &operator=(Handle &&o) noexcept {
        if (this != &o) {
            reset();
            h_ = o.h_;
            o.h_ = nullptr;
        }
        return *this;
    }
    Handle(const Handle &) = delete;
    Handle &operator=(const Handle &) = delete;
    ~Handle() { reset(); }
    void reset() {
        if (h_) Destroy(h_);
        h_ = nullptr;
    }
    T *get() const { return h_; }
    T **out() {
        reset();
        return &h_;
    }

private:
    T *h_ = nullptr;
};

using Ct = Handle<XeheCiphertext, xehe_ciphertext_destroy>;
using Pt = Handle<XehePlaintext, xehe_plaintext_destroy>;

/// FNV-1a, 64-bit.
class Fnv {
public:
    void bytes(const void *p, std::size_t n) {
        const unsigned char *b = static_cast<const unsigned char *>(p);
        for (std::size_t i = 0; i < n; i++) {
            h_ ^= b[i];
            h_ *= 0x100000001b3ULL;
        }
    }
    void words(const std::uint64_t *w, std::size_t n) {
        for (std::size_t i = 0; i < n; i++) bytes(&w[i], sizeof w[i]);
    }
    std::uint64_t value() const { return h_; }

private:
    std::uint64_t h_ = 0xcbf29ce484222325ULL;
};

inline std::uint64_t fingerprint(const seal::Ciphertext &c) {
    Fnv f;
    f.words(c.parms_id().data(), c.parms_id().size());
    std::uint64_t meta[3] = {static_cast<std::uint64_t>(c.size()), 0, c.is_ntt_form() ? 1u : 0u};
    double scale = c.scale();
    std::memcpy(&meta[1], &scale, sizeof scale);
    f.words(meta, 3);
    f.words(c.data(), c.dyn_array().size());
    return f.value();
}

inline std::uint64_t fingerprint(const seal::Plaintext &p) {
    Fnv f;
    f.words(p.parms_id().data(), p.parms_id().size());
    double scale = p.scale();
    f.bytes(&scale, sizeof scale);
    f.words(p.data(), p.coeff_count());
    return f.value();
}

/// SEAL object -> bytes in SEAL's format, uncompressed.
template <class S>
std::vector<seal::seal_byte> seal_bytes(const S &obj) {
    std::vector<seal::seal_byte> buf(static_cast<std::size_t>(obj.save_size(seal::compr_mode_type::none)));
    auto n = obj.save(buf.data(), buf.size(), seal::compr_mode_type::none);
    buf.resize(static_cast<std::size_t>(n));
    return buf;
}

/// Bytes of an xehe object through (buf, capacity, written).
template <class F>
std::vector<seal::seal_byte> xehe_bytes(F save, const char *what) {
    std::size_t needed = 0;
    XeheStatus s = save(nullptr, 0, &needed);
    if (s != XEHE_STATUS_BUFFER_TOO_SMALL) check(s, what);
    std::vector<seal::seal_byte> buf(needed);
    check(save(reinterpret_cast<std::uint8_t *>(buf.data()), buf.size(), &needed), what);
    buf.resize(needed);
    return buf;
}

inline const std::uint8_t *u8(const std::vector<seal::seal_byte> &b) {
    return reinterpret_cast<const std::uint8_t *>(b.data());
}

}  // namespace detail

class Bootstrapper;

/// An evaluator for SEAL objects, running on xehe (GPU when marked and usable). Method names
/// and argument orders follow seal::Evaluator.
class Evaluator {
public:
    /// Bind to a SEAL context: its parameters are converted to an xehe context.
    explicit Evaluator(const seal::SEALContext &context) : seal_context_(context) {
        auto parms = detail::seal_bytes(context.key_context_data()->parms());
        detail::Handle<XeheParms, xehe_parms_destroy> p;
        detail::check(xehe_parms_load(detail::u8(parms), parms.size(), p.out()), "xehe_parms_load");
        auto sec = static_cast<std::uint32_t>(context.key_context_data()->qualifiers().sec_level);
        detail::check(xehe_context_create(p.get(), sec, ctx_.out()), "xehe_context_create");
        detail::check(xehe_evaluator_create(ctx_.get(), ev_.out()), "xehe_evaluator_create");
    }

    /// Mark `ct` for the GPU (paper `ct.gpu()`): its device copy is made on first use and
    /// results of operations on it stay on the device. Returns false (and keeps the object on
    /// the CPU, where the plugin still works) when no GPU is usable; gpu_error() says why.
    bool gpu(const seal::Ciphertext &ct) {
        std::lock_guard<std::mutex> lock(mu_);
        Entry &e = operand(ct);
        e.marked = true;
        return mark(e);
    }

    /// Whether a GPU is usable (the default queue can be made).
    bool gpu_available() {
        bool ok = false;
        detail::check(xehe_device_available(&ok), "xehe_device_available");
        if (!ok) gpu_error_ = xehe_last_error();
        return ok;
    }
    /// Why the last gpu() returned false.
    const std::string &gpu_error() const { return gpu_error_; }

    /// Write the current value of `ct` back into the SEAL object if it is stale.
    void download(seal::Ciphertext &ct) {
        std::lock_guard<std::mutex> lock(mu_);
        auto it = cts_.find(&ct);
        if (it != cts_.end() && it->second.stale) write_back(ct, it->second);
    }

    /// Write back every stale SEAL ciphertext.
    void download_all() {
        std::lock_guard<std::mutex> lock(mu_);
        for (auto &kv : cts_) {
            if (kv.second.stale) write_back(*const_cast<seal::Ciphertext *>(kv.first), kv.second);
        }
    }

    /// Download `ct`, then decrypt it with SEAL's decryptor (Listing 1's last step).
    void decrypt(seal::Decryptor &decryptor, seal::Ciphertext &ct, seal::Plaintext &destination) {
        download(ct);
        decryptor.decrypt(ct, destination);
    }

    /// Drop the cache entry of an object (its xehe and device copies). A stale ciphertext's
    /// unsaved value is lost.
    void forget(const seal::Ciphertext &ct) {
        std::lock_guard<std::mutex> lock(mu_);
        cts_.erase(&ct);
    }
    void forget(const seal::Plaintext &pt) {
        std::lock_guard<std::mutex> lock(mu_);
        pts_.erase(&pt);
    }

    /// Metadata of the current value (valid while the SEAL object is stale).
    seal::parms_id_type parms_id(const seal::Ciphertext &ct) {
        seal::parms_id_type id;
        info(ct, id.data(), nullptr, nullptr);
        return id;
    }
    double scale(const seal::Ciphertext &ct) {
        double s = 0;
        info(ct, nullptr, &s, nullptr);
        return s;
    }
    std::size_t size(const seal::Ciphertext &ct) {
        std::size_t n = 0;
        info(ct, nullptr, nullptr, &n);
        return n;
    }

    // ---- seal::Evaluator's operations ------------------------------------------------------

    void negate(const seal::Ciphertext &a, seal::Ciphertext &destination) {
        unary(xehe_evaluator_negate, a, destination, "negate");
    }
    void negate_inplace(seal::Ciphertext &a) { negate(a, a); }
    void add(const seal::Ciphertext &a, const seal::Ciphertext &b, seal::Ciphertext &destination) {
        binary(xehe_evaluator_add, a, b, destination, "add");
    }
    void add_inplace(seal::Ciphertext &a, const seal::Ciphertext &b) { add(a, b, a); }
    void sub(const seal::Ciphertext &a, const seal::Ciphertext &b, seal::Ciphertext &destination) {
        binary(xehe_evaluator_sub, a, b, destination, "sub");
    }
    void sub_inplace(seal::Ciphertext &a, const seal::Ciphertext &b) { sub(a, b, a); }
    void multiply(const seal::Ciphertext &a, const seal::Ciphertext &b, seal::Ciphertext &destination) {
        binary(xehe_evaluator_multiply, a, b, destination, "multiply");
    }
    void multiply_inplace(seal::Ciphertext &a, const seal::Ciphertext &b) { multiply(a, b, a); }
    void square(const seal::Ciphertext &a, seal::Ciphertext &destination) {
        unary(xehe_evaluator_square, a, destination, "square");
    }
    void square_inplace(seal::Ciphertext &a) { square(a, a); }
    void add_plain(const seal::Ciphertext &a, const seal::Plaintext &p, seal::Ciphertext &destination) {
        with_plain(xehe_evaluator_add_plain, a, p, destination, "add_plain");
    }
    void add_plain_inplace(seal::Ciphertext &a, const seal::Plaintext &p) { add_plain(a, p, a); }
    void sub_plain(const seal::Ciphertext &a, const seal::Plaintext &p, seal::Ciphertext &destination) {
        with_plain(xehe_evaluator_sub_plain, a, p, destination, "sub_plain");
    }
    void sub_plain_inplace(seal::Ciphertext &a, const seal::Plaintext &p) { sub_plain(a, p, a); }
    void multiply_plain(const seal::Ciphertext &a, const seal::Plaintext &p, seal::Ciphertext &destination) {
        with_plain(xehe_evaluator_multiply_plain, a, p, destination, "multiply_plain");
    }
    void multiply_plain_inplace(seal::Ciphertext &a, const seal::Plaintext &p) { multiply_plain(a, p, a); }
    void relinearize(const seal::Ciphertext &a, const seal::RelinKeys &keys, seal::Ciphertext &destination) {
        std::lock_guard<std::mutex> lock(mu_);
        XeheRelinKeys *k = relin_keys(keys);
        run(a, destination, "relinearize",
            [&](XeheCiphertext *x, XeheCiphertext *d) { return xehe_evaluator_relinearize(ev_.get(), x, k, d); });
    }
    void relinearize_inplace(seal::Ciphertext &a, const seal::RelinKeys &keys) { relinearize(a, keys, a); }
    void rescale_to_next(const seal::Ciphertext &a, seal::Ciphertext &destination) {
        unary(xehe_evaluator_rescale_to_next, a, destination, "rescale_to_next");
    }
    void rescale_to_next_inplace(seal::Ciphertext &a) { rescale_to_next(a, a); }
    void mod_switch_to_next(const seal::Ciphertext &a, seal::Ciphertext &destination) {
        unary(xehe_evaluator_mod_switch_to_next, a, destination, "mod_switch_to_next");
    }
    void mod_switch_to_next_inplace(seal::Ciphertext &a) { mod_switch_to_next(a, a); }
    void rescale_to(const seal::Ciphertext &a, seal::parms_id_type id, seal::Ciphertext &destination) {
        std::lock_guard<std::mutex> lock(mu_);
        run(a, destination, "rescale_to", [&](XeheCiphertext *x, XeheCiphertext *d) {
            return xehe_evaluator_rescale_to(ev_.get(), x, id.data(), d);
        });
    }
    void rescale_to_inplace(seal::Ciphertext &a, seal::parms_id_type id) { rescale_to(a, id, a); }
    void mod_switch_to(const seal::Ciphertext &a, seal::parms_id_type id, seal::Ciphertext &destination) {
        std::lock_guard<std::mutex> lock(mu_);
        run(a, destination, "mod_switch_to", [&](XeheCiphertext *x, XeheCiphertext *d) {
            return xehe_evaluator_mod_switch_to(ev_.get(), x, id.data(), d);
        });
    }
    void mod_switch_to_inplace(seal::Ciphertext &a, seal::parms_id_type id) { mod_switch_to(a, id, a); }
    void transform_to_ntt(const seal::Ciphertext &a, seal::Ciphertext &destination) {
        unary(xehe_evaluator_transform_to_ntt, a, destination, "transform_to_ntt");
    }
    void transform_from_ntt(const seal::Ciphertext &a, seal::Ciphertext &destination) {
        unary(xehe_evaluator_transform_from_ntt, a, destination, "transform_from_ntt");
    }
    void transform_to_ntt_inplace(seal::Ciphertext &a) { transform_to_ntt(a, a); }
    void transform_from_ntt_inplace(seal::Ciphertext &a) { transform_from_ntt(a, a); }
    void rotate_vector(const seal::Ciphertext &a, int steps, const seal::GaloisKeys &keys,
                       seal::Ciphertext &destination) {
        std::lock_guard<std::mutex> lock(mu_);
        XeheGaloisKeys *k = galois_keys(keys);
        run(a, destination, "rotate_vector", [&](XeheCiphertext *x, XeheCiphertext *d) {
            return xehe_evaluator_rotate_vector(ev_.get(), x, steps, k, d);
        });
    }
    void rotate_vector_inplace(seal::Ciphertext &a, int steps, const seal::GaloisKeys &keys) {
        rotate_vector(a, steps, keys, a);
    }
    void complex_conjugate(const seal::Ciphertext &a, const seal::GaloisKeys &keys, seal::Ciphertext &destination) {
        std::lock_guard<std::mutex> lock(mu_);
        XeheGaloisKeys *k = galois_keys(keys);
        run(a, destination, "complex_conjugate", [&](XeheCiphertext *x, XeheCiphertext *d) {
            return xehe_evaluator_complex_conjugate(ev_.get(), x, k, d);
        });
    }
    void complex_conjugate_inplace(seal::Ciphertext &a, const seal::GaloisKeys &keys) {
        complex_conjugate(a, keys, a);
    }
    void apply_galois(const seal::Ciphertext &a, std::uint32_t galois_elt, const seal::GaloisKeys &keys,
                      seal::Ciphertext &destination) {
        std::lock_guard<std::mutex> lock(mu_);
        XeheGaloisKeys *k = galois_keys(keys);
        run(a, destination, "apply_galois", [&](XeheCiphertext *x, XeheCiphertext *d) {
            return xehe_evaluator_apply_galois(ev_.get(), x, galois_elt, k, d);
        });
    }

private:
    friend class Bootstrapper;

    /// A cached ciphertext: the xehe copy and what the SEAL object held when last synchronized.
    struct Entry {
        detail::Ct handle;
        std::uint64_t seal_fingerprint = 0;
        bool stale = false;   // the SEAL object is older than the xehe value
        bool marked = false;  // gpu() was asked for
    };
    struct PlainEntry {
        detail::Pt handle;
        std::uint64_t seal_fingerprint = 0;
    };
    template <class T, XeheStatus (*Destroy)(T *)>
    struct KeyEntry {
        detail::Handle<T, Destroy> handle;
        seal::parms_id_type parms_id{};
        std::size_t size = 0;
    };

    bool mark(Entry &e) {
        if (xehe_ciphertext_gpu(e.handle.get()) == XEHE_STATUS_OK) return true;
        gpu_error_ = xehe_last_error();
        return false;
    }

    /// The entry of an operand, (re)loaded from SEAL when new or changed.
    Entry &operand(const seal::Ciphertext &ct) {
        std::uint64_t fp = detail::fingerprint(ct);
        Entry &e = cts_[&ct];
        if (e.handle.get() && fp == e.seal_fingerprint) return e;
        if (e.handle.get() && e.stale) {
            throw std::logic_error(
                "xehe seal_plugin: a SEAL ciphertext with a newer value in xehe was modified "
                "outside the plugin (call download() before touching it, or forget() it)");
        }
        auto bytes = detail::seal_bytes(ct);
        detail::check(xehe_ciphertext_load(ctx_.get(), detail::u8(bytes), bytes.size(), e.handle.out()),
                      "xehe_ciphertext_load");
        e.seal_fingerprint = fp;
        e.stale = false;
        if (e.marked) mark(e);
        return e;
    }

    /// The entry of a destination: kept if present (its SEAL content is about to be stale).
    Entry &destination_entry(const seal::Ciphertext &ct) {
        Entry &e = cts_[&ct];
        if (!e.handle.get()) {
            detail::check(xehe_ciphertext_create(ctx_.get(), e.handle.out()), "xehe_ciphertext_create");
            e.seal_fingerprint = detail::fingerprint(ct);
        }
        return e;
    }

    XehePlaintext *plaintext(const seal::Plaintext &pt) {
        std::uint64_t fp = detail::fingerprint(pt);
        PlainEntry &e = pts_[&pt];
        if (!e.handle.get() || fp != e.seal_fingerprint) {
            auto bytes = detail::seal_bytes(pt);
            detail::check(xehe_plaintext_load(ctx_.get(), detail::u8(bytes), bytes.size(), e.handle.out()),
                          "xehe_plaintext_load");
            e.seal_fingerprint = fp;
        }
        return e.handle.get();
    }

    template <class Map, class S, class Load>
    auto key(Map &map, const S &keys, Load load, const char *what) -> decltype(map[&keys].handle.get()) {
        auto &e = map[&keys];
        if (!e.handle.get() || e.parms_id != keys.parms_id() || e.size != keys.size()) {
            auto bytes = detail::seal_bytes(keys);
            detail::check(load(ctx_.get(), detail::u8(bytes), bytes.size(), e.handle.out()), what);
            e.parms_id = keys.parms_id();
            e.size = keys.size();
        }
        return e.handle.get();
    }
    XeheRelinKeys *relin_keys(const seal::RelinKeys &k) {
        return key(rks_, k, xehe_relin_keys_load, "xehe_relin_keys_load");
    }
    XeheGaloisKeys *galois_keys(const seal::GaloisKeys &k) {
        return key(gks_, k, xehe_galois_keys_load, "xehe_galois_keys_load");
    }

    /// Run `op(operand handle, destination handle)`; the caller holds `mu_`.
    template <class Op>
    void run(const seal::Ciphertext &a, seal::Ciphertext &destination, const char *what, Op op) {
        XeheCiphertext *x = operand(a).handle.get();
        Entry &d = destination_entry(destination);
        detail::check(op(x, d.handle.get()), what);
        d.stale = true;
    }

    void unary(XeheStatus (*f)(const XeheEvaluator *, const XeheCiphertext *, XeheCiphertext *),
               const seal::Ciphertext &a, seal::Ciphertext &destination, const char *what) {
        std::lock_guard<std::mutex> lock(mu_);
        run(a, destination, what, [&](XeheCiphertext *x, XeheCiphertext *d) { return f(ev_.get(), x, d); });
    }

    void binary(XeheStatus (*f)(const XeheEvaluator *, const XeheCiphertext *, const XeheCiphertext *,
                                XeheCiphertext *),
                const seal::Ciphertext &a, const seal::Ciphertext &b, seal::Ciphertext &destination,
                const char *what) {
        std::lock_guard<std::mutex> lock(mu_);
        XeheCiphertext *y = operand(b).handle.get();
        run(a, destination, what, [&](XeheCiphertext *x, XeheCiphertext *d) { return f(ev_.get(), x, y, d); });
    }

    void with_plain(XeheStatus (*f)(const XeheEvaluator *, const XeheCiphertext *, const XehePlaintext *,
                                    XeheCiphertext *),
                    const seal::Ciphertext &a, const seal::Plaintext &p, seal::Ciphertext &destination,
                    const char *what) {
        std::lock_guard<std::mutex> lock(mu_);
        XehePlaintext *q = plaintext(p);
        run(a, destination, what, [&](XeheCiphertext *x, XeheCiphertext *d) { return f(ev_.get(), x, q, d); });
    }

    /// Bootstrap `a` into `destination` with `b` and write the result back to SEAL at once; the
    /// destination inherits the operand's gpu() mark (its device copy stays cached).
    void bootstrap_with(XeheBootstrapper *b, const seal::Ciphertext &a, seal::Ciphertext &destination) {
        std::lock_guard<std::mutex> lock(mu_);
        Entry &src = operand(a);
        bool marked = src.marked;
        XeheCiphertext *x = src.handle.get();
        Entry &d = destination_entry(destination);
        detail::check(xehe_bootstrapper_bootstrap(b, x, d.handle.get()), "xehe_bootstrapper_bootstrap");
        d.stale = true;
        d.marked = d.marked || marked;
        write_back(destination, d);
    }

    /// xehe -> SEAL: save (downloading a GPU value) with headers of this SEAL's version and load
    /// with SEAL's checks.
    void write_back(seal::Ciphertext &ct, Entry &e) {
        XeheCiphertext *h = e.handle.get();
        detail::check(xehe_ciphertext_download(h), "xehe_ciphertext_download");
        auto bytes = detail::xehe_bytes(
            [h](std::uint8_t *buf, std::size_t cap, std::size_t *written) {
                // Headers of the SEAL version compiled against (SEAL 4.0 reads only 4.0).
                return xehe_ciphertext_save_as(h, XEHE_COMPR_NONE, SEAL_VERSION_MAJOR, SEAL_VERSION_MINOR, buf,
                                               cap, written);
            },
            "xehe_ciphertext_save");
        ct.load(seal_context_, bytes.data(), bytes.size());
        e.seal_fingerprint = detail::fingerprint(ct);
        e.stale = false;
    }

    void info(const seal::Ciphertext &ct, std::uint64_t *id, double *scale, std::size_t *size) {
        std::lock_guard<std::mutex> lock(mu_);
        auto it = cts_.find(&ct);
        if (it == cts_.end() || !it->second.stale) {
            if (id) std::memcpy(id, ct.parms_id().data(), 4 * sizeof(std::uint64_t));
            if (scale) *scale = ct.scale();
            if (size) *size = ct.size();
            return;
        }
        detail::check(xehe_ciphertext_info(it->second.handle.get(), id, scale, size), "xehe_ciphertext_info");
    }

    seal::SEALContext seal_context_;
    detail::Handle<XeheContext, xehe_context_destroy> ctx_;
    detail::Handle<XeheEvaluator, xehe_evaluator_destroy> ev_;
    std::mutex mu_;
    std::unordered_map<const seal::Ciphertext *, Entry> cts_;
    std::unordered_map<const seal::Plaintext *, PlainEntry> pts_;
    std::unordered_map<const seal::RelinKeys *, KeyEntry<XeheRelinKeys, xehe_relin_keys_destroy>> rks_;
    std::unordered_map<const seal::GaloisKeys *, KeyEntry<XeheGaloisKeys, xehe_galois_keys_destroy>> gks_;
    std::string gpu_error_;
};

/// A bootstrapping preset's parameters (C ABI xehe_bootstrapping_preset), for SEAL's
/// CoeffModulus::Create(poly_modulus_degree, bit_sizes) with sec_level_type::none.
struct BootstrappingPreset {
    std::size_t poly_modulus_degree = 0;
    std::vector<int> bit_sizes;  // bottom to top, SEAL's special prime last
    bool insecure = false;       // test sizes: no security at all
};

/// The preset named `name`: "n16" (N16-dense, production) or "n12" (N12-insecure, tests).
inline BootstrappingPreset bootstrapping_preset(const std::string &name) {
    std::uint32_t bits[64];
    std::size_t count = 0;
    std::uint64_t n = 0;
    bool insecure = false;
    detail::check(xehe_bootstrapping_preset(name.c_str(), &n, &insecure, bits, 64, &count),
                  "xehe_bootstrapping_preset");
    BootstrappingPreset p;
    p.poly_modulus_degree = static_cast<std::size_t>(n);
    p.bit_sizes.assign(bits, bits + count);
    p.insecure = insecure;
    return p;
}

/// CKKS bootstrapping of SEAL ciphertexts through xehe (C ABI `xehe_bootstrapper_*`, Rust
/// `xehe::circuits::bootstrapping::Bootstrapper`), bound to a plugin Evaluator (its context and
/// its cache of SEAL objects). The evaluator must outlive the bootstrapper.
///
/// Precision: the same for every input whose slots satisfy |z| <= 1, whatever its distribution
/// (EvalMod's arcsine correction; docs/guide/bootstrapping.md has the table). Bits, mean / min
/// over the slots of -log2 |error|, N16-dense (10 user levels) on an H200, bit-identical to the
/// CPU backend:
///
///   | slots                               | bits        |
///   | uniform in [-1, 1] (zero mean)      | 26.9 / 23.4 |
///   | uniform in [0, 1] (pixels, ReLU)    | 26.9 / 23.4 |
///   | uniform in [0.5, 1]                 | 26.8 / 23.3 |
///   | constant 1 or -1                    | 26.8 / 23.3 |
///   | constant i (imaginary part)         | 26.8 / 23.4 |
///   | Fashion-MNIST pixels / 255          | 26.9 / 23.6 |
///
/// Inputs beyond |z| <= 1: multiply by 1/B first and by B after (B a bound on |z|).
class Bootstrapper {
public:
    /// Generate the bootstrapping keys from the application's SEAL secret key, for the preset
    /// whose primes are the context's (CPU work: about a second at N = 2^12, minutes at
    /// N = 2^16). The key is serialized with SEAL and handed to xehe; the serialized copy is
    /// wiped. Throws Error (XEHE_STATUS_INVALID_PARAMETERS when no preset has the context's
    /// primes, XEHE_STATUS_NOT_VALID_FOR_PARAMS for a key of other parameters).
    Bootstrapper(Evaluator &evaluator, const seal::SecretKey &secret_key) : ev_(evaluator) {
        auto bytes = detail::seal_bytes(secret_key);
        detail::Handle<XeheBootstrappingKeys, xehe_bootstrapping_keys_destroy> keys;
        XeheStatus s = xehe_bootstrapping_keys_create(ev_.ctx_.get(), detail::u8(bytes), bytes.size(), keys.out());
        volatile seal::seal_byte *p = bytes.data();
        for (std::size_t i = 0; i < bytes.size(); i++) p[i] = seal::seal_byte{};
        detail::check(s, "xehe_bootstrapping_keys_create");
        make(keys.get());
    }

    /// Load the keys from a file written by `xehe keygen bootstrap` (or save_keys()). Throws
    /// Error (XEHE_STATUS_IO, XEHE_STATUS_MALFORMED, XEHE_STATUS_NOT_VALID_FOR_PARAMS).
    Bootstrapper(Evaluator &evaluator, const std::string &keys_path) : ev_(evaluator) {
        detail::Handle<XeheBootstrappingKeys, xehe_bootstrapping_keys_destroy> keys;
        detail::check(xehe_bootstrapping_keys_load_file(ev_.ctx_.get(), keys_path.c_str(), keys.out()),
                      "xehe_bootstrapping_keys_load_file");
        make(keys.get());
    }

    /// Save the keys (xehe's format) to load them next time with the path constructor.
    /// `compr_mode`: XEHE_COMPR_NONE, XEHE_COMPR_ZLIB or XEHE_COMPR_ZSTD (xehe's own codecs:
    /// they do not depend on how SEAL was built).
    void save_keys(const std::string &path, std::int32_t compr_mode = XEHE_COMPR_NONE) const {
        detail::check(xehe_bootstrapper_save_keys_file(boot_.get(), compr_mode, path.c_str()),
                      "xehe_bootstrapper_save_keys_file");
    }

    /// destination = bootstrap(encrypted): the same slots at chain index output_level(), scale
    /// output_scale() (2^40). `encrypted`: size 2 (relinearized), NTT form, any level; at the
    /// last level its scale must be at most max_input_scale(). Runs on the GPU when `encrypted`
    /// is marked (Evaluator::gpu) and a GPU is usable. `destination` is written back at once, so
    /// seal::Evaluator, seal::Decryptor and save() use it directly; `encrypted` is unchanged
    /// (also when an Error is thrown).
    void bootstrap(const seal::Ciphertext &encrypted, seal::Ciphertext &destination) {
        ev_.bootstrap_with(boot_.get(), encrypted, destination);
    }
    void bootstrap_inplace(seal::Ciphertext &encrypted) { bootstrap(encrypted, encrypted); }

    /// Chain index of a bootstrapped result: the levels left before the next bootstrap.
    std::size_t output_level() const {
        std::size_t level = 0;
        detail::check(xehe_bootstrapper_output_level(boot_.get(), &level), "xehe_bootstrapper_output_level");
        return level;
    }
    /// parms_id of a bootstrapped result (to encode plaintexts for it).
    seal::parms_id_type output_parms_id() const {
        seal::parms_id_type id;
        detail::check(xehe_bootstrapper_output_parms_id(boot_.get(), id.data()), "xehe_bootstrapper_output_parms_id");
        return id;
    }
    /// Scale of a bootstrapped result (2^40 for the presets).
    double output_scale() const {
        double s = 0;
        detail::check(xehe_bootstrapper_output_scale(boot_.get(), &s), "xehe_bootstrapper_output_scale");
        return s;
    }
    /// Largest scale of an input at the last level (chain index 0).
    double max_input_scale() const {
        double s = 0;
        detail::check(xehe_bootstrapper_max_input_scale(boot_.get(), &s), "xehe_bootstrapper_max_input_scale");
        return s;
    }

private:
    void make(XeheBootstrappingKeys *keys) {
        // The bootstrapper copies the keys; the caller's handle is destroyed right after.
        detail::check(xehe_bootstrapper_create(ev_.ctx_.get(), keys, boot_.out()), "xehe_bootstrapper_create");
    }

    Evaluator &ev_;
    detail::Handle<XeheBootstrapper, xehe_bootstrapper_destroy> boot_;
};

}  // namespace seal_plugin
}  // namespace xehe

#endif  // XEHE_SEAL_PLUGIN_HPP
