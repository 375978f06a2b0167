use fusion::prelude::*;

#[test]
fn smoke() -> Result<()> {
    let a = MatrixCl::from_slice(3, 1, &[1.0, 2.0, 3.0])?;
    let b = MatrixCl::from_slice(3, 1, &[10.0, 20.0, 30.0])?;
    let d = MatrixCl::<f64>::zeros(3, 1)?;
    d.assign(2.0 * (&a + &b))?;
    assert_eq!(d.to_vec()?, vec![22.0, 44.0, 66.0]);
    let e = (&a + &b).exp().eval()?;
    println!("{}", (2.0f64 * (&a + &b)).kernel_source()?);
    println!("{}", log1p_exp(&a).lt(&b).kernel_source()?);
    assert_eq!(e.to_vec()?.len(), 3);
    Ok(())
}
