// Adds `value` to `*address`; other work items may add to it at the same time.
inline void atomic_add_float(volatile __global float* address, float value) {
  asm volatile("red.global.add.f32 [%0], %1;" :: "l"(address), "f"(value) : "memory");
}

// Adds `value` to `*address`; other work items may add to it at the same time.
inline void local_atomic_add_float(volatile __local float* address, float value) {
  asm volatile("red.shared.add.f32 [%0], %1;" :: "r"((uint)(ulong)address), "f"(value) : "memory");
}

__kernel void adjoint(
    __global const float* restrict result_adjoint,
    __global float* adjoint0,
    __global float* adjoint1,
    __global const int* restrict index1,
    int length1,
    __global const float* restrict partial2,
    __global float* adjoint2,
    int length2,
    __global float* adjoint3,
    int rows,
    int cols,
    __global float* group_sums,
    __global uint* groups_done,
    __local float* scratch,
    __local float* local_adjoint1) {
  const int lid = get_local_id(0);
  const int lsize = get_local_size(0);
  // The work-group's copies of the small scattered adjoints start at zero.
  for (int e = lid; e < length1; e += lsize) {
    local_adjoint1[e] = 0;
  }
  barrier(CLK_LOCAL_MEM_FENCE);
  int pending_target1 = -1;
  float pending1 = 0;
  float sum3 = 0;
  for (int element = get_global_id(0); element < rows * cols; element += get_global_size(0)) {
    const float seed = result_adjoint[element];
    adjoint0[element] = seed;
    const int target1 = index1[element];
    if (target1 >= 0) {
      if (target1 != pending_target1) {
        if (pending_target1 >= 0) {
          local_atomic_add_float(&local_adjoint1[pending_target1], pending1);
        }
        pending_target1 = target1;
        pending1 = 0;
      }
      pending1 += seed * (-2.0f);
    }
    sum3 += seed * partial2[element];
  }
  // The forward kernel summed these over the grid: scale by the seed.
  const float result_seed = result_adjoint[0];
  for (int e = get_global_id(0); e < length2; e += get_global_size(0)) {
    adjoint2[e] += result_seed * partial2[e];
  }
  // The work-group adds its copy of the small adjoint once.
  if (pending_target1 >= 0) {
    local_atomic_add_float(&local_adjoint1[pending_target1], pending1);
  }
  barrier(CLK_LOCAL_MEM_FENCE);
  for (int e = lid; e < length1; e += lsize) {
    if (local_adjoint1[e] != 0) {
      atomic_add_float(&adjoint1[e], local_adjoint1[e]);
    }
  }
  // The work-group's sums of its 1 x 1 variables.
  scratch[lid] = sum3;
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
      adjoint3[0] += scratch[0];
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
      volatile __global const float* sums = group_sums;
      float total = 0;
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
        adjoint3[0] += scratch[0];
        *groups_done = 0;
      }
    }
  }
}
