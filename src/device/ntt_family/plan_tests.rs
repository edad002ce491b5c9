//! Tests of the family's launch plans through [`NttPlan`](crate::device::ntt_plan::NttPlan).
use super::plan::*;
use crate::device::ntt_plan::{NttDirection, NttLaunch, NttPlan, NttVariant, ScalarArg};

/// Kernels and scalars of a plan's launches.
fn kernels_of(l: &[NttLaunch]) -> Vec<(&'static str, u32)> {
    l.iter()
        .map(|l| match l.scalars[2] {
            ScalarArg::U32(v) => (l.kernel, v),
            ScalarArg::U64(_) => (l.kernel, u32::MAX),
        })
        .collect()
}

#[test]
fn radix8_reg_mixed_radix_geometry() {
    assert_eq!(global_passes(0), Vec::<u32>::new());
    assert_eq!(global_passes(2), [2]);
    assert_eq!(global_passes(4), [4]);
    assert_eq!(global_passes(5), [3, 2]);
    assert_eq!(global_passes(9), [3, 3, 3]);
    let fwd = |log_n| {
        let p = NttPlan::new(log_n, 2, NttVariant::Radix8Reg).unwrap();
        kernels_of(&p.launches(NttDirection::Forward, 4))
    };
    let inv = |log_n| {
        let p = NttPlan::new(log_n, 2, NttVariant::Radix8Reg).unwrap();
        kernels_of(&p.launches(NttDirection::Inverse, 4))
    };
    // 2^14: one radix-4 pass (rounds 0–1), not two radix-2 launches.
    assert_eq!(fwd(14), [("ntt_fwd_radix4_u64", 0), ("ntt_fwd_reg_u64", 2)]);
    assert_eq!(inv(14), [("ntt_inv_slm_u64", 2), ("ntt_inv_radix4_u64", 1)]);
    // 2^15: one radix-8 pass; 2^16: one radix-16 pass.
    assert_eq!(fwd(15), [("ntt_fwd_radix8_u64", 0), ("ntt_fwd_reg_u64", 3)]);
    assert_eq!(fwd(16), [("ntt_fwd_radix16_u64", 0), ("ntt_fwd_reg_u64", 4)]);
    assert_eq!(inv(16), [("ntt_inv_slm_u64", 4), ("ntt_inv_radix16_u64", 3)]);
    // 2^17: radix 8 then radix 4 (inverse: radix 4 down from 2^4 blocks, then radix 8).
    assert_eq!(
        fwd(17),
        [
            ("ntt_fwd_radix8_u64", 0),
            ("ntt_fwd_radix4_u64", 3),
            ("ntt_fwd_reg_u64", 5)
        ]
    );
    assert_eq!(
        inv(17),
        [
            ("ntt_inv_slm_u64", 5),
            ("ntt_inv_radix4_u64", 4),
            ("ntt_inv_radix8_u64", 2)
        ]
    );
    // The register kernel: one group per 4096-word tile, 256 work-items, radix-8 mode.
    let p = NttPlan::new(15, 3, NttVariant::Radix8Reg).unwrap();
    let l = p.launches(NttDirection::Forward, 6);
    assert_eq!((l[1].groups, l[1].local, l[1].scalars[3]), (48, 256, ScalarArg::U32(3)));
    assert_eq!((l[0].groups, l[0].local), (96, 256));
    assert!(l.iter().all(|l| l.row_offset == 0));
}

