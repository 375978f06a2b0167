//! Random draws as leaves of fused expressions: `uniform(key, 3, 2) * 2.0`
//! is one kernel that draws and scales, with no buffer of random numbers
//! in between. Every draw is Philox4x32-10 of its element's counter
//! (`clfuse_kernels::RandomKey` says which), so a leaf costs no extra
//! pass, draws the same numbers in whichever kernel it is fused into, and
//! never shares state between work items. The key's words are kernel
//! arguments: a new key reuses the compiled kernel.

use crate::binder::Binder;
use crate::generator::{Generator, Index};
use crate::operation::{HeldProduct, Operation, Shape};
use clfuse_core::{Error, Expr, IntoOperand, Result, View};
use clfuse_kernels::{PHILOX_SOURCE, RandomKey};
use std::marker::PhantomData;

pub use clfuse_kernels::RandomKey as Key;

/// Includes the generator and returns the key's OpenCL C (`key`, `stream`).
fn key_code(g: &mut Generator) -> (String, String) {
    g.helper(PHILOX_SOURCE.to_string());
    let (lo, hi, stream) = (
        g.value_param("int"),
        g.value_param("int"),
        g.value_param("int"),
    );
    (
        format!("(uint2)((uint){lo}, (uint){hi})"),
        format!("(uint){stream}"),
    )
}

fn bind_key(b: &mut Binder<'_>, key: RandomKey) {
    for word in key.kernel_words() {
        b.int(word);
    }
}

fn matrix_shape(function: &'static str, argument: &'static str, shape: Shape) -> Result<Shape> {
    match shape {
        Some(s) => Ok(Some(s)),
        None => Err(Error::InvalidArgument {
            function,
            argument,
            reason: "needs a matrix (a scalar would repeat one draw everywhere); \
                     use constant(value, rows, cols)"
                .into(),
        }),
    }
}

/// Which distribution a [`RandomLeaf`] draws from.
pub trait Distribution: Copy + 'static {
    /// The function name in errors and docs.
    const NAME: &'static str;
    /// The OpenCL C type of a draw.
    const CL_TYPE: &'static str;
    /// The element type.
    type Scalar: clfuse_core::ClType;
    /// The OpenCL C of element `(i, j)`'s draw.
    fn draw(key: &str, stream: &str, i: &str, j: &str) -> String;
}

