//! Outputs made of outputs: [`Optional`] (present or absent at run time),
//! vectors (a run-time number of one kind),
//! references (fused, then inspected) and tuples (several outputs, one
//! kernel). Each hook forwards; a new hook is one line in each of the three.

use super::{OutputList, Schedule};
use crate::binder::Binder;
use crate::generator::Generator;
use crate::launch_shape::LaunchShape;
use crate::operation::HeldProduct;
use clfuse_core::ReadBatch;
use clfuse_core::Result;
use std::any::Any;

/// An output that is present only when `enabled` (a run-time switch that is
/// part of the cache key): a disabled output and the work only it needs are
/// absent from the generated kernel.
#[derive(Debug)]
pub struct Optional<O> {
    inner: O,
    enabled: bool,
}

/// Makes `output` optional; see [`Optional`].
///
/// ```
/// use clfuse_ops::prelude::*;
/// let x = MatrixCl::from_slice(2, 1, &[1.0f64, 2.0])?;
/// let (d, e) = (MatrixCl::<f64>::zeros(2, 1)?, MatrixCl::<f64>::zeros(2, 1)?);
/// fuse((output(&d, &x + 1.0), optional(output(&e, exp(&x)), false)))?;
/// assert_eq!(e.to_vec()?, vec![0.0, 0.0]); // not computed
/// # Ok::<(), clfuse_ops::Error>(())
/// ```
pub fn optional<O: OutputList>(output: O, enabled: bool) -> Optional<O> {
    Optional {
        inner: output,
        enabled,
    }
}

impl<O: OutputList> OutputList for Optional<O> {
    type Key = Optional<O::Key>;

    fn grid(&self, grid: &mut Option<(usize, usize)>) -> Result<()> {
        if self.enabled {
            self.inner.grid(grid)
        } else {
            Ok(())
        }
    }
    fn schedule(&self) -> Schedule {
        if self.enabled {
            self.inner.schedule()
        } else {
            Schedule::NONE
        }
    }
    fn evaluate_leaves(&self, held: HeldProduct) -> Result<()> {
        if self.enabled {
            self.inner.evaluate_leaves(held)
        } else {
            Ok(())
        }
    }
    fn prepare(&self, launch: &LaunchShape) -> Result<()> {
        if self.enabled {
            self.inner.prepare(launch)
        } else {
            Ok(())
        }
    }
    fn bind_exprs<'a>(&'a self, b: &mut Binder<'a>) {
        b.structure(u32::from(self.enabled));
        if self.enabled {
            self.inner.bind_exprs(b);
        }
    }
    fn bind_outputs<'a>(&'a self, b: &mut Binder<'a>) {
        if self.enabled {
            self.inner.bind_outputs(b);
        }
    }
    fn generate_exprs(&self, g: &mut Generator, values: &mut Vec<String>) {
        if self.enabled {
            self.inner.generate_exprs(g, values);
        }
    }
    fn generate_outputs(&self, g: &mut Generator, values: &mut std::slice::Iter<'_, String>) {
        if self.enabled {
            self.inner.generate_outputs(g, values);
        }
    }
    fn finish(&self, launch: &LaunchShape) -> Result<()> {
        if self.enabled {
            self.inner.finish(launch)
        } else {
            Ok(())
        }
    }
    fn start_reads(&self, launch: &LaunchShape, reads: &ReadBatch) -> Result<()> {
        if self.enabled {
            self.inner.start_reads(launch, reads)
        } else {
            Ok(())
        }
    }
    fn verify(&self, launch: &LaunchShape) -> Result<()> {
        if self.enabled {
            self.inner.verify(launch)
        } else {
            Ok(())
        }
    }
    fn declare_staged(&self, g: &mut Generator, launch: &LaunchShape) {
        if self.enabled {
            self.inner.declare_staged(g, launch);
        }
    }
    fn bind_staged<'a>(&'a self, b: &mut Binder<'a>, launch: &LaunchShape) {
        if self.enabled {
            self.inner.bind_staged(b, launch);
        }
    }
    fn target_ids(&self, ids: &mut Vec<u64>) {
        if self.enabled {
            self.inner.target_ids(ids);
        }
    }
    fn eval_to_temporaries(&self, temps: &mut Vec<Box<dyn Any>>) -> Result<()> {
        if self.enabled {
            self.inner.eval_to_temporaries(temps)
        } else {
            Ok(())
        }
    }
    fn copy_from_temporaries(&self, temps: &mut std::vec::IntoIter<Box<dyn Any>>) -> Result<()> {
        if self.enabled {
            self.inner.copy_from_temporaries(temps)
        } else {
            Ok(())
        }
    }
}

