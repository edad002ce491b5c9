#!/usr/bin/env python3
"""Register, spill and shared-memory use of the CUDA kernels of native/*.cl, without a GPU.

Compiles one kernel family the way src/device/cuda does (the headers inlined, `-D` defines,
compute_90, C++17) with NVRTC, then runs ptxas -v for sm_90 and prints one line per kernel.
Occupancy of the NTT kernels is register-bound, so check a kernel
change here before spending device time.

Setup (once; PyPI wheels, no CUDA install):
  pip download --no-deps nvidia-cuda-nvrtc-cu12 nvidia-cuda-nvcc-cu12 -d /tmp/nv
  cd /tmp/nv && for w in *.whl; do unzip -q -o $w -d x; done
SASS listing (`--sass KERNEL`, written to stdout after the register lines) needs cuobjdump:
  pip download --no-deps nvidia-cuda-cuobjdump -d /tmp/nv && unzip -q -o /tmp/nv/nvidia_cuda_cuobjdump*.whl -d /tmp/nv/y
Usage:
  scripts/ptxas_regs.py [--nv /tmp/nv/x/nvidia] [--sass KERNEL] FILE.cl [NAME=VALUE ...]
e.g. the cluster NTT program of N = 2^15 (the defines NttPlan::defines gives):
  scripts/ptxas_regs.py ntt.cl XEHE_SLM_TILE=4096 XEHE_SLM_MODE=3 XEHE_CLUSTER=8 XEHE_CLUSTER_ITEM=16
"""
import ctypes
import os
import re
import subprocess
import sys
import tempfile

NATIVE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "native")


def assemble(name, seen):
    """The file with its local includes inlined once each (src/device/kernels.rs assemble)."""
    if name in seen:
        return ""
    seen.add(name)
    out = []
    with open(os.path.join(NATIVE, name)) as f:
        for line in f:
            m = re.match(r'\s*#include "(.*)"', line)
            if m and os.path.exists(os.path.join(NATIVE, m.group(1))):
                out.append(assemble(m.group(1), seen))
            else:
                out.append(line)
    return "".join(out)


def main():
    args = sys.argv[1:]
    nv = "/tmp/nv/x/nvidia"
    sass = None
    while args[:1] in (["--nv"], ["--sass"]):
        if args[0] == "--nv":
            nv = args[1]
        else:
            sass = args[1]
        args = args[2:]
    if not args:
        sys.exit(__doc__)
    family, defines = args[0], args[1:]
    lib = ctypes.CDLL(os.path.join(nv, "cuda_nvrtc/lib/libnvrtc.so.12"))
    src = assemble(family, set()).encode()
    prog = ctypes.c_void_p()
    if lib.nvrtcCreateProgram(ctypes.byref(prog), src, family.encode(), 0, None, None) != 0:
        sys.exit("nvrtcCreateProgram failed")
    opts = [("-D" + d).encode() for d in defines] + [b"--gpu-architecture=compute_90", b"-std=c++17"]
    rc = lib.nvrtcCompileProgram(prog, len(opts), (ctypes.c_char_p * len(opts))(*opts))
    size = ctypes.c_size_t()
    lib.nvrtcGetProgramLogSize(prog, ctypes.byref(size))
    log = ctypes.create_string_buffer(size.value)
    lib.nvrtcGetProgramLog(prog, log)
    if rc != 0:
        sys.exit("NVRTC failed:\n" + log.value.decode())
    lib.nvrtcGetPTXSize(prog, ctypes.byref(size))
    ptx = ctypes.create_string_buffer(size.value)
    lib.nvrtcGetPTX(prog, ptx)
    with tempfile.TemporaryDirectory() as d:
        path = os.path.join(d, "k.ptx")
        with open(path, "wb") as f:
            f.write(ptx.value)
        cubin = os.path.join(d, "k.cubin")
        res = subprocess.run([os.path.join(nv, "cuda_nvcc/bin/ptxas"), "-arch=sm_90", "-v", path, "-o", cubin],
                             capture_output=True, text=True)
        listing = ""
        if sass:
            tool = os.path.join(os.path.dirname(nv), "..", "y", "nvidia", "cu13", "bin", "cuobjdump")
            listing = subprocess.run([tool, "-sass", "-fun", sass, cubin], capture_output=True, text=True).stdout
    kernel, spill = None, ""
    for line in (res.stdout + res.stderr).splitlines():
        m = re.search(r"Function properties for (\S+)", line)
        if m:
            kernel = m.group(1)
        elif kernel and "spill" in line:
            spill = line.strip()
        elif kernel and "Used" in line:
            print(f"{kernel}: {line.split('ptxas info    : ')[-1].strip()}; {spill}")
            kernel = None
    if sass:
        print(listing)


if __name__ == "__main__":
    main()
