//! The families of same-shape C functions, each defined once: its signature, body and
//! documentation template. A module lists its members in a table macro (`objects_table!`, ...)
//! that takes a callback: [`c_fn!`] defines the functions, `c_decl!` (in
//! [`super::generated_declarations`]) describes them for the header, since cbindgen does not
//! expand macros.
//!
//! Every callback invocation has one of two forms:
//! `opaque DOC; Type = Payload` (an opaque handle type) or
//! `DOC; [unsafe] fn name(arg: Type, ...) { body }` (a function returning `XeheStatus`).

/// Define a C item of a family: an opaque handle type with its [`Handle`] impl, or a
/// `#[no_mangle]` function returning [`XeheStatus`].
///
/// [`Handle`]: super::handles::Handle
/// [`XeheStatus`]: super::XeheStatus
macro_rules! c_fn {
    (opaque $doc:expr; $ty:ident = $payload:ty) => {
        #[doc = $doc]
        pub struct $ty {
            _opaque: [u8; 0],
        }
        impl $crate::capi::handles::Handle for $ty {
            type Payload = $payload;
            const NAME: &'static str = stringify!($ty);
        }
    };
    ($doc:expr; [$($q:tt)*] fn $name:ident($($p:ident: $t:ty),* $(,)?) $body:block) => {
        #[doc = $doc]
        #[no_mangle]
        pub $($q)* extern "C" fn $name($($p: $t),*) -> $crate::capi::XeheStatus $body
    };
}

/// Opaque handle types: `Type = Payload, "what it is"`.
macro_rules! opaque_handles {
    ($cb:ident; $($ty:ident = $payload:ty, $what:literal;)*) => {$(
        $cb! { opaque concat!("Opaque handle: ", $what, "."); $ty = $payload }
    )*};
}

/// `xehe_X_destroy` of every handle type: `name(arg: Type) "what" [, note " more."] [, owner
/// "; ownership note"]`.
macro_rules! destroy_fns {
    ($cb:ident; $($name:ident($arg:ident: $ty:ident) $what:literal $(, note $note:literal)?
        $(, owner $own:literal)?;)*) => {$(
        $cb! {
            concat!(
                "Destroy ", $what, ". NULL is a no-op.", $($note,)?
                "\n\n**Ownership:** releases the caller's handle", $($own,)? ".\n",
                "**Thread safety:** any thread; calls in flight on the handle finish first.\n",
                "**Errors:** `INVALID_HANDLE` for a destroyed, never-issued or foreign handle."
            );
            [] fn $name($arg: *mut $ty) {
                $crate::capi::guard(|| $crate::capi::handles::destroy($arg))
            }
        }
    )*};
}

/// A new handle made from an existing one (`xehe_X_create(context, out)`, key generator
/// products, clones), with an optional second handle of the same context: `/// summary` then
/// `name(arg: Source[, arg2: Source2]) -> Type = |bound[, bound2]| value` with optional `owner`,
/// `thread` and `errors` notes.
macro_rules! new_handle_fns {
    ($cb:ident; $($(#[doc = $doc:literal])* $name:ident($arg:ident: $src:ident
        $(, $arg2:ident: $src2:ident)?) -> $ty:ident = |$b:ident $(, $b2:ident)?| $make:expr
        $(, owner $own:literal)? $(, thread $ts:literal)? $(, errors $err:literal)?;)*) => {$(
        $cb! {
            concat!(
                $($doc, "\n",)*
                "\n**Ownership:** `*out` is a new handle owned by the caller", $($own,)? ".\n",
                "**Thread safety:** any thread", $($ts,)? ".\n",
                "**Errors:** `NULL_POINTER`; `INVALID_HANDLE`", $($err,)? ".\n",
                "\n# Safety\n`out` is valid for a write."
            );
            [unsafe] fn $name($arg: *const $src, $($arg2: *const $src2,)? out: *mut *mut $ty) {
                $crate::capi::guard(|| {
                    $crate::capi::need(out, "out")?;
                    let $b = $crate::capi::handles::get($arg, stringify!($arg))?;
                    $(let $b2 = $crate::capi::engines::get_in($arg2, stringify!($arg2), $b.ctx)?;)?
                    let value = $make;
                    // SAFETY: forwarded contract.
                    unsafe { $crate::capi::handles::issue::<$ty>(value, $b.ctx, out) }
                })
            }
        }
    )*};
}

