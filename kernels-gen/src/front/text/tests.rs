//! The text front end's parse trees, checked by their shape.

use super::*;

const SRC: &str = r#"
// line comments and /* block comments */
#[stencil]
fn jacobi<T: Real>(u: In<T>, f: In<T>, out: Out<T>, h2: T, omega: T) {
    let r = (u[(-1, 0)] + u[(1, 0)] + u[(0, -1)] + u[(0, 1)] + h2 * f) * 0.25;
    out = u + omega * (r - u);
}

#[stencil_fn]
pub fn minmod<T: Real + Copy>(a: T, b: T, c: T) -> T {
    if a > 0.0 && b > 0.0 && c > 0.0 { a.min(b).min(c) }
    else if a < 0.0 && b < 0.0 && c < 0.0 { a.max(b).max(c) } else { 0.0 }
}

/* a /* nested */ block comment */
#[stencil(dims = 1)]
fn cfl<T: Real>(h: In<T>, hu: In<T>, speed: Max<T>, g: T) {
    let mut s = 0.0;
    for k in 0..3 { s += (k as T) * h[(k - 1,)]; }
    if h > 1e-6 { speed.reduce((hu / h).abs() + (g * h).sqrt()); }
}
"#;

fn parse_expr(text: &str) -> Expr {
    let src = format!("#[stencil_fn] fn f(x: T) -> T {{ {text} }}");
    let (m, _) = parse_module(&src).unwrap_or_else(|e| panic!("{e}"));
    *m.items[0].body.tail.clone().expect("tail")
}

/// A compact rendering of an expression's shape.
fn show(e: &Expr) -> String {
    match &e.kind {
        ExprKind::Lit(Lit::Float(v, s)) => format!("{v}{}", s.as_deref().unwrap_or("")),
        ExprKind::Lit(Lit::Int(v, _)) => format!("{v}i"),
        ExprKind::Lit(Lit::Bool(b)) => b.to_string(),
        ExprKind::Name(n) => n.name.clone(),
        ExprKind::Unary(op, x) => format!("{op:?}({})", show(x)),
        ExprKind::Binary(BinOp::Compare(c), a, b) => format!("{c:?}({}, {})", show(a), show(b)),
        ExprKind::Binary(op, a, b) => format!("{op:?}({}, {})", show(a), show(b)),
        ExprKind::Call { func, args } => format!("{}({})", func.name, list(args)),
        ExprKind::MethodCall {
            receiver,
            method,
            args,
        } => format!("{}.{}({})", show(receiver), method.name, list(args)),
        ExprKind::Index { base, offsets } => format!("{}[{}]", show(base), list(offsets)),
        ExprKind::Member { base, member } => format!("{}.{}", show(base), member.name),
        ExprKind::If {
            cond, otherwise, ..
        } => format!(
            "if {} else {:?}",
            show(cond),
            otherwise.as_ref().map(|e| show(e))
        ),
        ExprKind::Block(b) => {
            format!("{{{}}}", b.tail.as_ref().map_or(String::new(), |e| show(e)))
        }
        ExprKind::Cast(x, _) => format!("Cast({})", show(x)),
        ExprKind::Paren(x) => format!("({})", show(x)),
        ExprKind::Unsupported(w) => format!("unsupported {w}"),
        ExprKind::Tuple(items) => format!("({})", list(items)),
        ExprKind::Break => "break".into(),
        ExprKind::Continue => "continue".into(),
        ExprKind::GroupLit { name, members } => {
            let members: Vec<String> = members
                .iter()
                .map(|(m, v)| format!("{}: {}", m.name, show(v)))
                .collect();
            format!("{} {{ {} }}", name.name, members.join(", "))
        }
    }
}

fn list(es: &[Expr]) -> String {
    es.iter().map(show).collect::<Vec<_>>().join(", ")
}