macro_rules! distribution {
    ($(#[$doc:meta])* $ty:ident, $name:literal, $scalar:ty, $cl:literal, $code:literal) => {
        $(#[$doc])*
        #[derive(Debug, Clone, Copy)]
        pub struct $ty;
        impl Distribution for $ty {
            const NAME: &'static str = $name;
            const CL_TYPE: &'static str = $cl;
            type Scalar = $scalar;
            fn draw(key: &str, stream: &str, i: &str, j: &str) -> String {
                format!($code, key = key, stream = stream, i = i, j = j)
            }
        }
    };
}

distribution!(
    /// Uniform on (0, 1) (52 random bits; never 0 or 1).
    UniformDraw, "uniform", f64, "double",
    "random_uniform({key}, {stream}, (uint)({i}), (uint)({j}), 0)"
);
distribution!(
    /// Standard normal (Box-Muller).
    NormalDraw, "normal", f64, "double",
    "random_normal({key}, {stream}, (uint)({i}), (uint)({j}), 0)"
);
distribution!(
    /// Standard Gumbel (`-log(-log(u))`): adding it to log-probabilities
    /// and taking each row's maximum draws a categorical (Gumbel-max).
    GumbelDraw, "gumbel", f64, "double",
    "random_gumbel({key}, {stream}, (uint)({i}), (uint)({j}), 0)"
);
distribution!(
    /// The first 32-bit word of the element's Philox output, as an `int`:
    /// the integer stream, the same on every device.
    BitsDraw, "random_bits", i32, "int",
    "(int)random_bits({key}, {stream}, (uint)({i}), (uint)({j}), 0).x"
);

/// A `rows x cols` matrix of independent draws: the node built by
/// [`uniform`], [`normal`], [`gumbel`] and [`random_bits`].
#[derive(Debug, Clone, Copy)]
pub struct RandomLeaf<D> {
    key: RandomKey,
    rows: usize,
    cols: usize,
    distribution: PhantomData<D>,
}

impl<D: Distribution> Operation for RandomLeaf<D> {
    type Scalar = D::Scalar;
    type Key = RandomLeaf<D>;

    fn shape(&self) -> Result<Shape> {
        Ok(Some((self.rows, self.cols)))
    }

    fn view(&self) -> View {
        View::Entire
    }

    fn generate(&self, g: &mut Generator, at: &Index) -> String {
        let (key, stream) = key_code(g);
        // The helper's functions are double precision, whatever D draws.
        g.note_type("double");
        g.declare(D::CL_TYPE, &D::draw(&key, &stream, &at.i, &at.j))
    }

    fn bind<'a>(&'a self, b: &mut Binder<'a>) {
        bind_key(b, self.key);
    }
}

macro_rules! leaf_constructor {
    ($(#[$doc:meta])* $fun:ident, $ty:ident) => {
        $(#[$doc])*
        pub fn $fun(key: RandomKey, rows: usize, cols: usize) -> Expr<RandomLeaf<$ty>> {
            Expr(RandomLeaf { key, rows, cols, distribution: PhantomData::<$ty> })
        }
    };
}

leaf_constructor!(
    /// `rows x cols` independent uniforms on (0, 1), drawn inside the kernel
    /// that uses them.
    ///
    /// ```
    /// use clfuse_ops::prelude::*;
    /// use clfuse_ops::random::{Key, uniform};
    /// let key = Key::new(7);
    /// let u = uniform(key, 3, 2).eval()?.to_vec()?;
    /// assert!(u.iter().all(|&v| v > 0.0 && v < 1.0));
    /// // Element (i, j) is the host's draw (i, j): the same on any device.
    /// assert!((u[4] - key.uniform(1, 1, 0)).abs() < 1e-15);
    /// // Scaled in the same kernel: no buffer of uniforms.
    /// let scaled: Vec<f64> = (uniform(key, 3, 2) * 2.0 - 1.0).eval()?.to_vec()?;
    /// assert!((scaled[0] - (2.0 * u[0] - 1.0)).abs() < 1e-15);
    /// # Ok::<(), clfuse_ops::Error>(())
    /// ```
    uniform, UniformDraw
);
leaf_constructor!(
    /// `rows x cols` independent standard normals.
    ///
    /// ```
    /// use clfuse_ops::prelude::*;
    /// use clfuse_ops::random::{Key, normal};
    /// let key = Key::new(1).with_stream(3);
    /// let z: Vec<f64> = (normal(key, 2, 2) * 0.5 + 10.0).eval()?.to_vec()?;
    /// assert!((z[1] - (10.0 + 0.5 * key.normal(1, 0, 0))).abs() < 1e-12);
    /// # Ok::<(), clfuse_ops::Error>(())
    /// ```
    normal, NormalDraw
);
leaf_constructor!(
    /// `rows x cols` independent standard Gumbel draws.
    ///
    /// ```
    /// use clfuse_ops::prelude::*;
    /// use clfuse_ops::random::{Key, gumbel};
    /// let g = gumbel(Key::new(5), 1, 3).eval()?.to_vec()?;
    /// assert!((g[2] - Key::new(5).gumbel(0, 2, 0)).abs() < 1e-12);
    /// # Ok::<(), clfuse_ops::Error>(())
    /// ```
    gumbel, GumbelDraw
);
leaf_constructor!(
    /// `rows x cols` random 32-bit integers (the first Philox word of each
    /// element, as `i32`): bit for bit the same on every device.
    ///
    /// ```
    /// use clfuse_ops::prelude::*;
    /// use clfuse_ops::random::{Key, random_bits};
    /// let bits = random_bits(Key::new(9), 2, 1).eval()?.to_vec()?;
    /// assert_eq!(bits[1] as u32, Key::new(9).bits(1, 0, 0)[0]);
    /// # Ok::<(), clfuse_ops::Error>(())
    /// ```
    random_bits, BitsDraw
);

/// Gamma(shape, 1) draws, one per element of `shape` (Marsaglia and Tsang):
/// the node built by [`gamma`].
#[derive(Debug, Clone, Copy)]
pub struct GammaDraw<A> {
    key: RandomKey,
    shape: A,
}

/// A Gamma(`shape`, 1) draw per element of the matrix expression `shape`
/// (shapes below one through the `U^(1/shape)` boost; a shape that is not
/// positive and finite draws NaN). Scale it for another rate:
/// `gamma(key, &alpha) / beta`. A scalar shape is written
/// `constant(alpha, rows, cols)`.
///
/// ```
/// use clfuse_ops::prelude::*;
/// use clfuse_ops::random::{Key, gamma};
/// let key = Key::new(11);
/// let g = gamma(key, constant(2.5f64, 1000, 1)).eval()?.to_vec()?;
/// let mean = g.iter().sum::<f64>() / 1000.0;
/// assert!((mean - 2.5).abs() < 0.3);
/// assert!((g[3] - key.gamma(3, 0, 0, 2.5)).abs() < 1e-12 * g[3]);
/// # Ok::<(), clfuse_ops::Error>(())
/// ```
pub fn gamma<A: IntoOperand>(key: RandomKey, shape: A) -> Expr<GammaDraw<A::Operand>> {
    Expr(GammaDraw {
        key,
        shape: shape.into_operand(),
    })
}

impl<A: Operation> Operation for GammaDraw<A> {
    type Scalar = f64;
    type Key = GammaDraw<A::Key>;

    fn shape(&self) -> Result<Shape> {
        matrix_shape("gamma", "shape", self.shape.shape()?)
    }

    fn view(&self) -> View {
        View::Entire
    }

    fn generate(&self, g: &mut Generator, at: &Index) -> String {
        let (key, stream) = key_code(g);
        let shape = self.shape.generate(g, at);
        g.declare(
            "double",
            &format!(
                "random_gamma({key}, {stream}, (uint)({}), (uint)({}), 0, (double){shape})",
                at.i, at.j
            ),
        )
    }

    fn bind<'a>(&'a self, b: &mut Binder<'a>) {
        bind_key(b, self.key);
        self.shape.bind(b);
    }

    fn evaluate_leaves(&self, held: HeldProduct) -> Result<()> {
        self.shape.evaluate_leaves(held)
    }

    fn contains_reduction(&self) -> bool {
        self.shape.contains_reduction()
    }
}

/// Beta(a, b) draws, one per element: the node built by [`beta`].
#[derive(Debug, Clone, Copy)]
pub struct BetaDraw<A, B> {
    key: RandomKey,
    a: A,
    b: B,
}

/// A Beta(`a`, `b`) draw per element (`X / (X + Y)` of two gamma draws on
/// separate counter lanes). `a` and `b` are matrix expressions of one shape,
/// or one of them a scalar.
///
/// ```
/// use clfuse_ops::prelude::*;
/// use clfuse_ops::random::{Key, beta};
/// let key = Key::new(2);
/// let v = beta(key, constant(1.0f64, 4, 1), 3.0).eval()?.to_vec()?;
/// assert!(v.iter().all(|&x| x > 0.0 && x < 1.0));
/// assert!((v[2] - key.beta(2, 0, 1.0, 3.0)).abs() < 1e-12);
/// # Ok::<(), clfuse_ops::Error>(())
/// ```
pub fn beta<A: IntoOperand, B: IntoOperand>(
    key: RandomKey,
    a: A,
    b: B,
) -> Expr<BetaDraw<A::Operand, B::Operand>> {
    Expr(BetaDraw {
        key,
        a: a.into_operand(),
        b: b.into_operand(),
    })
}

impl<A: Operation, B: Operation> Operation for BetaDraw<A, B> {
    type Scalar = f64;
    type Key = BetaDraw<A::Key, B::Key>;

    fn shape(&self) -> Result<Shape> {
        let shape = crate::operation::combine_shapes("beta", self.a.shape()?, self.b.shape()?)?;
        matrix_shape("beta", "a, b", shape)
    }

    fn view(&self) -> View {
        View::Entire
    }

    fn generate(&self, g: &mut Generator, at: &Index) -> String {
        let (key, stream) = key_code(g);
        let a = self.a.generate(g, at);
        let b = self.b.generate(g, at);
        g.declare(
            "double",
            &format!(
                "random_beta({key}, {stream}, (uint)({}), (uint)({}), (double){a}, (double){b})",
                at.i, at.j
            ),
        )
    }

    fn bind<'a>(&'a self, b: &mut Binder<'a>) {
        bind_key(b, self.key);
        self.a.bind(b);
        self.b.bind(b);
    }

    fn evaluate_leaves(&self, held: HeldProduct) -> Result<()> {
        self.a.evaluate_leaves(held)?;
        self.b.evaluate_leaves(held)
    }

    fn contains_reduction(&self) -> bool {
        self.a.contains_reduction() || self.b.contains_reduction()
    }
}

/// One categorical draw per row from unnormalised log-probabilities: the
/// node built by [`categorical_logit_rng`].
#[derive(Debug, Clone, Copy)]
pub struct RowCategorical<A> {
    key: RandomKey,
    logits: A,
}

/// For each row of `logits` (`n x k`, unnormalised log-probabilities), a
/// draw `c` with probability `exp(logits[i, c]) / Σ exp(logits[i, ·])`,
/// 0-based, as an `n x 1` matrix of `int`: Gumbel-max (the row's
/// `argmax(logits + gumbel)`) in the kernel that computes the logits, so
/// the `n x k` probabilities are never written. `-inf` entries are never
/// drawn; a row with no finite entry, or with a NaN, draws `-1`.
///
/// ```
/// use clfuse_ops::prelude::*;
/// use clfuse_ops::random::{Key, categorical_logit_rng};
/// let inf = f64::INFINITY;
/// // Rows: [-inf, 0, -inf], [-inf, -inf, -inf], [2, -inf, -inf] (column-major).
/// let logits = MatrixCl::from_slice(3, 3, &[-inf, -inf, 2.0, 0.0, -inf, -inf, -inf, -inf, -inf])?;
/// let z = categorical_logit_rng(Key::new(3), &logits).eval()?.to_vec()?;
/// assert_eq!(z, vec![1, -1, 0]);
/// # Ok::<(), clfuse_ops::Error>(())
/// ```
pub fn categorical_logit_rng<A: IntoOperand>(
    key: RandomKey,
    logits: A,
) -> Expr<RowCategorical<A::Operand>> {
    Expr(RowCategorical {
        key,
        logits: logits.into_operand(),
    })
}

impl<A: Operation> Operation for RowCategorical<A> {
    type Scalar = i32;
    type Key = RowCategorical<A::Key>;

    fn shape(&self) -> Result<Shape> {
        let (rows, _) = matrix_shape("categorical_logit_rng", "logits", self.logits.shape()?)?
            .unwrap_or((0, 0));
        Ok(Some((rows, 1)))
    }

    fn view(&self) -> View {
        View::Entire
    }

    fn generate(&self, g: &mut Generator, at: &Index) -> String {
        let (key, stream) = key_code(g);
        let cols = g.value_param("int");
        let best = g.declare("double", "-INFINITY");
        let choice = g.declare("int", "-1");
        let invalid = g.declare("int", "0");
        let c = g.fresh();
        let i = &at.i;
        g.statement(&format!("for (int {c} = 0; {c} < {cols}; {c}++) {{"));
        g.open_scope();
        let logit = self.logits.generate(g, &Index::new(i.clone(), c.clone()));
        g.statement(&format!("if (isnan((double){logit})) {{"));
        g.statement(&format!("{invalid} = 1;"));
        g.statement(&format!("}} else if ({logit} > -INFINITY) {{"));
        let perturbed = g.declare(
            "double",
            &format!("{logit} + random_gumbel({key}, {stream}, (uint)({i}), (uint){c}, 0)"),
        );
        g.statement(&format!("if ({perturbed} > {best}) {{"));
        g.statement(&format!("{best} = {perturbed};"));
        g.statement(&format!("{choice} = {c};"));
        g.statement("}");
        g.statement("}");
        g.close_scope();
        g.statement("}");
        g.declare("int", &format!("{invalid} ? -1 : {choice}"))
    }

    fn bind<'a>(&'a self, b: &mut Binder<'a>) {
        bind_key(b, self.key);
        let cols = self.logits.shape().ok().flatten().map_or(0, |s| s.1);
        b.int(cols as i32);
        self.logits.bind(b);
    }

    fn evaluate_leaves(&self, held: HeldProduct) -> Result<()> {
        self.logits.evaluate_leaves(held)
    }

    fn contains_reduction(&self) -> bool {
        true
    }
}