/// `xehe_X_load` / `xehe_X_load_file` of an object loaded against a context:
/// `load, load_file -> Type: "what", "origin"` with optional `errors`.
macro_rules! load_fns {
    ($cb:ident; $($load:ident, $load_file:ident -> $ty:ident: $what:literal, $origin:literal
        $(, errors $err:literal)?;)*) => {$(
        $cb! {
            concat!(
                "Load ", $what, " from `(data, size)`, checked against `context` (", $origin, ").\n",
                "\n**Ownership:** `*out` is a new handle owned by the caller; `data` is only read.\n",
                "**Thread safety:** any thread. **Errors:** `NULL_POINTER`; `INVALID_HANDLE`; ",
                "`MALFORMED` (malformed, truncated or unsupported bytes); `NOT_VALID_FOR_PARAMS` ",
                "for an object of other parameters", $($err,)? ".\n",
                "\n# Safety\n`data` is valid for `size` reads; `out` for a write."
            );
            [unsafe] fn $load(
                context: *const XeheContext,
                data: *const u8,
                size: usize,
                out: *mut *mut $ty,
            ) {
                // SAFETY: forwarded contract.
                unsafe { $crate::capi::objects::load_mem(context, data, size, out) }
            }
        }
        $cb! {
            concat!(
                "Load ", $what, " from the file `path`; as [`", stringify!($load), "`].\n",
                "\n**Ownership:** `*out` is a new handle owned by the caller. **Thread safety:** ",
                "any thread.\n**Errors:** `NULL_POINTER`; `INVALID_HANDLE`; `IO` when the file ",
                "cannot be read (named in the message); `MALFORMED`; `NOT_VALID_FOR_PARAMS`",
                $($err,)? ".\n",
                "\n# Safety\n`path` is a NUL-terminated string; `out` is valid for a write."
            );
            [unsafe] fn $load_file(context: *const XeheContext, path: *const c_char, out: *mut *mut $ty) {
                // SAFETY: forwarded contract.
                unsafe { $crate::capi::objects::load_path(context, path, out) }
            }
        }
    )*};
}

/// `xehe_X_save` / `xehe_X_save_file` of a serializable object:
/// `save, save_file(arg: Type): "what", "format"` with optional `note` and `errors`.
macro_rules! save_fns {
    ($cb:ident; $($save:ident, $save_file:ident($arg:ident: $ty:ident): $what:literal,
        $format:literal $(, note $note:literal)? $(, errors $err:literal)?;)*) => {$(
        $cb! {
            concat!(
                "Save ", $what, " in ", $format, " into `(buf, capacity)`", $($note,)? ".\n",
                "`compr_mode`: `XEHE_COMPR_NONE`, `XEHE_COMPR_ZLIB` or `XEHE_COMPR_ZSTD`.\n",
                "\n**Ownership:** the caller owns `buf`. **Thread safety:** any thread (reads the ",
                "object).\n**Errors:** `NULL_POINTER` (`written`); `INVALID_HANDLE`; ",
                "`INVALID_ARGUMENT` (`compr_mode`); `BUFFER_TOO_SMALL` with `*written` = size ",
                "needed", $($err,)? ".\n",
                "\n# Safety\n`buf` is NULL or valid for `capacity` writes; `written` is valid for ",
                "a write."
            );
            [unsafe] fn $save(
                $arg: *const $ty,
                compr_mode: i32,
                buf: *mut u8,
                capacity: usize,
                written: *mut usize,
            ) {
                // SAFETY: forwarded contract.
                unsafe { $crate::capi::objects::save_mem($arg, compr_mode, None, buf, capacity, written) }
            }
        }
        $cb! {
            concat!(
                "Save ", $what, " to the file `path` (created or truncated); as [`",
                stringify!($save), "`].\n",
                "\n**Ownership:** no handle is created or released. **Thread safety:** any thread ",
                "(reads the object).\n**Errors:** `NULL_POINTER`; `INVALID_HANDLE`; ",
                "`INVALID_ARGUMENT` (`compr_mode`); `IO`", $($err,)? ".\n",
                "\n# Safety\n`path` is a NUL-terminated string."
            );
            [unsafe] fn $save_file($arg: *const $ty, compr_mode: i32, path: *const c_char) {
                // SAFETY: forwarded contract.
                unsafe { $crate::capi::objects::save_path($arg, compr_mode, path) }
            }
        }
    )*};
}

