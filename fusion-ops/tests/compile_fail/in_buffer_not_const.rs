clfuse_core::kernel! {
    fn copy(out y: f32, in x: f32) = source "__kernel void copy(__global float* y, __global float* x) { y[0] = x[0]; }";
}

fn main() {}