#[test]
fn radix8_l2_chunks_rows_by_prime_cycles() {
    // Default chunk: 16 MiB of rows = 64 rows of 2^15 words.
    let p = NttPlan::new(15, 3, NttVariant::Radix8L2).unwrap();
    assert_eq!(l2_chunk_rows(15), 64);
    // 10 rows in chunks of 4 rows, rounded down to whole cycles of 3 primes: 3,3,3,1.
    let p = p.with_chunk_rows(Some(4));
    let l = p.launches(NttDirection::Forward, 10);
    let offs: Vec<_> = l.iter().map(|l| (l.kernel, l.row_offset, l.groups)).collect();
    assert_eq!(
        offs,
        [
            ("ntt_fwd_radix8_u64", 0, 48),
            ("ntt_fwd_reg_u64", 0, 24),
            ("ntt_fwd_radix8_u64", 3, 48),
            ("ntt_fwd_reg_u64", 3, 24),
            ("ntt_fwd_radix8_u64", 6, 48),
            ("ntt_fwd_reg_u64", 6, 24),
            ("ntt_fwd_radix8_u64", 9, 16),
            ("ntt_fwd_reg_u64", 9, 8),
        ]
    );
    // Grouped rows (2 instances per prime): cycles of 6 rows.
    let l = p.with_chunk_rows(Some(7)).launches_grouped(NttDirection::Inverse, 12, 2);
    let offs: Vec<_> = l.iter().map(|l| (l.kernel, l.row_offset)).collect();
    assert_eq!(
        offs,
        [
            ("ntt_inv_slm_u64", 0),
            ("ntt_inv_radix8_u64", 0),
            ("ntt_inv_slm_u64", 6),
            ("ntt_inv_radix8_u64", 6),
        ]
    );
    // Rows within one chunk: the unchunked plan.
    let one = p.launches(NttDirection::Forward, 3);
    assert_eq!(one, NttPlan::new(15, 3, NttVariant::Radix8Reg).unwrap().launches(NttDirection::Forward, 3));
}

#[test]
fn names_round_trip_and_shuffle_modes() {
    for v in NttVariant::ALL {
        assert_eq!(NttVariant::from_name(v.name()), Some(v));
    }
    // SIMD(8,8): 4 shuffle/register rounds, 2 words per work-item; SIMD(32,8): 6 rounds, 8.
    let p = NttPlan::new(12, 1, NttVariant::Shuffle8).unwrap();
    let l = p.launches(NttDirection::Forward, 1);
    assert_eq!(l.last().unwrap().scalars[3], ScalarArg::U32(1 | 4 << 8));
    assert_eq!(l.last().unwrap().local, 256);
    let p = NttPlan::new(12, 1, NttVariant::Shuffle32).unwrap();
    let l = p.launches(NttDirection::Forward, 1);
    assert_eq!(l.last().unwrap().scalars[3], ScalarArg::U32(1 | 6 << 8));
    assert_eq!(l.last().unwrap().local, 256);
    // Tiles under 256 words: no shuffle rounds.
    let p = NttPlan::new(7, 1, NttVariant::Shuffle8).unwrap();
    assert_eq!(
        p.launches(NttDirection::Forward, 1)[0].scalars[3],
        ScalarArg::U32(1)
    );
}

#[test]
fn four_step_and_single_block() {
    assert_eq!(four_step_split(16), (4, 12));
    assert_eq!(four_step_split(10), (1, 9));
    let p = NttPlan::new(16, 2, NttVariant::FourStep).unwrap();
    let k: Vec<_> = p
        .launches(NttDirection::Inverse, 4)
        .iter()
        .map(|l| (l.kernel, l.groups, l.tables.len()))
        .collect();
    assert_eq!(
        k,
        [("ntt_inv_rows_u64", 64, 9), ("ntt_inv_cols_u64", 64, 9)]
    );
    assert!(NttPlan::new(11, 1, NttVariant::SingleBlock).is_ok());
    let e = NttPlan::new(12, 1, NttVariant::SingleBlock).unwrap_err();
    assert!(e.to_string().contains("single-block"), "{e}");
    let l = NttPlan::new(8, 1, NttVariant::SingleBlock)
        .unwrap()
        .launches(NttDirection::Forward, 3);
    assert_eq!((l.len(), l[0].groups, l[0].local), (1, 3, 128));
}
