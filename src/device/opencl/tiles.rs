//! Sub-devices as queues (paper §III-H, Listing 8: one in-order queue per tile of a multi-tile
//! GPU, all in one context so the tiles share the read-only data).
//!
//! A device is split with `clCreateSubDevices`: by affinity domain with
//! `CL_DEVICE_AFFINITY_DOMAIN_NEXT_PARTITIONABLE` where the device supports it (Intel's
//! compute runtime exposes the tiles of a multi-tile GPU this way when it runs with
//! `ZE_FLAT_DEVICE_HIERARCHY=COMPOSITE`; in the default `FLAT` mode every tile already is a
//! root device of its own), else `CL_DEVICE_PARTITION_EQUALLY` (pocl's CPU device: compute
//! units split evenly). A device that supports neither opens whole, as one tile.
//!
//! Design: one [`OpenClDevice`] holds one context containing all the sub-devices of the root
//! device. Programs are built once for every sub-device, the read-only data (tables, keys) is
//! uploaded once and used by every tile's queue, and each [`ClQueue`] is created on one
//! sub-device with its own memcache. Work on different tile queues must be memory-independent
//! (separate computation graphs), as in the paper.

use super::{dev_err, env_device_index, ClQueue, OpenClDevice};
use crate::{Error, Result};
use opencl3::device::{
    create_sub_devices, release_device, Device, CL_DEVICE_AFFINITY_DOMAIN_NEXT_PARTITIONABLE,
    CL_DEVICE_PARTITION_BY_AFFINITY_DOMAIN, CL_DEVICE_PARTITION_EQUALLY,
};
use opencl3::error_codes::CL_DEVICE_PARTITION_FAILED;
use opencl3::types::{cl_device_id, cl_device_partition_property};
use std::sync::Arc;

/// `CL_DEVICE_VENDOR_ID` of Intel devices (also reported by pocl's CPU device on x86, so the
/// device type must be checked too).
pub const INTEL_VENDOR_ID: u32 = 0x8086;

/// How a device was split into the tiles its queues run on.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Partition {
    /// Not split: one tile, the root device.
    None,
    /// `CL_DEVICE_PARTITION_BY_AFFINITY_DOMAIN` with `NEXT_PARTITIONABLE` (the tiles of a
    /// multi-tile Intel GPU).
    AffinityDomain,
    /// `CL_DEVICE_PARTITION_EQUALLY` with this many compute units per sub-device.
    Equally(u32),
}

/// Split `dev` into at most `max` sub-devices (by affinity domain, else equally); the whole
/// device as the only tile when it supports neither or `max` is 1.
///
/// # Errors
/// `Device` on a driver error other than "this device cannot be partitioned that way".
pub fn sub_devices(dev: &Device, max: usize) -> Result<(Partition, Vec<Device>)> {
    let whole = || Ok((Partition::None, vec![*dev]));
    let props = dev
        .partition_properties()
        .map_err(|e| dev_err("partition properties", e))?;
    let limit = dev
        .partition_max_sub_devices()
        .map_err(|e| dev_err("partition limit", e))? as usize;
    if max < 2 || limit < 2 {
        return whole();
    }
    let supports = |p: cl_device_partition_property| props.contains(&p);
    if supports(CL_DEVICE_PARTITION_BY_AFFINITY_DOMAIN) {
        let domains = dev
            .partition_affinity_domain()
            .map_err(|e| dev_err("affinity domains", e))?;
        if domains
            .iter()
            .any(|d| d & CL_DEVICE_AFFINITY_DOMAIN_NEXT_PARTITIONABLE != 0)
        {
            let list = [
                CL_DEVICE_PARTITION_BY_AFFINITY_DOMAIN,
                CL_DEVICE_AFFINITY_DOMAIN_NEXT_PARTITIONABLE as cl_device_partition_property,
                0,
            ];
            if let Some(subs) = partition(dev, &list, max)? {
                return Ok((Partition::AffinityDomain, subs));
            }
        }
    }
    if supports(CL_DEVICE_PARTITION_EQUALLY) {
        let units = dev
            .max_compute_units()
            .map_err(|e| dev_err("compute units", e))? as usize;
        let parts = max.min(limit).min(units);
        if parts >= 2 {
            let each = (units / parts) as u32;
            let list = [
                CL_DEVICE_PARTITION_EQUALLY,
                each as cl_device_partition_property,
                0,
            ];
            if let Some(subs) = partition(dev, &list, max)? {
                return Ok((Partition::Equally(each), subs));
            }
        }
    }
    whole()
}

/// `clCreateSubDevices(dev, list)`, keeping at most `max` of them (the rest released);
/// `None` when the device cannot be split that way (`CL_DEVICE_PARTITION_FAILED`: e.g. a
/// single-tile GPU has only one affinity domain) or yields fewer than two.
fn partition(
    dev: &Device,
    list: &[cl_device_partition_property],
    max: usize,
) -> Result<Option<Vec<Device>>> {
    let mut ids = match create_sub_devices(dev.id(), list) {
        Ok(ids) => ids,
        Err(e) if e == CL_DEVICE_PARTITION_FAILED => return Ok(None),
        Err(e) => {
            return Err(dev_err(
                "creating sub-devices",
                opencl3::error_codes::ClError(e),
            ))
        }
    };
    let extra = ids.split_off(ids.len().min(max));
    release_ids(&extra);
    if ids.len() < 2 {
        release_ids(&ids);
        return Ok(None);
    }
    Ok(Some(ids.into_iter().map(Device::new).collect()))
}

fn release_ids(ids: &[cl_device_id]) {
    for &id in ids {
        // SAFETY: each id came from clCreateSubDevices and is released once; a failure cannot
        // be acted on (it leaks a handle at worst).
        let _ = unsafe { release_device(id) };
    }
}

/// Release the sub-devices of a partition (nothing for a device opened whole).
pub(super) fn release(partition: Partition, devices: &[Device]) {
    if partition != Partition::None {
        release_ids(&devices.iter().map(|d| d.id()).collect::<Vec<_>>());
    }
}

/// One queue per tile of the OpenCL device `XEHE_DEVICE` names (`opencl:P:D`; else the first
/// GPU, else the first device), at most `max_tiles` of them: the per-tile queues of paper
/// §III-H. Each is an independent in-order queue with its own memcache; submit
/// memory-independent work to each (e.g. one computation graph per thread), as a
/// `Queue::OpenCl` for the evaluator's `.gpu_on`. A device that cannot be partitioned gives
/// one queue.
///
/// # Errors
/// `InvalidArgument` for `max_tiles` = 0 or a malformed `XEHE_DEVICE`; `Device` when no OpenCL
/// device exists or the driver fails.
pub fn tile_queues(max_tiles: usize) -> Result<Vec<Arc<ClQueue>>> {
    let (p, d) = env_device_index()?;
    let dev = OpenClDevice::shared_tiles(p, d, max_tiles)?;
    (0..dev.tile_count())
        .map(|t| Ok(Arc::new(ClQueue::on_tile(dev.clone(), t)?)))
        .collect()
}

/// `Error::InvalidArgument` naming a tile that does not exist (shared by the queue).
pub(super) fn no_tile(tile: usize, count: usize) -> Error {
    Error::InvalidArgument(format!("OpenCL: tile {tile} of {count} does not exist"))
}
