/*
 * The C example of libxehe (include/xehe.h).
 *
 *   xehe_c_example OUTDIR
 *       Makes CKKS parameters (N = 8192, primes of 60, 40, 40, 60 bits) and keys through the
 *       API, encrypts x and y, computes rotate(rescale(relinearize(x * y)), 1) + x' (x' = x
 *       mod-switched to the same level, its scale set), decrypts and checks the values, saves
 *       the parameters, keys and result to OUTDIR in SEAL's format, loads the result back and
 *       checks the bytes, and shows the error handling.
 *
 *   xehe_c_example OUTDIR PARMS RELIN_KEYS A B
 *       Loads SEAL-format parameters, relinearization keys and two ciphertexts (e.g. written by
 *       SEAL), and writes OUTDIR/add.bin, OUTDIR/multiply.bin and OUTDIR/relinearize.bin
 *       (relinearize(multiply(A, B))), which equal SEAL's own results byte for byte.
 *
 * Ciphertexts run on the GPU when one is usable (xehe_device_available), else on the CPU.
 * Exit status 0 on success; errors print the status name and xehe_last_error().
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <xehe.h>

#define CHECK(call)                                                                         \
    do {                                                                                    \
        XeheStatus s_ = (call);                                                             \
        if (s_ != XEHE_STATUS_OK) {                                                         \
            fprintf(stderr, "%s:%d: %s failed: %s: %s\n", __FILE__, __LINE__, #call,        \
                    xehe_status_name((int32_t)s_), xehe_last_error());                      \
            exit(1);                                                                        \
        }                                                                                   \
    } while (0)

static void path_join(char *out, size_t cap, const char *dir, const char *name) {
    snprintf(out, cap, "%s/%s", dir, name);
}

/* Save a ciphertext to a malloc'd buffer (two calls: size, then bytes). */
static unsigned char *save_ct(const XeheCiphertext *ct, size_t *size) {
    size_t needed = 0;
    XeheStatus s = xehe_ciphertext_save(ct, XEHE_COMPR_NONE, NULL, 0, &needed);
    if (s != XEHE_STATUS_BUFFER_TOO_SMALL) {
        fprintf(stderr, "size query: %s\n", xehe_status_name((int32_t)s));
        exit(1);
    }
    unsigned char *buf = malloc(needed);
    if (!buf) exit(1);
    CHECK(xehe_ciphertext_save(ct, XEHE_COMPR_NONE, buf, needed, size));
    return buf;
}

static void maybe_gpu(XeheCiphertext *ct, int gpu) {
    if (gpu) CHECK(xehe_ciphertext_gpu(ct));
}

static int from_files(const char *outdir, char **files, int gpu) {
    XeheParms *parms;
    XeheContext *ctx;
    XeheRelinKeys *rk;
    XeheCiphertext *a, *b, *sum, *prod;
    XeheEvaluator *ev;
    char path[4096];
    CHECK(xehe_parms_load_file(files[0], &parms));
    CHECK(xehe_context_create(parms, 128, &ctx));
    CHECK(xehe_relin_keys_load_file(ctx, files[1], &rk));
    CHECK(xehe_ciphertext_load_file(ctx, files[2], &a));
    CHECK(xehe_ciphertext_load_file(ctx, files[3], &b));
    maybe_gpu(a, gpu);
    maybe_gpu(b, gpu);
    CHECK(xehe_evaluator_create(ctx, &ev));
    CHECK(xehe_ciphertext_create(ctx, &sum));
    CHECK(xehe_ciphertext_create(ctx, &prod));
    CHECK(xehe_evaluator_add(ev, a, b, sum));
    CHECK(xehe_evaluator_multiply(ev, a, b, prod));
    path_join(path, sizeof path, outdir, "add.bin");
    CHECK(xehe_ciphertext_save_file(sum, XEHE_COMPR_NONE, path));
    path_join(path, sizeof path, outdir, "multiply.bin");
    CHECK(xehe_ciphertext_save_file(prod, XEHE_COMPR_NONE, path));
    CHECK(xehe_evaluator_relinearize(ev, prod, rk, prod));
    path_join(path, sizeof path, outdir, "relinearize.bin");
    CHECK(xehe_ciphertext_save_file(prod, XEHE_COMPR_NONE, path));
    CHECK(xehe_ciphertext_destroy(prod));
    CHECK(xehe_ciphertext_destroy(sum));
    CHECK(xehe_ciphertext_destroy(b));
    CHECK(xehe_ciphertext_destroy(a));
    CHECK(xehe_evaluator_destroy(ev));
    CHECK(xehe_relin_keys_destroy(rk));
    CHECK(xehe_context_destroy(ctx));
    CHECK(xehe_parms_destroy(parms));
    printf("C example (files): wrote add.bin, multiply.bin, relinearize.bin\n");
    return 0;
}