/// Outputs can be fused by reference and inspected afterwards (a
/// [`FullReduction`](super::FullReduction)'s value).
impl<O: OutputList> OutputList for &O {
    type Key = O::Key;

    fn grid(&self, grid: &mut Option<(usize, usize)>) -> Result<()> {
        (**self).grid(grid)
    }
    fn schedule(&self) -> Schedule {
        (**self).schedule()
    }
    fn evaluate_leaves(&self, held: HeldProduct) -> Result<()> {
        (**self).evaluate_leaves(held)
    }
    fn prepare(&self, launch: &LaunchShape) -> Result<()> {
        (**self).prepare(launch)
    }
    fn bind_exprs<'a>(&'a self, b: &mut Binder<'a>) {
        (**self).bind_exprs(b);
    }
    fn bind_outputs<'a>(&'a self, b: &mut Binder<'a>) {
        (**self).bind_outputs(b);
    }
    fn generate_exprs(&self, g: &mut Generator, values: &mut Vec<String>) {
        (**self).generate_exprs(g, values);
    }
    fn generate_outputs(&self, g: &mut Generator, values: &mut std::slice::Iter<'_, String>) {
        (**self).generate_outputs(g, values);
    }
    fn finish(&self, launch: &LaunchShape) -> Result<()> {
        (**self).finish(launch)
    }
    fn start_reads(&self, launch: &LaunchShape, reads: &ReadBatch) -> Result<()> {
        (**self).start_reads(launch, reads)
    }
    fn verify(&self, launch: &LaunchShape) -> Result<()> {
        (**self).verify(launch)
    }
    fn declare_staged(&self, g: &mut Generator, launch: &LaunchShape) {
        (**self).declare_staged(g, launch);
    }
    fn bind_staged<'a>(&'a self, b: &mut Binder<'a>, launch: &LaunchShape) {
        (**self).bind_staged(b, launch);
    }
    fn target_ids(&self, ids: &mut Vec<u64>) {
        (**self).target_ids(ids);
    }
    fn epilogue_product(&self) -> Option<&dyn crate::EpilogueProduct> {
        (**self).epilogue_product()
    }
    fn eval_to_temporaries(&self, temps: &mut Vec<Box<dyn Any>>) -> Result<()> {
        (**self).eval_to_temporaries(temps)
    }
    fn copy_from_temporaries(&self, temps: &mut std::vec::IntoIter<Box<dyn Any>>) -> Result<()> {
        (**self).copy_from_temporaries(temps)
    }
}

