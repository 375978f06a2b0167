use clfuse::prelude::*;
fn main() -> clfuse::Result<()> {
    let x = MatrixCl::<f64>::constant(70, 30, 0.1)?;
    let b = MatrixCl::<f64>::constant(30, 20, 0.2)?;
    let c = MatrixCl::<f64>::constant(70, 20, 1.0)?;
    let d = MatrixCl::<f64>::zeros(70, 20)?;
    d.assign(inv_logit(&x * &b + 1.0).elt_multiply(&c))?;
    println!("{:?}", &d.to_vec()?[..3]);
    Ok(())
}