int main(int argc, char **argv) {
    if (argc != 2 && argc != 6) {
        fprintf(stderr, "usage: %s OUTDIR [PARMS RELIN_KEYS A B]\n", argv[0]);
        return 2;
    }
    const char *outdir = argv[1];
    bool gpu = false;
    CHECK(xehe_device_available(&gpu));
    printf("libxehe %s, GPU: %s%s\n", xehe_version(), gpu ? "yes" : "no (",
           gpu ? "" : xehe_last_error());
    if (!gpu) printf(")\n");
    if (argc == 6) return from_files(outdir, argv + 2, gpu);

    const uint32_t bits[] = {60, 40, 40, 60};
    const double scale = pow(2.0, 40);
    XeheParms *parms;
    XeheContext *ctx;
    XeheKeyGenerator *keygen;
    XeheSecretKey *sk;
    XehePublicKey *pk;
    XeheRelinKeys *rk;
    XeheGaloisKeys *gk;
    XeheEncoder *encoder;
    XeheEncryptor *encryptor;
    XeheDecryptor *decryptor;
    XeheEvaluator *ev;
    CHECK(xehe_parms_create_ckks(8192, bits, 4, &parms));
    CHECK(xehe_context_create(parms, 128, &ctx));
    CHECK(xehe_keygen_create(ctx, &keygen));
    CHECK(xehe_keygen_secret_key(keygen, &sk));
    CHECK(xehe_keygen_create_public_key(keygen, &pk));
    CHECK(xehe_keygen_create_relin_keys(keygen, &rk));
    const int32_t steps[] = {1};
    CHECK(xehe_keygen_create_galois_keys(keygen, steps, 1, &gk));
    CHECK(xehe_encoder_create(ctx, &encoder));
    CHECK(xehe_encryptor_create(ctx, pk, NULL, &encryptor));
    CHECK(xehe_decryptor_create(ctx, sk, &decryptor));
    CHECK(xehe_evaluator_create(ctx, &ev));

    size_t slots = 0;
    CHECK(xehe_encoder_slot_count(encoder, &slots));
    double *x = malloc(slots * sizeof(double)), *y = malloc(slots * sizeof(double));
    double *out = malloc(slots * sizeof(double));
    if (!x || !y || !out) return 1;
    for (size_t i = 0; i < slots; i++) {
        x[i] = (double)i / (double)slots;
        y[i] = 1.0 - x[i];
    }
    XehePlaintext *pt;
    XeheCiphertext *cx, *cy, *r, *cx_low;
    CHECK(xehe_plaintext_create(ctx, &pt));
    CHECK(xehe_ciphertext_create(ctx, &cx));
    CHECK(xehe_ciphertext_create(ctx, &cy));
    CHECK(xehe_ciphertext_create(ctx, &r));
    CHECK(xehe_ciphertext_create(ctx, &cx_low));
    CHECK(xehe_encoder_encode(encoder, x, slots, NULL, scale, pt));
    CHECK(xehe_encryptor_encrypt(encryptor, pt, cx));
    CHECK(xehe_encoder_encode(encoder, y, slots, NULL, scale, pt));
    CHECK(xehe_encryptor_encrypt(encryptor, pt, cy));
    maybe_gpu(cx, gpu);
    maybe_gpu(cy, gpu);

    /* r = rotate(rescale(relin(x * y)), 1) + x at the same level and scale. */
    CHECK(xehe_evaluator_multiply(ev, cx, cy, r));
    CHECK(xehe_evaluator_relinearize(ev, r, rk, r));
    CHECK(xehe_evaluator_rescale_to_next(ev, r, r));
    CHECK(xehe_evaluator_rotate_vector(ev, r, 1, gk, r));
    uint64_t level[4];
    double r_scale = 0;
    CHECK(xehe_ciphertext_info(r, level, &r_scale, NULL));
    CHECK(xehe_evaluator_mod_switch_to(ev, cx, level, cx_low));
    CHECK(xehe_ciphertext_set_scale(cx_low, r_scale));
    CHECK(xehe_evaluator_add(ev, r, cx_low, r));

    CHECK(xehe_decryptor_decrypt(decryptor, r, pt));
    size_t n = 0;
    CHECK(xehe_encoder_decode(encoder, pt, out, slots, &n));
    double max_err = 0;
    for (size_t i = 0; i < slots; i++) {
        size_t j = (i + 1) % slots;
        double want = x[j] * y[j] + x[i];
        double err = fabs(out[i] - want);
        if (err > max_err) max_err = err;
    }
    printf("max error %.3g over %zu slots\n", max_err, n);
    if (!(max_err < 1e-4)) {
        fprintf(stderr, "error too large\n");
        return 1;
    }

    /* Save in SEAL's format; load the result back and compare the bytes. */
    char path[4096];
    path_join(path, sizeof path, outdir, "parms.bin");
    CHECK(xehe_parms_save_file(parms, XEHE_COMPR_NONE, path));
    path_join(path, sizeof path, outdir, "secret_key.bin");
    CHECK(xehe_secret_key_save_file(sk, XEHE_COMPR_NONE, path));
    path_join(path, sizeof path, outdir, "relin_keys.bin");
    CHECK(xehe_relin_keys_save_file(rk, XEHE_COMPR_ZSTD, path));
    path_join(path, sizeof path, outdir, "x.bin");
    CHECK(xehe_ciphertext_save_file(cx, XEHE_COMPR_NONE, path));
    path_join(path, sizeof path, outdir, "y.bin");
    CHECK(xehe_ciphertext_save_file(cy, XEHE_COMPR_NONE, path));
    path_join(path, sizeof path, outdir, "result.bin");
    CHECK(xehe_ciphertext_save_file(r, XEHE_COMPR_NONE, path));
    XeheCiphertext *back;
    CHECK(xehe_ciphertext_load_file(ctx, path, &back));
    size_t n1, n2;
    unsigned char *b1 = save_ct(r, &n1), *b2 = save_ct(back, &n2);
    if (n1 != n2 || memcmp(b1, b2, n1) != 0) {
        fprintf(stderr, "result.bin does not load back to the same bytes\n");
        return 1;
    }

    /* Error handling: a malformed buffer, a destroyed handle. */
    XeheCiphertext *bad = NULL;
    XeheStatus s = xehe_ciphertext_load(ctx, b1, n1 / 2, &bad);
    printf("truncated load: %s: %s\n", xehe_status_name((int32_t)s), xehe_last_error());
    if (s != XEHE_STATUS_MALFORMED || bad != NULL) return 1;
    CHECK(xehe_ciphertext_destroy(back));
    s = xehe_evaluator_negate(ev, back, r);
    printf("destroyed handle: %s: %s\n", xehe_status_name((int32_t)s), xehe_last_error());
    if (s != XEHE_STATUS_INVALID_HANDLE) return 1;

    free(b1);
    free(b2);
    free(x);
    free(y);
    free(out);
    CHECK(xehe_ciphertext_destroy(cx_low));
    CHECK(xehe_ciphertext_destroy(r));
    CHECK(xehe_ciphertext_destroy(cy));
    CHECK(xehe_ciphertext_destroy(cx));
    CHECK(xehe_plaintext_destroy(pt));
    CHECK(xehe_evaluator_destroy(ev));
    CHECK(xehe_decryptor_destroy(decryptor));
    CHECK(xehe_encryptor_destroy(encryptor));
    CHECK(xehe_encoder_destroy(encoder));
    CHECK(xehe_galois_keys_destroy(gk));
    CHECK(xehe_relin_keys_destroy(rk));
    CHECK(xehe_public_key_destroy(pk));
    CHECK(xehe_secret_key_destroy(sk));
    CHECK(xehe_keygen_destroy(keygen));
    CHECK(xehe_context_destroy(ctx));
    CHECK(xehe_parms_destroy(parms));
    if (xehe_live_handles() != 0) {
        fprintf(stderr, "%zu handles leaked\n", xehe_live_handles());
        return 1;
    }
    printf("C example: OK\n");
    return 0;
}
