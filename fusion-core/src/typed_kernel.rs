//! Hand-written kernels with typed argument lists (paper §2.3, `kernel_cl<in_buffer, out_buffer, int>`).
//!
//! A kernel is declared once as a `static` with its name, source, compile
//! options and argument directions; it compiles lazily (once per element
//! type), is cached, and each launch applies the event rules.

use crate::cl_type::ClType;
use crate::compile::compile_kernel;
use crate::error::Result;
use crate::events::{Access, ClEvent};
use crate::kernel_cache::CompiledKernel;
use crate::launch::{KernelArg, NdRange, enqueue};
use crate::matrix::MatrixCl;
use std::any::TypeId;
use std::marker::PhantomData;
use std::sync::Arc;

/// A buffer the kernel only reads (`const __global T*`).
pub struct In<T>(PhantomData<T>);
/// A buffer the kernel only writes (`__global T*`).
pub struct Out<T>(PhantomData<T>);
/// A buffer the kernel reads and writes (`__global T*`).
pub struct InOut<T>(PhantomData<T>);

/// One argument position of a typed kernel: what a launch passes there.
pub trait ArgSpec: 'static {
    /// The launch-time value.
    type Value<'a>;
    /// The OpenCL C type of the buffer elements, for buffers.
    const ELEMENT: Option<&'static str>;
    /// Whether this argument needs fp64.
    const NEEDS_FP64: bool;
    /// Turns the value into a kernel argument.
    fn to_arg<'a>(value: Self::Value<'a>) -> KernelArg<'a>;
}

impl<T: ClType> ArgSpec for In<T> {
    type Value<'a> = &'a MatrixCl<T>;
    const ELEMENT: Option<&'static str> = Some(T::CL_NAME);
    const NEEDS_FP64: bool = T::NEEDS_FP64;
    fn to_arg<'a>(m: Self::Value<'a>) -> KernelArg<'a> {
        KernelArg::buffer(m, Access::Read)
    }
}

impl<T: ClType> ArgSpec for Out<T> {
    type Value<'a> = &'a MatrixCl<T>;
    const ELEMENT: Option<&'static str> = Some(T::CL_NAME);
    const NEEDS_FP64: bool = T::NEEDS_FP64;
    fn to_arg<'a>(m: Self::Value<'a>) -> KernelArg<'a> {
        KernelArg::buffer(m, Access::Write)
    }
}

impl<T: ClType> ArgSpec for InOut<T> {
    type Value<'a> = &'a MatrixCl<T>;
    const ELEMENT: Option<&'static str> = Some(T::CL_NAME);
    const NEEDS_FP64: bool = T::NEEDS_FP64;
    fn to_arg<'a>(m: Self::Value<'a>) -> KernelArg<'a> {
        KernelArg::buffer(m, Access::ReadWrite)
    }
}

/// A scalar argument (`int`, `float`, `double`), by value.
impl<T: ClType> ArgSpec for T {
    type Value<'a> = T;
    const ELEMENT: Option<&'static str> = None;
    const NEEDS_FP64: bool = T::NEEDS_FP64;
    fn to_arg<'a>(v: Self::Value<'a>) -> KernelArg<'a> {
        match T::RANK {
            0 => KernelArg::Int(v.to_f64() as i32),
            1 => KernelArg::Float(v.to_f64() as f32),
            _ => KernelArg::Double(v.to_f64()),
        }
    }
}

/// A tuple of [`ArgSpec`]s: the whole argument list of a kernel.
pub trait ArgList: 'static {
    /// The tuple of launch-time values.
    type Values<'a>;
    /// Element type of the first buffer argument (defines `T` in the source).
    const ELEMENT: Option<&'static str>;
    /// Whether any buffer holds `double`.
    const NEEDS_FP64: bool;
    /// Appends the kernel arguments.
    fn push_args<'a>(values: Self::Values<'a>, out: &mut Vec<KernelArg<'a>>);
}

macro_rules! arg_list {
    ($($name:ident),+) => {
        impl<$($name: ArgSpec),+> ArgList for ($($name,)+) {
            type Values<'a> = ($($name::Value<'a>,)+);
            const ELEMENT: Option<&'static str> = first_some(&[$($name::ELEMENT),+]);
            const NEEDS_FP64: bool = false $(|| $name::NEEDS_FP64)+;
            #[allow(non_snake_case)]
            fn push_args<'a>(values: Self::Values<'a>, out: &mut Vec<KernelArg<'a>>) {
                let ($($name,)+) = values;
                $(out.push($name::to_arg($name));)+
            }
        }
    };
}

