//! The expression language of `xehe eval` (paper §III-B4: a SEAL client encrypts, xehe
//! evaluates, the client decrypts).
//!
//! ```text
//! expr    := term (('+' | '-') term)*
//! term    := unary ('*' unary)*
//! unary   := '-' unary | primary
//! primary := NAME | INTEGER | '(' expr ')' | NAME '(' expr (',' expr)* ')'
//! ```
//!
//! Names are the `--input` ciphertexts and `--plain` plaintexts. Every operator and function is
//! one SEAL `Evaluator` call, so the result is byte-identical to the same chain run in SEAL:
//!
//! | expression | SEAL call |
//! | --- | --- |
//! | `x + y`, `x - y`, `x * y` (ciphertexts) | `add`, `sub`, `multiply` |
//! | `x + p`, `p + x`, `x - p`, `x * p`, `p * x` (`p` a plaintext) | `add_plain`, `sub_plain`, `multiply_plain` |
//! | `p - x` | `sub_plain` then `negate` |
//! | `-x` | `negate` |
//! | `square(x)`, `relin(x)`, `rescale(x)`, `mod_switch(x)` | `square`, `relinearize`, `rescale_to_next`, `mod_switch_to_next` |
//! | `rotate(x, k)`, `conj(x)` | `rotate_vector`, `complex_conjugate` |
//!
//! Errors carry the 1-based column of the offending token ([`Error::Located`]).

use crate::circuits::bootstrapping::Bootstrapper;
use crate::{Ciphertext, Error, Evaluator, KeyKind, GaloisKeys, Plaintext, RelinKeys, Result};
use std::collections::HashMap;

/// A binary operator.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum BinOp {
    /// `+`
    Add,
    /// `-`
    Sub,
    /// `*`
    Mul,
}

/// A parsed expression; `column` is the 1-based character column of its token.
#[derive(Clone, Debug, PartialEq)]
pub enum Expr {
    /// A named input.
    Name {
        /// The name.
        name: String,
        /// Column of the name.
        column: usize,
    },
    /// An integer literal (only the step of `rotate`).
    Int {
        /// The value.
        value: i64,
        /// Column of the literal.
        column: usize,
    },
    /// Unary minus.
    Neg {
        /// The operand.
        operand: Box<Expr>,
        /// Column of the `-`.
        column: usize,
    },
    /// `lhs op rhs`.
    Binary {
        /// The operator.
        op: BinOp,
        /// Left operand.
        lhs: Box<Expr>,
        /// Right operand.
        rhs: Box<Expr>,
        /// Column of the operator.
        column: usize,
    },
    /// `name(args…)`.
    Call {
        /// The function name.
        name: String,
        /// The arguments.
        args: Vec<Expr>,
        /// Column of the function name.
        column: usize,
    },
}

impl Expr {
    /// Column of the expression's token.
    pub fn column(&self) -> usize {
        match self {
            Expr::Name { column, .. }
            | Expr::Int { column, .. }
            | Expr::Neg { column, .. }
            | Expr::Binary { column, .. }
            | Expr::Call { column, .. } => *column,
        }
    }

    /// Every input name the expression reads, in order of first use.
    pub fn names(&self) -> Vec<&str> {
        let mut out = Vec::new();
        self.collect_names(&mut out);
        out
    }

    fn collect_names<'a>(&'a self, out: &mut Vec<&'a str>) {
        match self {
            Expr::Name { name, .. } if !out.contains(&name.as_str()) => out.push(name),
            Expr::Name { .. } | Expr::Int { .. } => {}
            Expr::Neg { operand, .. } => operand.collect_names(out),
            Expr::Binary { lhs, rhs, .. } => {
                lhs.collect_names(out);
                rhs.collect_names(out);
            }
            Expr::Call { args, .. } => args.iter().for_each(|a| a.collect_names(out)),
        }
    }
}

/// An error at `column` of the expression.
fn at(column: usize, e: Error) -> Error {
    e.located(format!("expression column {column}"))
}

fn syntax(column: usize, msg: impl Into<String>) -> Error {
    at(column, Error::InvalidArgument(msg.into()))
}

#[derive(Clone, Debug, PartialEq)]
enum Tok {
    Name(String),
    Int(i64),
    Sym(char),
    End,
}