macro_rules! output_tuple {
    ($($name:ident $index:tt),+) => {
        impl<$($name: OutputList),+> OutputList for ($($name,)+) {
            type Key = ($($name::Key,)+);

            fn grid(&self, grid: &mut Option<(usize, usize)>) -> Result<()> {
                $(self.$index.grid(grid)?;)+
                Ok(())
            }
            fn schedule(&self) -> Schedule {
                Schedule::NONE $(.and(self.$index.schedule()))+
            }
            fn evaluate_leaves(&self, held: HeldProduct) -> Result<()> {
                $(self.$index.evaluate_leaves(held)?;)+
                Ok(())
            }
            fn prepare(&self, launch: &LaunchShape) -> Result<()> {
                $(self.$index.prepare(launch)?;)+
                Ok(())
            }
            fn bind_exprs<'a>(&'a self, b: &mut Binder<'a>) {
                $(self.$index.bind_exprs(b);)+
            }
            fn bind_outputs<'a>(&'a self, b: &mut Binder<'a>) {
                $(self.$index.bind_outputs(b);)+
            }
            fn generate_exprs(&self, g: &mut Generator, values: &mut Vec<String>) {
                $(self.$index.generate_exprs(g, values);)+
            }
            fn generate_outputs(&self, g: &mut Generator, values: &mut std::slice::Iter<'_, String>) {
                $(self.$index.generate_outputs(g, values);)+
            }
            fn finish(&self, launch: &LaunchShape) -> Result<()> {
                // Every output is finished even if one fails; the first error is returned.
                let mut first = Ok(());
                $(if let Err(e) = self.$index.finish(launch) { if first.is_ok() { first = Err(e); } })+
                first
            }
            fn start_reads(&self, launch: &LaunchShape, reads: &ReadBatch) -> Result<()> {
                $(self.$index.start_reads(launch, reads)?;)+
                Ok(())
            }
            fn verify(&self, launch: &LaunchShape) -> Result<()> {
                // In order: the first failing check is the one reported.
                $(self.$index.verify(launch)?;)+
                Ok(())
            }
            fn declare_staged(&self, g: &mut Generator, launch: &LaunchShape) {
                $(self.$index.declare_staged(g, launch);)+
            }
            fn bind_staged<'a>(&'a self, b: &mut Binder<'a>, launch: &LaunchShape) {
                $(self.$index.bind_staged(b, launch);)+
            }
            fn target_ids(&self, ids: &mut Vec<u64>) {
                $(self.$index.target_ids(ids);)+
            }
            fn eval_to_temporaries(&self, temps: &mut Vec<Box<dyn Any>>) -> Result<()> {
                $(self.$index.eval_to_temporaries(temps)?;)+
                Ok(())
            }
            fn copy_from_temporaries(&self, temps: &mut std::vec::IntoIter<Box<dyn Any>>) -> Result<()> {
                $(self.$index.copy_from_temporaries(temps)?;)+
                Ok(())
            }
        }
    };
}

output_tuple!(A 0);
output_tuple!(A 0, B 1);
output_tuple!(A 0, B 1, C 2);
output_tuple!(A 0, B 1, C 2, D 3);
output_tuple!(A 0, B 1, C 2, D 3, E 4);
output_tuple!(A 0, B 1, C 2, D 3, E 4, F 5);
output_tuple!(A 0, B 1, C 2, D 3, E 4, F 5, G 6);
output_tuple!(A 0, B 1, C 2, D 3, E 4, F 5, G 6, H 7);
output_tuple!(A 0, B 1, C 2, D 3, E 4, F 5, G 6, H 7, I 8);
output_tuple!(A 0, B 1, C 2, D 3, E 4, F 5, G 6, H 7, I 8, J 9);
output_tuple!(A 0, B 1, C 2, D 3, E 4, F 5, G 6, H 7, I 8, J 9, K 10);
output_tuple!(A 0, B 1, C 2, D 3, E 4, F 5, G 6, H 7, I 8, J 9, K 10, L 11);

/// No outputs: what a kernel computes besides its own, when nothing is.
impl OutputList for () {
    type Key = ();

