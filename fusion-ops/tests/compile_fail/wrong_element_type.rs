clfuse_core::kernel! {
    fn scale(inout x: f64, c: f32) = source "__kernel void scale(__global float* x, float c) { x[0] *= c; }";
}

fn main() {}
