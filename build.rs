//! Build script. Without the `level-zero` feature it does nothing: the `native/` kernels are
//! embedded as text by `src/device/kernels.rs` and compiled at run time (NVRTC, OpenCL).
//!
//! With `level-zero` it (1) generates Rust bindings of Level Zero from `ze_api.h` (Debian:
//! `libze-dev`) with bindgen, as a struct of entry points loaded from `libze_loader.so.1` at run
//! time, and (2) compiles the `native/` kernels to SPIR-V with `clang -cl-std=CL2.0 -target
//! spir64` and `llvm-spirv` of the same LLVM version, validating each module with `spirv-val`.
//! The NTT family is built once per shared-memory tile size (`XEHE_SLM_TILE` = 8 … 4096 words).
//!
//! Tools: `$XEHE_CLANG`, `$XEHE_LLVM_SPIRV`, `$XEHE_SPIRV_VAL` if set; otherwise the newest
//! `clang-V` with a matching `llvm-spirv-V` on `PATH` (or in `/usr/lib/llvm-V/bin`), else plain
//! `clang` / `llvm-spirv`. Headers: `$XEHE_ZE_INCLUDE`, else `/usr/include/level_zero`.

fn main() {
    println!("cargo:rerun-if-changed=build.rs");
    #[cfg(feature = "level-zero")]
    level_zero::build();
}

#[cfg(feature = "level-zero")]
#[path = "src/device/kernels.rs"]
#[allow(dead_code)]
mod kernels;

#[cfg(feature = "level-zero")]
mod level_zero {
    use super::kernels::{assemble, Family, SOURCES};
    use std::path::{Path, PathBuf};
    use std::process::Command;

    /// Level Zero entry points the backend uses (the loader must export all of them).
    const FUNCTIONS: &[&str] = &[
        "zeInit",
        "zeDriverGet",
        "zeDriverGetApiVersion",
        "zeDeviceGet",
        "zeDeviceGetProperties",
        "zeDeviceGetSubDevices",
        "zeContextCreate",
        "zeContextDestroy",
        "zeCommandQueueCreate",
        "zeCommandQueueDestroy",
        "zeCommandQueueExecuteCommandLists",
        "zeCommandQueueSynchronize",
        "zeCommandListCreate",
        "zeCommandListDestroy",
        "zeCommandListClose",
        "zeCommandListReset",
        "zeCommandListAppendBarrier",
        "zeCommandListAppendMemoryCopy",
        "zeModuleCreate",
        "zeModuleDestroy",
        "zeModuleBuildLogGetString",
        "zeModuleBuildLogDestroy",
        "zeMemAllocDevice",
        "zeMemFree",
        "zeCommandListCreateImmediate",
        "zeCommandListAppendMemoryFill",
        "zeCommandListAppendLaunchKernel",
        "zeKernelCreate",
        "zeKernelDestroy",
        "zeKernelSetArgumentValue",
        "zeKernelSetGroupSize",
        "zeEventPoolCreate",
        "zeEventPoolDestroy",
        "zeEventCreate",
        "zeEventDestroy",
        "zeEventHostSynchronize",
        "zeEventHostReset",
        "zeEventQueryKernelTimestamp",
    ];

    pub fn build() {
        let out = PathBuf::from(std::env::var("OUT_DIR").expect("cargo sets OUT_DIR"));
        for v in [
            "XEHE_CLANG",
            "XEHE_LLVM_SPIRV",
            "XEHE_SPIRV_VAL",
            "XEHE_ZE_INCLUDE",
        ] {
            println!("cargo:rerun-if-env-changed={v}");
        }
        println!("cargo:rerun-if-changed=src/device/kernels.rs");
        for (name, _) in SOURCES {
            println!("cargo:rerun-if-changed=native/{name}");
        }
        bindings(&out);
        spirv(&out);
    }

    fn bindings(out: &Path) {
        let inc =
            std::env::var("XEHE_ZE_INCLUDE").unwrap_or_else(|_| "/usr/include/level_zero".into());
        let header = Path::new(&inc).join("ze_api.h");
        if !header.exists() {
            fail(&format!(
                "{} not found (install libze-dev, or set XEHE_ZE_INCLUDE)",
                header.display()
            ));
        }
        println!("cargo:rerun-if-changed={}", header.display());
        let mut b = bindgen::Builder::default()
            .header(header.to_string_lossy())
            .dynamic_library_name("ZeLoader")
            .dynamic_link_require_all(true)
            .prepend_enum_name(false)
            .derive_default(true)
            .layout_tests(false)
            .generate_comments(false);
        for f in FUNCTIONS {
            b = b.allowlist_function(f);
        }
        let b = b.allowlist_var("ZE_.*");
        let b = b
            .allowlist_type("_ze_event_pool_flag_t")
            .allowlist_type("_ze_event_scope_flag_t");
        match b.generate() {
            Ok(g) => {
                if let Err(e) = g.write_to_file(out.join("ze_sys.rs")) {
                    fail(&format!("writing ze_sys.rs: {e}"));
                }
            }
            Err(e) => fail(&format!(
                "bindgen on {}: {e} (bindgen needs libclang: install libclang-dev)",
                inc
            )),
        }
    }

