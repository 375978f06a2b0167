clfuse_ops::elementwise! {
    pub struct Twice;
    fn twice(x, y) = "2 * {x}";
    result = same;
    view = keep;
}

fn main() {}