#[test]
fn parses_the_examples() {
    let (m, spans) = parse_module(SRC).unwrap_or_else(|e| panic!("{e}"));
    let names: Vec<_> = m.items.iter().map(|f| f.name.name.as_str()).collect();
    assert_eq!(names, ["jacobi", "minmod", "cfl"]);
    let kinds: Vec<_> = m.items.iter().map(|f| f.kind).collect();
    assert_eq!(kinds, [FnKind::Kernel, FnKind::Helper, FnKind::Kernel]);

    let jacobi = &m.items[0];
    assert_eq!(jacobi.params.len(), 5);
    assert!(jacobi.attrs.dims.is_none() && jacobi.ret.is_none());
    assert!(
        matches!(&jacobi.params[0].ty, TypeExpr::Apply { head, args, .. }
        if head.name == "In" && matches!(&args[0], TypeExpr::Name(n) if n.name == "T"))
    );
    assert_eq!(jacobi.generics[0].name.name, "T");
    assert_eq!(spans.line_col(jacobi.span), (3, 1));
    assert_eq!(spans.line_col(jacobi.name.span), (4, 4));
    let [Stmt::Let {
        init: Some(init), ..
    }, Stmt::Assign {
        target,
        op: None,
        value,
        ..
    }] = &jacobi.body.stmts[..]
    else {
        panic!("jacobi body: {:?}", jacobi.body.stmts);
    };
    assert_eq!(
        show(init),
        "Mul((Add(Add(Add(Add(u[Neg(1i), 0i], u[1i, 0i]), u[0i, Neg(1i)]), u[0i, 1i]), \
         Mul(h2, f))), 0.25)"
    );
    assert_eq!(show(target), "out");
    assert_eq!(show(value), "Add(u, Mul(omega, (Sub(r, u))))");
    assert_eq!(spans.line_col(value.span), (6, 11));

    let minmod = &m.items[1];
    assert_eq!(minmod.generics[0].bounds.len(), 2);
    assert!(matches!(&minmod.ret, Some(TypeExpr::Name(n)) if n.name == "T"));
    assert!(minmod.body.stmts.is_empty());
    let tail = show(minmod.body.tail.as_deref().expect("if tail"));
    assert!(tail.starts_with("if And(And(Gt(a, 0), Gt(b, 0)), Gt(c, 0)) else Some(\"if "));
    assert!(tail.ends_with("else Some(\\\"{0}\\\")\")"), "{tail}");

    let cfl = &m.items[2];
    assert_eq!(cfl.attrs.dims.as_ref().map(|d| d.0.clone()), Some(vec![1]));
    assert!(matches!(
        &cfl.body.stmts[0],
        Stmt::Let { mutable: true, .. }
    ));
    let Stmt::For {
        var,
        inclusive: false,
        body,
        ..
    } = &cfl.body.stmts[1]
    else {
        panic!("for loop");
    };
    assert_eq!(var.name, "k");
    let Stmt::Assign {
        op: Some(BinOp::Add),
        value,
        ..
    } = &body.stmts[0]
    else {
        panic!("compound assignment");
    };
    assert_eq!(show(value), "Mul((Cast(k)), h[Sub(k, 1i)])");
    // The final `if` statement without `;` is the block's tail, as in Rust.
    let tail = show(cfl.body.tail.as_deref().expect("if"));
    assert_eq!(tail, "if Gt(h, 0.000001) else None");
}