/// Split into (token, column) pairs, ending with `End`.
fn lex(src: &str) -> Result<Vec<(Tok, usize)>> {
    let chars: Vec<char> = src.chars().collect();
    let mut out = Vec::new();
    let mut i = 0;
    while i < chars.len() {
        let c = chars[i];
        let column = i + 1;
        if c.is_whitespace() {
            i += 1;
        } else if c.is_ascii_alphabetic() || c == '_' {
            let start = i;
            while i < chars.len()
                && (chars[i].is_ascii_alphanumeric() || chars[i] == '_' || chars[i] == '.')
            {
                i += 1;
            }
            out.push((Tok::Name(chars[start..i].iter().collect()), column));
        } else if c.is_ascii_digit() {
            let start = i;
            while i < chars.len() && chars[i].is_ascii_digit() {
                i += 1;
            }
            let text: String = chars[start..i].iter().collect();
            let value = text
                .parse()
                .map_err(|_| syntax(column, format!("integer `{text}` is too large")))?;
            out.push((Tok::Int(value), column));
        } else if "+-*(),".contains(c) {
            out.push((Tok::Sym(c), column));
            i += 1;
        } else {
            return Err(syntax(column, format!("unexpected character `{c}`")));
        }
    }
    out.push((Tok::End, chars.len() + 1));
    Ok(out)
}

/// Deepest expression accepted: the levels of its tree (each operator, negation and call is
/// one) and of parentheses, so that parsing, evaluating and dropping it never overflow a
/// thread's stack, whatever the command line holds.
pub const MAX_DEPTH: usize = 500;

struct Parser {
    toks: Vec<(Tok, usize)>,
    pos: usize,
    /// Parentheses, calls and negations open around the token being parsed.
    open: usize,
}

/// A parsed subexpression and the depth of its tree.
type Parsed = (Expr, usize);

/// `depth` if within [`MAX_DEPTH`], else a syntax error at `column`.
fn within(depth: usize, column: usize) -> Result<usize> {
    if depth > MAX_DEPTH {
        return Err(syntax(
            column,
            format!("the expression is nested more than {MAX_DEPTH} levels deep"),
        ));
    }
    Ok(depth)
}

impl Parser {
    /// Parse `f` inside one more parenthesis, call or negation.
    fn inside(
        &mut self,
        column: usize,
        f: impl FnOnce(&mut Self) -> Result<Parsed>,
    ) -> Result<Parsed> {
        self.open = within(self.open + 1, column)?;
        let r = f(self);
        self.open -= 1;
        r
    }
    fn peek(&self) -> &(Tok, usize) {
        &self.toks[self.pos.min(self.toks.len() - 1)]
    }
    fn next(&mut self) -> (Tok, usize) {
        let t = self.peek().clone();
        self.pos += 1;
        t
    }
    fn eat(&mut self, c: char) -> bool {
        if self.peek().0 == Tok::Sym(c) {
            self.pos += 1;
            true
        } else {
            false
        }
    }
    fn expect(&mut self, c: char) -> Result<()> {
        if self.eat(c) {
            return Ok(());
        }
        let (t, column) = self.peek().clone();
        Err(syntax(
            column,
            format!("expected `{c}`, found {}", describe(&t)),
        ))
    }
    fn expr(&mut self) -> Result<Parsed> {
        let (mut lhs, mut depth) = self.term()?;
        loop {
            let (t, column) = self.peek().clone();
            let op = match t {
                Tok::Sym('+') => BinOp::Add,
                Tok::Sym('-') => BinOp::Sub,
                _ => return Ok((lhs, depth)),
            };
            self.pos += 1;
            let (rhs, d) = self.term()?;
            depth = within(1 + depth.max(d), column)?;
            lhs = Expr::Binary {
                op,
                lhs: Box::new(lhs),
                rhs: Box::new(rhs),
                column,
            };
        }
    }
    fn term(&mut self) -> Result<Parsed> {
        let (mut lhs, mut depth) = self.unary()?;
        while let (Tok::Sym('*'), column) = self.peek().clone() {
            self.pos += 1;
            let (rhs, d) = self.unary()?;
            depth = within(1 + depth.max(d), column)?;
            lhs = Expr::Binary {
                op: BinOp::Mul,
                lhs: Box::new(lhs),
                rhs: Box::new(rhs),
                column,
            };
        }
        Ok((lhs, depth))
    }
    fn unary(&mut self) -> Result<Parsed> {
        if let (Tok::Sym('-'), column) = self.peek().clone() {
            self.pos += 1;
            let (operand, d) = self.inside(column, Self::unary)?;
            let neg = Expr::Neg {
                operand: Box::new(operand),
                column,
            };
            return Ok((neg, within(d + 1, column)?));
        }
        self.primary()
    }
    fn primary(&mut self) -> Result<Parsed> {
        match self.next() {
            (Tok::Int(value), column) => Ok((Expr::Int { value, column }, 1)),
            (Tok::Sym('('), column) => {
                let e = self.inside(column, Self::expr)?;
                self.expect(')')?;
                Ok(e)
            }
            (Tok::Name(name), column) => {
                if !self.eat('(') {
                    return Ok((Expr::Name { name, column }, 1));
                }
                let (first, mut depth) = self.inside(column, Self::expr)?;
                let mut args = vec![first];
                while self.eat(',') {
                    let (a, d) = self.inside(column, Self::expr)?;
                    args.push(a);
                    depth = depth.max(d);
                }
                self.expect(')')?;
                Ok((
                    Expr::Call { name, args, column },
                    within(depth + 1, column)?,
                ))
            }
            (t, column) => Err(syntax(
                column,
                format!("expected a name, a number or `(`, found {}", describe(&t)),
            )),
        }
    }
}

