clfuse_core::kernel! {
    fn scale(inout x: f32, in c: f32) = source "__kernel void scale(__global float* x, float c) { x[0] *= c; }";
}

fn main() {}
