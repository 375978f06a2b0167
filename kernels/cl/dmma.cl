// FP64 tensor-core products (NVIDIA, compute capability 8.0 and 9.0+) as
// inline PTX, shared by the GEMM and the row-wise log-softmax of a product.
// Fragment layouts of one 16 x 8 x 4 step, per work item of a warp (lane =
// 4g + t): A holds rows g and g + 8 of column t (a[0], a[1]), B row t of
// column g (b[0]); the accumulators are rows g and g + 8 of columns 2t and
// 2t + 1 (c[0], c[1]; c[2], c[3]). The 16 x 8 x 16 step takes A columns t,
// t + 4, t + 8, t + 12 (a[2p], a[2p + 1]) and B rows t + 4p (b[p]).
#ifdef TENSOR_CORES

// C += A * B for one 16 x 8 x 16 step (compute capability 9.0+).
#define MMA_16x8x16(acc, a, b) \
  asm volatile("mma.sync.aligned.m16n8k16.row.col.f64.f64.f64.f64 {%0, %1, %2, %3}, {%4, %5, %6, %7, %8, %9, %10, %11}, {%12, %13, %14, %15}, {%0, %1, %2, %3};" \
               : "+d"((acc)[0]), "+d"((acc)[1]), "+d"((acc)[2]), "+d"((acc)[3]) \
               : "d"((a)[0]), "d"((a)[1]), "d"((a)[2]), "d"((a)[3]), "d"((a)[4]), "d"((a)[5]), "d"((a)[6]), "d"((a)[7]), \
                 "d"((b)[0]), "d"((b)[1]), "d"((b)[2]), "d"((b)[3]))

#ifdef DMMA_M8N8K4
// 8.x has only m8n8k4: rows g and g + 8 of the 16 x 8 x 4 step are two
// 8 x 8 x 4 products whose fragments are exactly the halves of m16n8k4's.
#define MMA_8x8x4(c0, c1, a, b) \
  asm volatile("mma.sync.aligned.m8n8k4.row.col.f64.f64.f64.f64 {%0, %1}, {%2}, {%3}, {%0, %1};" \
               : "+d"(c0), "+d"(c1) \
               : "d"(a), "d"(b))
#define MMA_16x8x4(acc, a, b) \
  do { \
    MMA_8x8x4((acc)[0], (acc)[1], (a)[0], (b)[0]); \
    MMA_8x8x4((acc)[2], (acc)[3], (a)[1], (b)[0]); \
  } while (0)
#else
#define MMA_16x8x4(acc, a, b) \
  asm volatile("mma.sync.aligned.m16n8k4.row.col.f64.f64.f64.f64 {%0, %1, %2, %3}, {%4, %5}, {%6}, {%0, %1, %2, %3};" \
               : "+d"((acc)[0]), "+d"((acc)[1]), "+d"((acc)[2]), "+d"((acc)[3]) \
               : "d"((a)[0]), "d"((a)[1]), "d"((b)[0]))
#endif

#endif