fn describe(t: &Tok) -> String {
    match t {
        Tok::Name(n) => format!("`{n}`"),
        Tok::Int(v) => format!("`{v}`"),
        Tok::Sym(c) => format!("`{c}`"),
        Tok::End => "the end of the expression".into(),
    }
}

/// Parse an expression.
///
/// # Errors
/// [`Error::Located`] (column) around `InvalidArgument` for a syntax error.
pub fn parse(src: &str) -> Result<Expr> {
    let mut p = Parser {
        toks: lex(src)?,
        pos: 0,
        open: 0,
    };
    let (e, _) = p.expr()?;
    match p.peek().clone() {
        (Tok::End, _) => Ok(e),
        (t, column) => Err(syntax(
            column,
            format!("unexpected {} after a complete expression", describe(&t)),
        )),
    }
}

/// A value of the expression language.
#[derive(Clone, Debug)]
pub enum Value {
    /// A ciphertext (`--input`).
    Cipher(Ciphertext),
    /// A plaintext (`--plain`).
    Plain(Plaintext),
}

/// What an expression is evaluated with: the named inputs and the keys (each optional; a
/// function that needs a missing key is an error at its column).
pub struct Env<'a> {
    /// The evaluator (its context must be the inputs' one).
    pub evaluator: &'a Evaluator,
    /// Named inputs.
    pub values: HashMap<String, Value>,
    /// Relinearization keys, for `relin`.
    pub relin_keys: Option<&'a RelinKeys>,
    /// Galois keys, for `rotate` and `conj`.
    pub galois_keys: Option<&'a GaloisKeys>,
    /// A bootstrapper (`--bootstrap-keys`), for `bootstrap`.
    pub bootstrapper: Option<&'a Bootstrapper>,
}

/// Functions of the language: (name, number of arguments, SEAL call).
pub const FUNCTIONS: [(&str, usize, &str); 7] = [
    ("square", 1, "Evaluator::square"),
    ("relin", 1, "Evaluator::relinearize"),
    ("rescale", 1, "Evaluator::rescale_to_next"),
    ("mod_switch", 1, "Evaluator::mod_switch_to_next"),
    ("rotate", 2, "Evaluator::rotate_vector"),
    ("conj", 1, "Evaluator::complex_conjugate"),
    ("bootstrap", 1, "Bootstrapper::bootstrap (xehe)"),
];