    fn grid(&self, _grid: &mut Option<(usize, usize)>) -> Result<()> {
        Ok(())
    }
    fn schedule(&self) -> Schedule {
        Schedule::NONE
    }
    fn evaluate_leaves(&self, _held: HeldProduct) -> Result<()> {
        Ok(())
    }
    fn prepare(&self, _launch: &LaunchShape) -> Result<()> {
        Ok(())
    }
    fn bind_exprs<'a>(&'a self, _b: &mut Binder<'a>) {}
    fn bind_outputs<'a>(&'a self, _b: &mut Binder<'a>) {}
    fn generate_exprs(&self, _g: &mut Generator, _values: &mut Vec<String>) {}
    fn generate_outputs(&self, _g: &mut Generator, _values: &mut std::slice::Iter<'_, String>) {}
    fn finish(&self, _launch: &LaunchShape) -> Result<()> {
        Ok(())
    }
    fn target_ids(&self, _ids: &mut Vec<u64>) {}
    fn eval_to_temporaries(&self, _temps: &mut Vec<Box<dyn Any>>) -> Result<()> {
        Ok(())
    }
    fn copy_from_temporaries(&self, _temps: &mut std::vec::IntoIter<Box<dyn Any>>) -> Result<()> {
        Ok(())
    }
}

/// A run-time number of outputs of one type (a recorded step's summed
/// gradients): each hook forwards to every element in order. The count is
/// part of the cache key.
impl<O: OutputList> OutputList for Vec<O> {
    type Key = Vec<O::Key>;

    fn grid(&self, grid: &mut Option<(usize, usize)>) -> Result<()> {
        self.iter().try_for_each(|o| o.grid(grid))
    }
    fn schedule(&self) -> Schedule {
        self.iter().fold(Schedule::NONE, |s, o| s.and(o.schedule()))
    }
    fn evaluate_leaves(&self, held: HeldProduct) -> Result<()> {
        self.iter().try_for_each(|o| o.evaluate_leaves(held))
    }
    fn prepare(&self, launch: &LaunchShape) -> Result<()> {
        self.iter().try_for_each(|o| o.prepare(launch))
    }
    fn bind_exprs<'a>(&'a self, b: &mut Binder<'a>) {
        b.structure(self.len() as u32);
        for o in self {
            o.bind_exprs(b);
        }
    }
    fn bind_outputs<'a>(&'a self, b: &mut Binder<'a>) {
        for o in self {
            o.bind_outputs(b);
        }
    }
    fn generate_exprs(&self, g: &mut Generator, values: &mut Vec<String>) {
        for o in self {
            o.generate_exprs(g, values);
        }
    }
    fn generate_outputs(&self, g: &mut Generator, values: &mut std::slice::Iter<'_, String>) {
        for o in self {
            o.generate_outputs(g, values);
        }
    }
    fn finish(&self, launch: &LaunchShape) -> Result<()> {
        // Every output is finished even if one fails; the first error is returned.
        let mut first = Ok(());
        for o in self {
            if let Err(e) = o.finish(launch)
                && first.is_ok()
            {
                first = Err(e);
            }
        }
        first
    }
    fn start_reads(&self, launch: &LaunchShape, reads: &ReadBatch) -> Result<()> {
        self.iter().try_for_each(|o| o.start_reads(launch, reads))
    }
    fn verify(&self, launch: &LaunchShape) -> Result<()> {
        self.iter().try_for_each(|o| o.verify(launch))
    }
    fn declare_staged(&self, g: &mut Generator, launch: &LaunchShape) {
        for o in self {
            o.declare_staged(g, launch);
        }
    }
    fn bind_staged<'a>(&'a self, b: &mut Binder<'a>, launch: &LaunchShape) {
        for o in self {
            o.bind_staged(b, launch);
        }
    }
    fn target_ids(&self, ids: &mut Vec<u64>) {
        for o in self {
            o.target_ids(ids);
        }
    }
    fn eval_to_temporaries(&self, temps: &mut Vec<Box<dyn Any>>) -> Result<()> {
        self.iter().try_for_each(|o| o.eval_to_temporaries(temps))
    }
    fn copy_from_temporaries(&self, temps: &mut std::vec::IntoIter<Box<dyn Any>>) -> Result<()> {
        self.iter().try_for_each(|o| o.copy_from_temporaries(temps))
    }
}