/// A value of an object written to `*out`: `/// summary` then
/// `name(arg: Type) -> T = |object| value`.
macro_rules! query_fns {
    ($cb:ident; $($(#[doc = $doc:literal])* $name:ident($arg:ident: $ty:ident) -> $t:ty =
        |$o:ident| $value:expr;)*) => {$(
        $cb! {
            concat!(
                $($doc, "\n",)*
                "\n**Ownership:** no handle is created or released. **Thread safety:** any thread.\n",
                "**Errors:** `NULL_POINTER`; `INVALID_HANDLE`.\n",
                "\n# Safety\n`out` is valid for a write."
            );
            [unsafe] fn $name($arg: *const $ty, out: *mut $t) {
                $crate::capi::guard(|| {
                    let $o = &$crate::capi::handles::get($arg, stringify!($arg))?.obj;
                    // SAFETY: forwarded contract.
                    unsafe { $crate::capi::write_out(out, "out", $value) }
                })
            }
        }
    )*};
}

/// An engine's operation on one input into an existing `destination`: `/// summary` then
/// `name(engine: Engine, input: Input) -> Dest = |engine, input| value` and the errors.
macro_rules! engine_op_fns {
    ($cb:ident; $($(#[doc = $doc:literal])* $name:ident($eng:ident: $ety:ident, $inp:ident: $ity:ident)
        -> $dty:ident = |$e:ident, $x:ident| $value:expr, errors $err:literal $(, own $own:literal)?
        $(, thread $ts:literal)?;)*) => {$(
        $cb! {
            concat!(
                $($doc, "\n",)*
                "\n**Ownership:** `destination` is an existing object of the same context, ",
                "overwritten", $($own,)? ".\n",
                "**Thread safety:** any thread; writes `destination`", $($ts,)? ".\n",
                "**Errors:** `NULL_POINTER`; `INVALID_HANDLE`; `CONTEXT_MISMATCH`", $err, "."
            );
            [] fn $name($eng: *const $ety, $inp: *const $ity, destination: *mut $dty) {
                $crate::capi::guard(|| {
                    let $e = $crate::capi::handles::get($eng, stringify!($eng))?;
                    let dest = $crate::capi::engines::Dest::new(destination, $e.ctx)?;
                    let value = {
                        let input = $crate::capi::engines::get_in($inp, stringify!($inp), $e.ctx)?;
                        let $x = input.obj.read_recursive();
                        $value
                    };
                    dest.put(value)
                })
            }
        }
    )*};
}

/// Marking for a device: `gpu, gpu_on(arg: Type) "what"`.
macro_rules! device_mark_fns {
    ($cb:ident; $($gpu:ident, $gpu_on:ident($arg:ident: $ty:ident) $what:literal;)*) => {$(
        $cb! {
            concat!(
                "Mark ", $what, " for the default GPU queue (paper `.gpu()`, §III-C): nothing is ",
                "uploaded until an operation needs it; results of operations on marked operands ",
                "stay on the device.\n",
                "\n**Ownership:** no handle is created or released. **Thread safety:** any thread; ",
                "writes the object.\n**Errors:** `INVALID_HANDLE`; `DEVICE` when no GPU backend is ",
                "usable (the object stays on the CPU, unchanged, and works there)."
            );
            [] fn $gpu($arg: *mut $ty) {
                $crate::capi::device::mark_default($arg, stringify!($arg))
            }
        }
        $cb! {
            concat!(
                "Mark ", $what, " for `queue` (e.g. one queue per thread, §III-H); as [`",
                stringify!($gpu), "`].\n",
                "\n**Ownership:** no handle is created or released. **Thread safety:** any thread; ",
                "writes the object.\n**Errors:** `NULL_POINTER`; `INVALID_HANDLE`."
            );
            [] fn $gpu_on($arg: *mut $ty, queue: *const XeheQueue) {
                $crate::capi::device::mark_on($arg, stringify!($arg), queue)
            }
        }
    )*};
}

/// Evaluator operations: `/// summary` then `[unsafe] name(operand: Type, ... [scalar: T, ...];
/// keys key: Keys) -> Dest = |ev| value, then "own errors"` with optional `safety`. Operands
/// are bound to their read objects, keys to their objects, `ev` to the `Evaluator`.
macro_rules! evaluator_fns {
    ($cb:ident; $($(#[doc = $doc:literal])* [$($q:tt)*] $name:ident($($op:ident: $oty:ident),+
        $([$($sc:ident: $st:ty),+])? $(; keys $k:ident: $kty:ident)?) -> $dty:ident =
        |$ev:ident| $value:expr, then $err:literal $(, safety $safety:literal)?;)*) => {$(
        $cb! {
            concat!(
                $($doc, "\n",)*
                "\n**Ownership:** `destination` is an existing object of the evaluator's context, ",
                "overwritten\n(it may alias an operand; operands are only read). ",
                "**Thread safety:** any thread.\n**Errors:** `NULL_POINTER`, `INVALID_HANDLE`, ",
                "`CONTEXT_MISMATCH`, `NOT_VALID_FOR_PARAMS`,\n`DEVICE`; then ", $err, "."
                $(, "\n\n# Safety\n", $safety)?
            );
            [$($q)*] fn $name(
                evaluator: *const XeheEvaluator,
                $($op: *const $oty,)+
                $($($sc: $st,)+)?
                $($k: *const $kty,)?
                destination: *mut $dty,
            ) {
                $crate::capi::evaluator::run(evaluator, destination, |$ev| {
                    use $crate::capi::engines::get_in;
                    $(let $op = get_in($op, stringify!($op), $ev.ctx)?;)+
                    $(let $k = get_in($k, stringify!($k), $ev.ctx)?;
                    let $k = &$k.obj;)?
                    $(let $op = $op.obj.read_recursive();)+
                    let $ev = &$ev.obj;
                    Ok($value?)
                })
            }
        }
    )*};
}

/// Evaluator operations down to the level `parms_id[4]`: as [`evaluator_fns!`] with the
/// method `ev.method(&operand, &parms_id)`.
macro_rules! evaluator_level_fns {
    ($cb:ident; $($(#[doc = $doc:literal])* $name:ident($op:ident: $oty:ident) = $m:ident,
        then $err:literal;)*) => {$(
        evaluator_fns! { $cb;
            $(#[doc = $doc])*
            [unsafe] $name($op: $oty [parms_id: *const u64]) -> $oty =
                |ev| ev.$m(&$op, &unsafe { $crate::capi::objects::parms_id_in(parms_id)? }),
                then $err, safety "`parms_id` is valid for 4 reads.";
        }
    )*};
}