impl Env<'_> {
    /// Evaluate `e`; the result must be a ciphertext.
    ///
    /// # Errors
    /// [`Error::Located`] at the column of the failing token around: `InvalidArgument` (unknown
    /// name or function, wrong argument count, plaintext where a ciphertext is needed, integer
    /// out of place), `MissingKey` (no `--relin-keys` / `--galois-keys`, or the Galois key for a
    /// step is absent), and the evaluator's own errors (`ParmsMismatch`, `ScaleMismatch`,
    /// `EndOfModulusChain`, …) as SEAL raises them.
    pub fn evaluate(&self, e: &Expr) -> Result<Ciphertext> {
        match self.value(e)? {
            Value::Cipher(c) => Ok(c),
            Value::Plain(_) => Err(at(
                e.column(),
                Error::InvalidArgument(
                    "the result is a plaintext: the expression must involve a ciphertext".into(),
                ),
            )),
        }
    }

    fn cipher(&self, e: &Expr) -> Result<Ciphertext> {
        match self.value(e)? {
            Value::Cipher(c) => Ok(c),
            Value::Plain(_) => Err(at(
                e.column(),
                Error::InvalidArgument("a ciphertext is needed here, not a plaintext".into()),
            )),
        }
    }

    fn value(&self, e: &Expr) -> Result<Value> {
        let column = e.column();
        match e {
            Expr::Name { name, .. } => self.values.get(name).cloned().ok_or_else(|| {
                at(
                    column,
                    Error::InvalidArgument(format!(
                        "unknown name `{name}` (not given with --input or --plain)"
                    )),
                )
            }),
            Expr::Int { value, .. } => Err(at(
                column,
                Error::InvalidArgument(format!(
                    "the integer {value} is only allowed as the step of rotate(x, k)"
                )),
            )),
            Expr::Neg { operand, .. } => {
                let c = self.cipher(operand)?;
                located(column, self.evaluator.negate(&c))
            }
            Expr::Binary { op, lhs, rhs, .. } => {
                let (l, r) = (self.value(lhs)?, self.value(rhs)?);
                located(column, self.binary(*op, l, r))
            }
            Expr::Call { name, args, .. } => self.call(name, args, column),
        }
    }

    /// `l op r`: the SEAL call of the operand kinds (module docs).
    fn binary(&self, op: BinOp, l: Value, r: Value) -> Result<Ciphertext> {
        let ev = self.evaluator;
        match (op, l, r) {
            (BinOp::Add, Value::Cipher(a), Value::Cipher(b)) => ev.add(&a, &b),
            (BinOp::Sub, Value::Cipher(a), Value::Cipher(b)) => ev.sub(&a, &b),
            (BinOp::Mul, Value::Cipher(a), Value::Cipher(b)) => ev.multiply(&a, &b),
            (BinOp::Add, Value::Cipher(a), Value::Plain(p))
            | (BinOp::Add, Value::Plain(p), Value::Cipher(a)) => ev.add_plain(&a, &p),
            (BinOp::Sub, Value::Cipher(a), Value::Plain(p)) => ev.sub_plain(&a, &p),
            (BinOp::Sub, Value::Plain(p), Value::Cipher(a)) => {
                ev.sub_plain(&a, &p).and_then(|d| ev.negate(&d))
            }
            (BinOp::Mul, Value::Cipher(a), Value::Plain(p))
            | (BinOp::Mul, Value::Plain(p), Value::Cipher(a)) => ev.multiply_plain(&a, &p),
            (_, Value::Plain(_), Value::Plain(_)) => Err(Error::InvalidArgument(
                "both operands are plaintexts: at least one must be a ciphertext".into(),
            )),
        }
    }

    /// `name(args…)` at `column`: an unknown function, a wrong argument count or a missing key
    /// is an error at `column`, a bad rotation step one at the step's column; the evaluator's
    /// errors are located at `column`.
    fn call(&self, name: &str, args: &[Expr], column: usize) -> Result<Value> {
        let Some(&(_, arity, _)) = FUNCTIONS.iter().find(|f| f.0 == name) else {
            let known: Vec<&str> = FUNCTIONS.iter().map(|f| f.0).collect();
            return Err(at(
                column,
                Error::InvalidArgument(format!(
                    "unknown function `{name}` (known: {})",
                    known.join(", ")
                )),
            ));
        };
        if args.len() != arity {
            return Err(at(
                column,
                Error::InvalidArgument(format!(
                    "{name} takes {arity} argument(s), {} given",
                    args.len()
                )),
            ));
        }
        let x = self.cipher(&args[0])?;
        let ev = self.evaluator;
        let galois = || required(self.galois_keys, column, KeyKind::Galois { galois_elt: None, step: None }, || format!("{name} needs Galois keys (--galois-keys)"));
        located(column, match name {
            "square" => ev.square(&x),
            "relin" => {
                let rk = required(self.relin_keys, column, KeyKind::Relin, || {
                    "relin needs relinearization keys (--relin-keys)".into()
                })?;
                ev.relinearize(&x, rk)
            }
            "rescale" => ev.rescale_to_next(&x),
            "bootstrap" => required(self.bootstrapper, column, KeyKind::Circuit, || {
                "bootstrap needs bootstrapping keys (--bootstrap-keys)".into()
            })?
            .bootstrap(&x),
            "mod_switch" => ev.mod_switch_to_next(&x),
            "rotate" => ev.rotate_vector(&x, rotation_step(&args[1])?, galois()?),
            _ => ev.complex_conjugate(&x, galois()?),
        })
    }
}

