clfuse_core::kernel! {
    fn copy(out y: f32, out x: f32) = source "__kernel void copy(__global float* y, const __global float* x) { y[0] = x[0]; }";
}

fn main() {}
