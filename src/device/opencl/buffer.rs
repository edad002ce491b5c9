//! Device buffers of u64 words on an OpenCL device: allocation, upload and download on the
//! device's in-order queue. The buffer is released when dropped (OpenCL keeps it alive until
//! queued commands that use it have finished).

use super::{dev_err, OpenClDevice};
use crate::{Error, Result};
use opencl3::memory::{Buffer, ClMem, CL_MEM_READ_WRITE};
use opencl3::types::{cl_mem, CL_BLOCKING};

/// `len` u64 words of device memory.
#[derive(Debug)]
pub struct ClBuffer {
    buf: Buffer<u64>,
    len: usize,
}

impl ClBuffer {
    /// Allocate `len` words (contents unspecified).
    ///
    /// # Errors
    /// `InvalidArgument` for `len == 0` (OpenCL has no empty buffers); `Device` when the driver
    /// cannot allocate.
    pub fn new(dev: &OpenClDevice, len: usize) -> Result<Self> {
        if len == 0 {
            return Err(Error::InvalidArgument(
                "OpenCL buffers cannot be empty".into(),
            ));
        }
        // SAFETY: no host pointer is passed, so the driver owns the storage.
        let buf = unsafe {
            Buffer::<u64>::create(dev.context(), CL_MEM_READ_WRITE, len, std::ptr::null_mut())
        }
        .map_err(|e| dev_err(&format!("allocating {len} words"), e))?;
        Ok(ClBuffer { buf, len })
    }

    /// Allocate and upload `data` (blocking).
    ///
    /// # Errors
    /// As [`new`](Self::new) and [`write`](Self::write).
    pub fn from_slice(dev: &OpenClDevice, data: &[u64]) -> Result<Self> {
        let mut b = Self::new(dev, data.len())?;
        b.write(dev, data)?;
        Ok(b)
    }

    /// Number of words.
    pub fn len(&self) -> usize {
        self.len
    }

    /// Always false: OpenCL buffers hold at least one word.
    pub fn is_empty(&self) -> bool {
        false
    }

    /// Upload `data` to the first `data.len()` words (blocking, after queued work).
    ///
    /// # Errors
    /// `InvalidArgument` when `data` is longer than the buffer; `Device` on a driver error.
    pub fn write(&mut self, dev: &OpenClDevice, data: &[u64]) -> Result<()> {
        self.fits(data.len())?;
        // SAFETY: blocking write of a live host slice no longer than the buffer.
        unsafe {
            dev.queue()
                .enqueue_write_buffer(&mut self.buf, CL_BLOCKING, 0, data, &[])
        }
        .map(|_| ())
        .map_err(|e| dev_err("upload", e))
    }

    /// Download the first `out.len()` words into `out` (blocking, after queued work).
    ///
    /// # Errors
    /// `InvalidArgument` when `out` is longer than the buffer; `Device` on a driver error
    /// (including a failure of an earlier kernel on the queue).
    pub fn read(&self, dev: &OpenClDevice, out: &mut [u64]) -> Result<()> {
        self.fits(out.len())?;
        // SAFETY: blocking read into a live host slice no longer than the buffer.
        unsafe {
            dev.queue()
                .enqueue_read_buffer(&self.buf, CL_BLOCKING, 0, out, &[])
        }
        .map(|_| ())
        .map_err(|e| dev_err("download", e))
    }

    /// The whole buffer, downloaded (blocking).
    ///
    /// # Errors
    /// As [`read`](Self::read).
    pub fn to_vec(&self, dev: &OpenClDevice) -> Result<Vec<u64>> {
        let mut v = vec![0u64; self.len];
        self.read(dev, &mut v)?;
        Ok(v)
    }

    /// The `cl_mem` handle, for kernel arguments.
    pub fn raw(&self) -> cl_mem {
        self.buf.get()
    }

    fn fits(&self, words: usize) -> Result<()> {
        if words > self.len {
            return Err(Error::InvalidArgument(format!(
                "{words} words do not fit a buffer of {}",
                self.len
            )));
        }
        Ok(())
    }
}