/// Hands out keys: one seed, a new stream for every draw, so the draws of
/// one program are independent and the whole program is reproducible from
/// its seed.
///
/// ```
/// use clfuse_ops::prelude::*;
/// use clfuse_ops::random::Rng;
/// let mut rng = Rng::new(2026);
/// let (a, b) = (rng.next_key(), rng.next_key());
/// assert_ne!(a, b);
/// let first = rng.normal(4, 1).eval()?.to_vec()?;
/// let mut again = Rng::new(2026);
/// again.next_key();
/// again.next_key();
/// assert_eq!(again.normal(4, 1).eval()?.to_vec()?, first);
/// # Ok::<(), clfuse_ops::Error>(())
/// ```
#[derive(Debug, Clone)]
pub struct Rng {
    next: RandomKey,
}

impl Rng {
    /// The streams of `seed`, from stream 0.
    pub fn new(seed: u64) -> Self {
        Rng {
            next: RandomKey::new(seed),
        }
    }

    /// A key no earlier call returned (the next stream).
    pub fn next_key(&mut self) -> RandomKey {
        let key = self.next;
        self.next = key.next_stream();
        key
    }

    /// [`uniform`] with the next key.
    pub fn uniform(&mut self, rows: usize, cols: usize) -> Expr<RandomLeaf<UniformDraw>> {
        uniform(self.next_key(), rows, cols)
    }

    /// [`normal`] with the next key.
    pub fn normal(&mut self, rows: usize, cols: usize) -> Expr<RandomLeaf<NormalDraw>> {
        normal(self.next_key(), rows, cols)
    }

    /// [`gamma`] with the next key.
    pub fn gamma<A: IntoOperand>(&mut self, shape: A) -> Expr<GammaDraw<A::Operand>> {
        gamma(self.next_key(), shape)
    }

    /// [`beta`] with the next key.
    pub fn beta<A: IntoOperand, B: IntoOperand>(
        &mut self,
        a: A,
        b: B,
    ) -> Expr<BetaDraw<A::Operand, B::Operand>> {
        beta(self.next_key(), a, b)
    }

    /// [`categorical_logit_rng`] with the next key.
    pub fn categorical_logit<A: IntoOperand>(
        &mut self,
        logits: A,
    ) -> Expr<RowCategorical<A::Operand>> {
        categorical_logit_rng(self.next_key(), logits)
    }
}
