#pragma OPENCL EXTENSION cl_khr_fp64 : enable
#pragma OPENCL EXTENSION cl_khr_int64_base_atomics : enable

// Adds `value` to `*address`; other work items may add to it at the same time.
inline void atomic_add_double(volatile __global double* address, double value) {
  union {
    ulong bits;
    double value;
  } expected, desired;
  do {
    expected.value = *address;
    desired.value = expected.value + value;
  } while (atom_cmpxchg((volatile __global ulong*)address, expected.bits, desired.bits) != expected.bits);
}

__kernel void adjoint(
    __global const double* restrict result_adjoint,
    __global const double* restrict partial0,
    __global double* adjoint0,
    __global const double* restrict partial1,
    __global double* adjoint1,
    __global const double* restrict partial2,
    __global double* adjoint2,
    __global const int* restrict index2,
    int rows,
    int cols,
    __global double* group_sums,
    __global uint* groups_done,
    __local double* scratch,
    __local int* targets) {
  const int lid = get_local_id(0);
  const int lsize = get_local_size(0);
  double sum1 = 0;
  int pending_target2 = -1;
  double pending2 = 0;
  for (int element = get_global_id(0); element < rows * cols; element += get_global_size(0)) {
    const double seed = result_adjoint[element / rows];
    adjoint0[element] = seed * partial0[element];
    sum1 += seed * partial1[element];
    const int target2 = index2[element];
    if (target2 >= 0) {
      if (target2 != pending_target2) {
        if (pending_target2 >= 0) {
          atomic_add_double(&adjoint2[pending_target2], pending2);
        }
        pending_target2 = target2;
        pending2 = 0;
      }
      pending2 += seed * partial2[element];
    }
  }
  // Work items whose pending target is work item 0's add through
  // local memory, once per group; the others add their own.
  targets[lid] = pending_target2;
  barrier(CLK_LOCAL_MEM_FENCE);
  const int shared_target2 = targets[0];
  const bool shares2 = pending_target2 == shared_target2;
  scratch[lid] = shares2 ? pending2 : 0;
  if (!shares2 && pending_target2 >= 0) {
    atomic_add_double(&adjoint2[pending_target2], pending2);
  }
  barrier(CLK_LOCAL_MEM_FENCE);
  for (int step = lsize / 2; step > 0; step /= 2) {
    if (lid < step) {
      scratch[lid] += scratch[lid + step];
    }
    barrier(CLK_LOCAL_MEM_FENCE);
  }
  if (lid == 0 && shared_target2 >= 0) {
    atomic_add_double(&adjoint2[shared_target2], scratch[0]);
  }
  barrier(CLK_LOCAL_MEM_FENCE);
  // The work-group's sums of its 1 x 1 variables.
  scratch[lid] = sum1;
  barrier(CLK_LOCAL_MEM_FENCE);
  for (int step = lsize / 2; step > 0; step /= 2) {
    if (lid < step) {
      scratch[lid] += scratch[lid + step];
    }
    barrier(CLK_LOCAL_MEM_FENCE);
  }
  if (get_num_groups(0) == 1) {
    // One work-group: its sums are the totals.
    if (lid == 0) {
      adjoint1[0] = scratch[0];
    }
  } else {
    // Kept for the last group to finish.
    if (lid == 0) {
      group_sums[get_group_id(0)] = scratch[0];
    }
    barrier(CLK_LOCAL_MEM_FENCE);
    // The last group to finish adds every group's sums: their writes are
    // made visible before each group counts itself done.
    if (lid == 0) {
      mem_fence(CLK_GLOBAL_MEM_FENCE);
      scratch[0] = atomic_inc(groups_done) == get_num_groups(0) - 1;
    }
    barrier(CLK_LOCAL_MEM_FENCE);
    const bool last_group = scratch[0] != 0;
    barrier(CLK_LOCAL_MEM_FENCE);
    if (last_group) {
      // Read past any cache that may hold stale sums.
      mem_fence(CLK_GLOBAL_MEM_FENCE);
      volatile __global const double* sums = group_sums;
      double total = 0;
      for (int g = lid; g < get_num_groups(0); g += lsize) {
        total += sums[g];
      }
      scratch[lid] = total;
      barrier(CLK_LOCAL_MEM_FENCE);
      for (int step = lsize / 2; step > 0; step /= 2) {
        if (lid < step) {
          scratch[lid] += scratch[lid + step];
        }
        barrier(CLK_LOCAL_MEM_FENCE);
      }
      if (lid == 0) {
        adjoint1[0] = scratch[0];
        *groups_done = 0;
      }
    }
  }
}