    fn spirv(out: &Path) {
        let (clang, llvm_spirv) = toolchain();
        let spirv_val = std::env::var("XEHE_SPIRV_VAL").unwrap_or_else(|_| "spirv-val".into());
        let dir = out.join("spirv");
        if let Err(e) = std::fs::create_dir_all(&dir) {
            fail(&format!("creating {}: {e}", dir.display()));
        }
        let mut table = String::from(
            "/// `(family file, XEHE_SLM_TILE or 0, SPIR-V)` of every module built by build.rs.\n",
        );
        table.push_str("pub const MODULES: &[(&str, usize, &[u8])] = &[\n");
        let mut units: Vec<(Family, usize)> =
            (3..=12).map(|t| (Family::Ntt, 1usize << t)).collect();
        units.push((Family::Bench, 0));
        units.push((Family::Elementwise, 0));
        units.push((Family::Keyswitch, 0));
        for (family, tile) in units {
            let stem = format!("{}_{tile}", family.file().trim_end_matches(".cl"));
            let src = dir.join(format!("{stem}.cl"));
            let bc = dir.join(format!("{stem}.bc"));
            let spv = dir.join(format!("{stem}.spv"));
            write(&src, &assemble(family));
            let mut cc = Command::new(&clang);
            // keyswitch.cl at -O2 gets LLVM `freeze` instructions (from its div/rem pairs),
            // which llvm-spirv 14 cannot translate; the driver's compiler optimizes the
            // SPIR-V anyway.
            let opt = if family == Family::Keyswitch { "-O0" } else { "-O2" };
            cc.args([
                "-cl-std=CL2.0",
                "-target",
                "spir64",
                opt,
                "-emit-llvm",
                "-c",
                "-x",
                "cl",
            ]);
            if tile > 0 {
                cc.arg(format!("-DXEHE_SLM_TILE={tile}"));
            }
            if family == Family::Ntt {
                // Unoptimized IR for the NTT family (the Intel driver's compiler optimizes the
                // SPIR-V): llvm-spirv 14 mis-orders or mis-structures the blocks of LLVM's
                // optimized loops in its generic radix / shared-memory kernels (spirv-val:
                // "already a merge block", "appears before its dominator", "not defined").
                cc.args(["-Xclang", "-disable-llvm-passes"]);
            }
            run(cc.arg(&src).arg("-o").arg(&bc), &clang);
            run(
                Command::new(&llvm_spirv).arg(&bc).arg("-o").arg(&spv),
                &llvm_spirv,
            );
            run(Command::new(&spirv_val).arg(&spv), &spirv_val);
            table.push_str(&format!(
                "    ({:?}, {tile}, include_bytes!({:?})),\n",
                family.file(),
                spv.display().to_string()
            ));
        }
        table.push_str("];\n");
        write(&out.join("spirv_modules.rs"), &table);
    }

    /// A clang and an llvm-spirv of the same LLVM major version.
    fn toolchain() -> (String, String) {
        if let (Ok(c), Ok(s)) = (
            std::env::var("XEHE_CLANG"),
            std::env::var("XEHE_LLVM_SPIRV"),
        ) {
            return (c, s);
        }
        for v in (14..=22).rev() {
            let clang = format!("clang-{v}");
            let spirv = [
                format!("llvm-spirv-{v}"),
                format!("/usr/lib/llvm-{v}/bin/llvm-spirv"),
            ]
            .into_iter()
            .find(|s| works(s, "--version"));
            if let (true, Some(s)) = (works(&clang, "--version"), spirv) {
                return (clang, s);
            }
        }
        if works("clang", "--version") && works("llvm-spirv", "--version") {
            return ("clang".into(), "llvm-spirv".into());
        }
        fail(
            "the level-zero feature needs clang and an llvm-spirv of the same LLVM version \
             (Debian 12: apt install clang llvm-spirv-14 spirv-tools), or XEHE_CLANG and XEHE_LLVM_SPIRV",
        )
    }

    fn works(tool: &str, arg: &str) -> bool {
        Command::new(tool)
            .arg(arg)
            .output()
            .map(|o| o.status.success())
            .unwrap_or(false)
    }

    fn run(cmd: &mut Command, tool: &str) {
        match cmd.output() {
            Ok(o) if o.status.success() => {}
            Ok(o) => fail(&format!(
                "{tool} failed: {:?}\n{}{}",
                cmd,
                String::from_utf8_lossy(&o.stdout),
                String::from_utf8_lossy(&o.stderr)
            )),
            Err(e) => fail(&format!(
                "cannot run {tool}: {e} (install clang, llvm-spirv and spirv-tools)"
            )),
        }
    }

    fn write(path: &Path, text: &str) {
        if let Err(e) = std::fs::write(path, text) {
            fail(&format!("writing {}: {e}", path.display()));
        }
    }

    fn fail(msg: &str) -> ! {
        eprintln!("error: xehe level-zero build: {msg}");
        std::process::exit(1)
    }
}
