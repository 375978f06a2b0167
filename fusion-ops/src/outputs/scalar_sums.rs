//! Several sums over one column of elements, each into its own `1 x 1`
//! target, by one kernel with no second launch: every work-group reduces
//! all of them through one tree of local memory (barriers do not multiply
//! with their number: a tree each made PoCL's compile time grow steeply),
//! and the last group to finish adds the groups' results into the targets.
//! A recorded step whose result is `1 x 1` sums its `1 x 1` variables'
//! partials this way in its forward kernel, instead of storing them per
//! element for the reverse pass.

use super::{OutputList, Schedule, common_grid};
use crate::binder::{Binder, Identity};
use crate::driver::run_direct;
use crate::generator::{Generator, Index, Section};
use crate::launch_shape::LaunchShape;
use crate::operation::HeldProduct;
use crate::operation::Operation;
use crate::templates::convert;
use clfuse_core::{Access, ClType, Error, MatrixCl, Result, Runtime, View};
use std::any::Any;
use std::sync::OnceLock;

/// The sums of `n x 1` expressions, each into a `1 x 1` target: a lead
/// (a step's value, generated first) and more of one type (its partials).
pub(crate) struct ScalarSums<'t, T: ClType, L, E> {
    lead: (&'t MatrixCl<T>, L),
    sums: Vec<(&'t MatrixCl<T>, E)>,
    /// One value per work-group and sum (`groups x sums`, column-major).
    group_sums: OnceLock<MatrixCl<T>>,
    /// This thread's finished-groups counter on the device.
    counter: OnceLock<MatrixCl<i32>>,
    local_bytes: OnceLock<usize>,
}

impl<'t, T: ClType, L: Operation, E: Operation> ScalarSums<'t, T, L, E> {
    /// The sums of each expression into its target.
    pub(crate) fn new(lead: (&'t MatrixCl<T>, L), sums: Vec<(&'t MatrixCl<T>, E)>) -> Self {
        ScalarSums {
            lead,
            sums,
            group_sums: OnceLock::new(),
            counter: OnceLock::new(),
            local_bytes: OnceLock::new(),
        }
    }

    /// Every target with its expression's shape, the lead's first.
    fn shapes(&self) -> Result<Vec<(&'t MatrixCl<T>, (usize, usize))>> {
        let lead = (self.lead.0, self.lead.1.shape()?.unwrap_or((1, 1)));
        std::iter::once(Ok(lead))
            .chain(
                self.sums
                    .iter()
                    .map(|(t, e)| Ok((*t, e.shape()?.unwrap_or((1, 1))))),
            )
            .collect()
    }

    /// How many sums (the lead included).
    fn count(&self) -> usize {
        1 + self.sums.len()
    }
}

/// The cache key of [`ScalarSums`] (the number of sums is bound as structure).
pub(crate) struct ScalarSumsKey<T, L, E>(std::marker::PhantomData<(T, L, E)>);

impl<T: ClType, L: Operation, E: Operation> OutputList for ScalarSums<'_, T, L, E> {
    type Key = ScalarSumsKey<T, L::Key, E::Key>;

    fn grid(&self, grid: &mut Option<(usize, usize)>) -> Result<()> {
        for (target, shape) in self.shapes()? {
            if (target.rows(), target.cols()) != (1, 1) || shape.1 != 1 {
                return Err(Error::DimensionMismatch {
                    operation: "a scalar sum needs a 1 x 1 target and one column".into(),
                    lhs: (target.rows(), target.cols()),
                    rhs: shape,
                });
            }
            common_grid(grid, shape)?;
        }
        Ok(())
    }

    fn schedule(&self) -> Schedule {
        Schedule {
            reduces: true,
            scalar_sums: 1 + self.sums.len(),
            ..Schedule::ELEMENTWISE
        }
    }

    fn evaluate_leaves(&self, held: HeldProduct) -> Result<()> {
        self.lead.1.evaluate_leaves(held)?;
        self.sums
            .iter()
            .try_for_each(|(_, e)| e.evaluate_leaves(held))
    }

    fn prepare(&self, launch: &LaunchShape) -> Result<()> {
        let groups = launch.row_groups().max(1);
        let _ = self
            .group_sums
            .set(MatrixCl::<T>::uninitialized(groups * self.count(), 1)?);
        let _ = self
            .counter
            .set(clfuse_core::groups_done_counter(Runtime::get()?)?);
        let _ = self
            .local_bytes
            .set(self.count() * launch.local[0] * std::mem::size_of::<T>());
        Ok(())
    }

    fn bind_exprs<'a>(&'a self, b: &mut Binder<'a>) {
        b.structure(self.sums.len() as u32);
        self.lead.1.bind(b);
        for (_, e) in &self.sums {
            e.bind(b);
        }
    }

    fn bind_outputs<'a>(&'a self, b: &mut Binder<'a>) {
        if let (Some(group_sums), Some(counter)) = (self.group_sums.get(), self.counter.get()) {
            b.matrix(group_sums, Access::ReadWrite, false);
            b.matrix(counter, Access::ReadWrite, false);
        }
        b.matrix(self.lead.0, Access::Write, false);
        for (target, _) in &self.sums {
            b.matrix(*target, Access::Write, false);
        }
        b.local(self.local_bytes.get().copied().unwrap_or(0));
    }

    fn generate_exprs(&self, g: &mut Generator, values: &mut Vec<String>) {
        let lead = self.lead.1.generate(g, &Index::work_item());
        values.push(convert::<L::Scalar, T>(&lead));
        for (_, e) in &self.sums {
            let value = e.generate(g, &Index::work_item());
            values.push(convert::<E::Scalar, T>(&value));
        }
    }

    fn generate_outputs(&self, g: &mut Generator, values: &mut std::slice::Iter<'_, String>) {
        let count = self.count();
        let cl_type = T::CL_NAME;
        // Before `prepare` (kernel_source) there are no buffers yet; the
        // identities only have to be distinct from every bound buffer.
        let id = |m: Option<&MatrixCl<T>>| Identity::Buffer(m.map_or(u64::MAX, |m| m.buffer_id()));
        let group_sums = id(self.group_sums.get());
        let counter = Identity::Buffer(self.counter.get().map_or(u64::MAX - 1, |m| m.buffer_id()));
        g.use_local_ids();
        let mut accumulators = Vec::with_capacity(count);
        for _ in 0..count {
            let value = values.next().cloned().unwrap_or_default();
            g.set_section(Section::Before);
            let acc = g.declare(cl_type, "0");
            g.set_section(Section::Outputs);
            g.statement(&format!("{acc} += {value};"));
            accumulators.push(acc);
        }
        g.set_section(Section::After);
        let sums = g.buffer(group_sums, cl_type, false);
        g.mark_written(group_sums);
        let done = g.buffer(counter, "int", false);
        g.mark_written(counter);
        let slot = g.groups_done_slot();
        let targets: Vec<String> = std::iter::once(self.lead.0)
            .chain(self.sums.iter().map(|(t, _)| *t))
            .map(|t| {
                let target = Identity::Buffer(t.buffer_id());
                let base = g.buffer(target, cl_type, false);
                g.mark_written(target);
                base
            })
            .collect();
        let scratch = g.local_param(cl_type);
        let tree = format!(
            "for (int step = lsize / 2; step > 0; step /= 2) {{
               if (lid < step) {{
                 for (int slot = 0; slot < {count}; slot++) {{
                   {scratch}[slot * lsize + lid] += {scratch}[slot * lsize + lid + step];
                 }}
               }}
               barrier(CLK_LOCAL_MEM_FENCE);
             }}"
        );
        g.statement("{");
        g.statement(&format!(
            "// The work-group's {count} scalar sum(s), through one tree."
        ));
        for (slot, acc) in accumulators.iter().enumerate() {
            g.statement(&format!("{scratch}[{slot} * lsize + lid] = {acc};"));
        }
        g.statement("barrier(CLK_LOCAL_MEM_FENCE);");
        g.statements(&tree);
        // A launch of one work-group (a sweep's member, a small sum) has its
        // totals already: no counter, fences or second tree.
        let totals: String = targets
            .iter()
            .enumerate()
            .map(|(slot, target)| format!("{target}_global[0] = {scratch}[{slot} * lsize];\n"))
            .collect();
        g.statements(&format!(
            "if (get_num_groups(0) == 1) {{
               // One work-group: its sums are the totals.
               if (lid == 0) {{
                 {totals}
               }}
             }} else {{"
        ));
        g.statements(&format!(
            "for (int slot = lid; slot < {count}; slot += lsize) {{
               {sums}_global[slot * get_num_groups(0) + get_group_id(0)] = {scratch}[slot * lsize];
             }}
             barrier(CLK_LOCAL_MEM_FENCE);
             // The last group to finish adds every group's sums: their writes
             // are made visible before each group counts itself done.
             if (lid == 0) {{
               mem_fence(CLK_GLOBAL_MEM_FENCE);
               {scratch}[0] = atomic_inc(&{done}_global[{slot}]) == get_num_groups(0) - 1;
             }}
             barrier(CLK_LOCAL_MEM_FENCE);
             const bool last_group = {scratch}[0] != 0;
             barrier(CLK_LOCAL_MEM_FENCE);
             if (last_group) {{
               // Read past any cache that may hold stale sums.
               mem_fence(CLK_GLOBAL_MEM_FENCE);
               volatile __global const {cl_type}* all_sums = {sums}_global;
               for (int slot = 0; slot < {count}; slot++) {{
                 {cl_type} total = 0;
                 for (int group = lid; group < get_num_groups(0); group += lsize) {{
                   total += all_sums[slot * get_num_groups(0) + group];
                 }}
                 {scratch}[slot * lsize + lid] = total;
               }}
               barrier(CLK_LOCAL_MEM_FENCE);
               {tree}
               if (lid == 0) {{
                 {totals}
                 {done}_global[{slot}] = 0;
               }}
             }}
             }}
             }}"
        ));
        g.set_section(Section::Outputs);
    }

    fn finish(&self, launch: &LaunchShape) -> Result<()> {
        for target in std::iter::once(self.lead.0).chain(self.sums.iter().map(|(t, _)| *t)) {
            if launch.rows == 0 || launch.cols == 0 {
                // No kernel ran (or it summed nothing): the sums are zero.
                target.fill(T::default())?;
            }
            target.set_view(View::Entire);
        }
        Ok(())
    }

    fn target_ids(&self, ids: &mut Vec<u64>) {
        ids.push(self.lead.0.buffer_id());
        ids.extend(self.sums.iter().map(|(t, _)| t.buffer_id()));
    }

    fn eval_to_temporaries(&self, _temps: &mut Vec<Box<dyn Any>>) -> Result<()> {
        // Sums never write a target inside their loop: run them alone first.
        let lead = (self.lead.0, &self.lead.1);
        let again = ScalarSums::new(lead, self.sums.iter().map(|(t, e)| (*t, e)).collect());
        run_direct(&again)
    }

    fn copy_from_temporaries(&self, _temps: &mut std::vec::IntoIter<Box<dyn Any>>) -> Result<()> {
        Ok(())
    }
}