#[test]
fn precedence_and_postfix() {
    for (text, shape) in [
        ("a + b * c", "Add(a, Mul(b, c))"),
        ("-x as T", "Cast(Neg(x))"),
        ("-x.abs()", "Neg(x.abs())"),
        ("x.abs().min(y)", "x.abs().min(y)"),
        // A member of a group, then a method of it; `1.5` stays a number.
        ("s.g.sqrt() * 1.5", "Mul(s.g.sqrt(), 1.5)"),
        ("a * b as f64", "Mul(a, Cast(b))"),
        ("a || b && !c == d", "Or(a, And(b, Eq(Not(c), d)))"),
        ("a - b - c % d", "Sub(Sub(a, b), Rem(c, d))"),
        ("u[k - 1] + v[(1,)]", "Add(u[Sub(k, 1i)], v[1i])"),
        ("max(1_000, 2i64)", "max(1000i, 2i)"),
        (
            "1.0f64 + 2.5_f32 + 2e-3 + 1.5e+3 + 1.",
            "Add(Add(Add(Add(1f64, 2.5f32), 0.002), 1500), 1)",
        ),
        ("{ let y = 1; y }", "{y}"),
        ("if_x + index", "Add(if_x, index)"),
        // A group built at a call; a name before a block is not one.
        (
            "f(Pair { a: u, b: v[(1, 0)] + 1.0 }, k)",
            "f(Pair { a: u, b: Add(v[1i, 0i], 1) }, k)",
        ),
        ("if x { y } else { z }", "if x else Some(\"{z}\")"),
    ] {
        assert_eq!(show(&parse_expr(text)), shape, "{text}");
    }
    assert!(parse_module("#[stencil_fn] fn f() -> T { a < b < c }").is_err());
}

#[test]
fn a_group_with_two_type_parameters_is_refused_at_the_second() {
    let text = "#[stencil_group] struct Pair<T, U> { a: T, b: U }";
    let e = parse_module(text).expect_err("two type parameters");
    assert!(e.to_string().contains("at most one type parameter"), "{e}");
    assert!(parse_module("#[stencil_group] struct Pair<T> { a: T, b: T }").is_ok());
}

#[test]
fn unsupported_forms() {
    let src = "#[stencil] fn k(a: &T, b: [T; 3]) {\n    while x < 3 { x += 1; }\n    loop {}\n    return;\n}";
    let (m, spans) = parse_module(src).unwrap_or_else(|e| panic!("{e}"));
    let f = &m.items[0];
    assert!(matches!(&f.params[0].ty, TypeExpr::Unsupported { what, .. } if what == "`&T`"));
    assert!(matches!(&f.params[1].ty, TypeExpr::Unsupported { what, .. } if what == "`[T; 3]`"));
    let whats: Vec<_> = f
        .body
        .stmts
        .iter()
        .map(|s| match s {
            Stmt::Unsupported { what, span } => (what.as_str(), spans.line_col(*span).0),
            _ => panic!("{s:?}"),
        })
        .collect();
    assert_eq!(whats, [("`while` loop", 2), ("`loop`", 3), ("`return`", 4)]);
}

#[test]
fn syntax_errors_point_at_the_problem() {
    let src =
        "#[stencil]\nfn k(u: In<T>, out: Out<T>) {\n    let r = u[(1, 0)] + u\n    out = r;\n}\n";
    let e = parse_module(src).unwrap_err();
    assert_eq!((e.line, e.col), (3, 26), "{e}");
    assert!(
        e.message.contains("expected") && e.message.contains("`;`"),
        "{e}"
    );
    assert!(e.message.ends_with("found `out`"), "{e}");
    assert!(!e.message.contains("expr"), "{e}");

    let e = parse_module("#[stencil]\nfn k(u: In<T>) {\n    let r = u + ;\n}").unwrap_err();
    assert_eq!((e.line, e.col), (3, 17), "{e}");
    assert_eq!(
        e.to_string(),
        "line 3, column 17: expected an expression, found `;`"
    );

    let e = parse_module("#[stencil]\nfn k(u: In<T>) {\n    for k 0..3 {}\n}").unwrap_err();
    assert_eq!(
        (e.line, e.col, e.message.as_str()),
        (3, 11, "expected `in`, found `0`")
    );

    let e = parse_module("#[inline]\nfn k() {}").unwrap_err();
    assert_eq!((e.line, e.col), (1, 3), "{e}");
    assert_eq!(
        e.message,
        "expected `stencil` or `stencil_fn`, found `inline`"
    );
    let e = parse_module("#[stencil(dim = 2)]\nfn k() {}").unwrap_err();
    assert_eq!((e.line, e.col), (1, 11), "{e}");
}
