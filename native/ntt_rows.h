/*
 * ntt_rows.h — where a list's primes lie in the root tables (src/device/gpu/ntt.rs
 * DeviceNttTables). A list of k primes has its own Moduli table of 2k words: the primes, then
 * each prime's row in the root tables (Roots, RootsQ, InvRoots, InvRootsQ, the four-step
 * twists), which the lists of one device share: the levels of a chain, the special primes, a
 * level's {P, q_last} and the key base all name the same primes again, and one copy of each
 * prime's N-word tables serves them all. NTT_ROW(p) needs `moduli`, `k` and `log_n` in scope.
 */
#ifndef XEHE_NTT_ROWS_H
#define XEHE_NTT_ROWS_H

#define NTT_ROW(p) ((u64)moduli[k + (p)] << log_n)

#endif /* XEHE_NTT_ROWS_H */