/// The result of an evaluator call at `column`: a ciphertext value, or the error located there.
fn located(column: usize, r: Result<Ciphertext>) -> Result<Value> {
    r.map(Value::Cipher).map_err(|err| at(column, err))
}

/// `key`, or a `MissingKey` error at `column` saying which option gives it.
fn required<T>(key: Option<&T>, column: usize, kind: KeyKind, message: impl FnOnce() -> String) -> Result<&T> {
    key.ok_or_else(|| at(column, Error::missing_key(kind, message())))
}

/// The step of `rotate(x, k)`: an integer literal that fits an `i32`, else an error at its
/// column.
fn rotation_step(arg: &Expr) -> Result<i32> {
    let steps = int_literal(arg).ok_or_else(|| {
        at(
            arg.column(),
            Error::InvalidArgument("the step of rotate must be an integer".into()),
        )
    })?;
    i32::try_from(steps).map_err(|_| {
        at(
            arg.column(),
            Error::InvalidArgument(format!("step {steps} is out of range")),
        )
    })
}

/// The value of an integer literal, possibly negated (`3`, `-3`, `-(3)`).
fn int_literal(e: &Expr) -> Option<i64> {
    match e {
        Expr::Int { value, .. } => Some(*value),
        Expr::Neg { operand, .. } => int_literal(operand).map(|v| -v),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn err(src: &str) -> String {
        parse(src).unwrap_err().to_string()
    }

    #[test]
    fn precedence_and_columns() {
        let e = parse("a + b * -c").unwrap();
        let Expr::Binary {
            op: BinOp::Add,
            rhs,
            column: 3,
            ..
        } = e
        else {
            panic!("{e:?}")
        };
        let Expr::Binary {
            op: BinOp::Mul,
            rhs: neg,
            column: 7,
            ..
        } = *rhs
        else {
            panic!()
        };
        assert!(matches!(*neg, Expr::Neg { column: 9, .. }));
        let e = parse("rescale(relin(a*b)) - rotate(a, -3)").unwrap();
        assert_eq!(e.names(), vec!["a", "b"]);
        // Left associative: (a - b) - c.
        let Expr::Binary { lhs, rhs, .. } = parse("a - b - c").unwrap() else {
            panic!()
        };
        assert!(matches!(*lhs, Expr::Binary { op: BinOp::Sub, .. }));
        assert!(matches!(*rhs, Expr::Name { column: 9, .. }));
        assert_eq!(int_literal(&parse("-(-3)").unwrap()), Some(3));
    }

    #[test]
    fn syntax_errors_name_the_column() {
        assert_eq!(err("a + "), "expression column 5: invalid argument: expected a name, a number or `(`, found the end of the expression");
        assert_eq!(
            err("relin(a"),
            "expression column 8: invalid argument: expected `)`, found the end of the expression"
        );
        assert_eq!(
            err("a $ b"),
            "expression column 3: invalid argument: unexpected character `$`"
        );
        assert_eq!(
            err("a b"),
            "expression column 3: invalid argument: unexpected `b` after a complete expression"
        );
        assert!(err("99999999999999999999").contains("too large"));
    }

    #[test]
    fn nesting_is_bounded() {
        let wrap =
            |open: &str, n: usize, close: &str| format!("{}x{}", open.repeat(n), close.repeat(n));
        let chain = |op: &str, n: usize| vec!["x"; n].join(op);
        // Far past the bound (what a command line can hold): an error, not a stack overflow.
        for deep in [
            wrap("(", 60_000, ")"),
            wrap("-", 120_000, ""),
            wrap("f(", 40_000, ")"),
            chain("+", 60_000),
            chain("*", 60_000),
        ] {
            assert!(
                err(&deep).contains("nested more than 500 levels"),
                "{}",
                &deep[..20]
            );
        }
        // At the bound: parsed (on a test thread's stack), one past it: refused.
        for (at, past) in [
            (wrap("(", MAX_DEPTH, ")"), wrap("(", MAX_DEPTH + 1, ")")),
            (wrap("-", MAX_DEPTH - 1, ""), wrap("-", MAX_DEPTH, "")),
            (wrap("f(", MAX_DEPTH - 1, ")"), wrap("f(", MAX_DEPTH, ")")),
            (chain("+", MAX_DEPTH), chain("+", MAX_DEPTH + 1)),
            (
                chain("*", MAX_DEPTH),
                format!("({}) * x", chain("-", MAX_DEPTH)),
            ),
        ] {
            assert_eq!(parse(&at).expect("at the bound").names(), ["x"]);
            assert!(err(&past).contains("nested more than"));
        }
    }
}