const fn first_some(items: &[Option<&'static str>]) -> Option<&'static str> {
    let mut i = 0;
    while i < items.len() {
        if items[i].is_some() {
            return items[i];
        }
        i += 1;
    }
    None
}

arg_list!(A);
arg_list!(A, B);
arg_list!(A, B, C);
arg_list!(A, B, C, D);
arg_list!(A, B, C, D, E);
arg_list!(A, B, C, D, E, F);
arg_list!(A, B, C, D, E, F, G);
arg_list!(A, B, C, D, E, F, G, H);
arg_list!(A, B, C, D, E, F, G, H, I);
arg_list!(A, B, C, D, E, F, G, H, I, J);
arg_list!(A, B, C, D, E, F, G, H, I, J, K);
arg_list!(A, B, C, D, E, F, G, H, I, J, K, L);
arg_list!(A, B, C, D, E, F, G, H, I, J, K, L, M);
arg_list!(A, B, C, D, E, F, G, H, I, J, K, L, M, N);
arg_list!(A, B, C, D, E, F, G, H, I, J, K, L, M, N, O);
arg_list!(A, B, C, D, E, F, G, H, I, J, K, L, M, N, O, P);

/// A hand-written kernel with a typed argument list `A`.
///
/// The source may use `T` for the element type of the first buffer argument:
/// it is defined with `-D T=<type>` when compiling.
///
/// ```
/// use clfuse_core::{In, Out, MatrixCl, NdRange, TypedKernel};
/// static SCALE: TypedKernel<(Out<f32>, In<f32>, f32)> = TypedKernel::new(
///     "scale",
///     "__kernel void scale(__global T* out, const __global T* in, T c) {
///          int i = get_global_id(0);
///          out[i] = c * in[i];
///      }",
///     "",
/// );
/// let a = MatrixCl::from_slice(3, 1, &[1.0f32, 2.0, 3.0])?;
/// let b = MatrixCl::<f32>::uninitialized(3, 1)?;
/// SCALE.launch(NdRange::d1(3), (&b, &a, 2.0))?;
/// assert_eq!(b.to_vec()?, vec![2.0, 4.0, 6.0]);
/// # Ok::<(), clfuse_core::Error>(())
/// ```
pub struct TypedKernel<A: ArgList> {
    name: &'static str,
    source: &'static str,
    options: &'static str,
    _args: PhantomData<fn(A)>,
}

impl<A: ArgList> TypedKernel<A> {
    /// Declares a kernel; nothing is compiled until the first launch.
    pub const fn new(name: &'static str, source: &'static str, options: &'static str) -> Self {
        TypedKernel {
            name,
            source,
            options,
            _args: PhantomData,
        }
    }

    /// The kernel function's name.
    pub fn name(&self) -> &'static str {
        self.name
    }

    /// The compiled kernel for these options (compiled and cached on first use).
    pub fn compiled(&self, extra_options: &str) -> Result<Arc<CompiledKernel>> {
        // Threads asking for the same new kernel at once share one compile.
        crate::Runtime::get()?.kernels().typed(
            self.source.as_ptr() as usize,
            self.name,
            TypeId::of::<A>(),
            extra_options,
            || self.compile(extra_options),
        )
    }

    fn compile(&self, extra_options: &str) -> Result<Arc<CompiledKernel>> {
        if A::NEEDS_FP64 {
            crate::Runtime::get()?.require::<f64>(self.name)?;
        }
        let mut options = self.options.to_string();
        if let Some(t) = A::ELEMENT {
            options.push_str(&format!(" -D T={t}"));
        }
        if !extra_options.is_empty() {
            options.push(' ');
            options.push_str(extra_options);
        }
        let dump_name = format!("{}_{}", self.name, A::ELEMENT.unwrap_or("none"));
        let source = if A::NEEDS_FP64 {
            format!(
                "#pragma OPENCL EXTENSION cl_khr_fp64 : enable\n{}",
                self.source
            )
        } else {
            self.source.to_string()
        };
        Ok(Arc::new(compile_kernel(
            self.name,
            &source,
            options.trim(),
            &dump_name,
        )?))
    }

    /// Launches over `range` with `args`, ordering it after what its buffers wait for.
    pub fn launch(&self, range: NdRange, args: A::Values<'_>) -> Result<Option<ClEvent>> {
        self.launch_with_options(range, "", args)
    }

    /// Like [`launch`](Self::launch), compiling with extra options (e.g. `-D THREAD_BLOCK_SIZE=16`).
    pub fn launch_with_options(
        &self,
        range: NdRange,
        extra_options: &str,
        args: A::Values<'_>,
    ) -> Result<Option<ClEvent>> {
        let kernel = self.compiled(extra_options)?;
        let mut list = Vec::with_capacity(8);
        A::push_args(args, &mut list);
        enqueue(&kernel, &list, range)
    }
}
