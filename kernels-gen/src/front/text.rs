//! The `.stencil` text front end.
//!
//! A `.stencil` file holds the same functions a user writes inside the `#[stencil]` macro:
//! kernels marked `#[stencil]` (or `#[stencil(dims = N)]`) and helpers marked
//! `#[stencil_fn]`. The grammar is `stencil.pest` beside this file; [`parse_module`] runs it
//! and turns the parse tree into [`crate::ast`], recording each node's line and column in a
//! [`TextSpans`] table.

use pest::iterators::Pair;
use pest::Parser;

use crate::ast::{
    Attrs, BinOp, BitOp, Block, Comparison, ConstValue, Expr, ExprKind, FnDef, FnKind, Generic,
    GroupDef, Ident, Lit, Module, Param, SpanId, Stmt, TypeExpr, UnOp,
};

mod grammar {
    #[derive(pest_derive::Parser)]
    #[grammar = "front/stencil.pest"]
    pub struct StencilParser;
}
use grammar::{Rule, StencilParser};

mod errors;
pub use errors::SyntaxError;
use errors::{pest_error, Lines};

/// Source positions of a parsed text: SpanId -> (line, column), both 1-based.
#[derive(Clone, Debug, Default)]
pub struct TextSpans {
    /// `positions[id]` is where the node with span `id` starts.
    pub positions: Vec<(usize, usize)>,
}

impl TextSpans {
    /// The 1-based line and column where the node with this span starts.
    pub fn line_col(&self, id: SpanId) -> (usize, usize) {
        self.positions[id as usize]
    }
}

/// Parses a `.stencil` source text into a module and the positions of its nodes.
pub fn parse_module(src: &str) -> Result<(Module, TextSpans), SyntaxError> {
    let lines = Lines::new(src);
    let mut pairs = StencilParser::parse(Rule::module, src).map_err(|e| pest_error(&lines, e))?;
    let mut b = Builder {
        lines,
        positions: Vec::new(),
    };
    let (mut items, mut groups) = (Vec::new(), Vec::new());
    for p in pairs.next().expect("module").into_inner() {
        match p.as_rule() {
            Rule::item => items.push(b.item(p)?),
            Rule::group_item => groups.push(b.group(p)?),
            _ => {}
        }
    }
    Ok((
        Module { items, groups },
        TextSpans {
            positions: b.positions,
        },
    ))
}

fn binop(s: &str) -> BinOp {
    match s {
        "+" => BinOp::Add,
        "-" => BinOp::Sub,
        "*" => BinOp::Mul,
        "/" => BinOp::Div,
        "%" => BinOp::Rem,
        "&&" => BinOp::And,
        "||" => BinOp::Or,
        "==" => BinOp::Compare(Comparison::Eq),
        "!=" => BinOp::Compare(Comparison::Ne),
        "<" => BinOp::Compare(Comparison::Lt),
        "<=" => BinOp::Compare(Comparison::Le),
        ">" => BinOp::Compare(Comparison::Gt),
        ">=" => BinOp::Compare(Comparison::Ge),
        "&" => BinOp::Bit(BitOp::And),
        "|" => BinOp::Bit(BitOp::Or),
        "^" => BinOp::Bit(BitOp::Xor),
        "<<" => BinOp::Bit(BitOp::Shl),
        ">>" => BinOp::Bit(BitOp::Shr),
        other => unreachable!("operator {other}"),
    }
}

/// Turns the parse tree into the AST, assigning span ids.
struct Builder<'s> {
    lines: Lines<'s>,
    positions: Vec<(usize, usize)>,
}

type Res<T> = Result<T, SyntaxError>;

impl Builder<'_> {
    fn span_at(&mut self, offset: usize) -> SpanId {
        self.positions.push(self.lines.line_col(offset));
        (self.positions.len() - 1) as SpanId
    }

    fn span(&mut self, p: &Pair<Rule>) -> SpanId {
        self.span_at(p.as_span().start())
    }

    fn mk(&mut self, offset: usize, kind: ExprKind) -> Expr {
        Expr {
            kind,
            span: self.span_at(offset),
        }
    }

    fn error(&self, p: &Pair<Rule>, message: String) -> SyntaxError {
        self.lines.error(p.as_span().start(), message)
    }

    fn ident(&mut self, p: Pair<Rule>) -> Ident {
        Ident {
            name: p.as_str().to_string(),
            span: self.span(&p),
        }
    }

    /// `#[stencil_group] struct Name<T> { a: T, .. }`
    fn group(&mut self, p: Pair<Rule>) -> Res<GroupDef> {
        let span = self.span(&p);
        let (mut name, mut generic, mut members) = (None, None, Vec::new());
        for c in p.into_inner() {
            match c.as_rule() {
                Rule::ident => name = Some(self.ident(c)),
                Rule::generics => {
                    let params: Vec<Pair<Rule>> = c.into_inner().collect();
                    if let Some(extra) = params.get(1) {
                        let msg = "a parameter group has at most one type parameter; use one, `T`, for every real member";
                        return Err(self.error(extra, msg.to_string()));
                    }
                    let first = params
                        .into_iter()
                        .next()
                        .and_then(|g| g.into_inner().next());
                    generic = first.map(|g| self.ident(g));
                }
                Rule::group_member => {
                    let mut it = c.into_inner().filter(|m| m.as_rule() != Rule::kw_pub);
                    let member = self.ident(it.next().expect("member name"));
                    members.push((member, self.ty(it.next().expect("member type"))));
                }
                _ => {}
            }
        }
        Ok(GroupDef {
            name: name.expect("a group's name"),
            generic,
            members,
            span,
        })
    }

    fn item(&mut self, p: Pair<Rule>) -> Res<FnDef> {
        let span = self.span(&p);
        let (mut kind, mut attrs) = (FnKind::Kernel, Attrs::default());
        let (mut name, mut generics, mut params, mut ret, mut body) =
            (None, Vec::new(), Vec::new(), None, None);
        for c in p.into_inner() {
            match c.as_rule() {
                Rule::attr => {
                    let a = c.into_inner().next().expect("attr");
                    if a.as_rule() == Rule::attr_helper {
                        kind = FnKind::Helper;
                    } else {
                        for opt in a.into_inner().flatten() {
                            if opt.as_rule() == Rule::const_opt {
                                let mut it = opt.into_inner();
                                let name = it.next().expect("constant's name");
                                let mut values = Vec::new();
                                for v in it {
                                    let value = match v.as_rule() {
                                        Rule::kw_true => ConstValue::Bool(true),
                                        Rule::kw_false => ConstValue::Bool(false),
                                        _ => ConstValue::Int(
                                            v.as_str().replace('_', "").parse().map_err(|_| {
                                                self.error(
                                                    &v,
                                                    format!("`{}` is out of range", v.as_str()),
                                                )
                                            })?,
                                        ),
                                    };
                                    values.push((value, self.span(&v)));
                                }
                                let id = self.ident(name.clone());
                                attrs
                                    .add_const(id, values)
                                    .map_err(|m| self.error(&name, m))?;
                                continue;
                            }
                            if opt.as_rule() != Rule::attr_opt {
                                continue;
                            }
                            let mut it = opt.clone().into_inner();
                            let key = it.next().expect("option name");
                            let v = it.next().expect("option value");
                            let int = |n: &Pair<Rule>| {
                                n.as_str().replace('_', "").parse::<u64>().map_err(|_| {
                                    self.error(n, format!("`{}` is out of range", n.as_str()))
                                })
                            };
                            let value = if v.as_rule() == Rule::int_body {
                                crate::ast::AttrValue::Int(int(&v)?)
                            } else if v.as_rule() == Rule::int_list {
                                let ns = v.clone().into_inner().map(|n| int(&n));
                                crate::ast::AttrValue::List(ns.collect::<Result<_, _>>()?)
                            } else {
                                crate::ast::AttrValue::Name(v.as_str().to_string())
                            };
                            let span = self.span(&v);
                            attrs
                                .set(key.as_str(), value, span)
                                .map_err(|m| self.error(&key, m))?;
                        }
                    }
                }
                Rule::ident => name = Some(self.ident(c)),
                Rule::generics => generics = c.into_inner().map(|g| self.generic(g)).collect(),
                Rule::param_list => {
                    for param in c.into_inner().filter(|q| q.as_rule() == Rule::param) {
                        let mut it = param.into_inner().peekable();
                        let when = match it.peek() {
                            Some(w) if w.as_rule() == Rule::param_when => {
                                let flag = it.next().and_then(|w| w.into_inner().next());
                                Some(self.ident(flag.expect("the flag of `when`")))
                            }
                            _ => None,
                        };
                        let name = self.ident(it.next().expect("param name"));
                        let ty = self.ty(it.next().expect("param type"));
                        params.push(Param {
                            name,
                            ty,
                            when,
                            member_of: None,
                        });
                    }
                }
                Rule::ret_type => ret = Some(self.ty(c.into_inner().next().expect("type"))),
                Rule::block => body = Some(self.block(c)?),
                _ => {}
            }
        }
        Ok(FnDef {
            kind,
            attrs,
            name: name.expect("fn name"),
            generics,
            params,
            ret,
            body: body.expect("fn body"),
            span,
        })
    }

    fn generic(&mut self, p: Pair<Rule>) -> Generic {
        let mut it = p.into_inner();
        let name = self.ident(it.next().expect("generic name"));
        let bounds = it.map(|b| self.ident(b)).collect();
        Generic { name, bounds }
    }

    fn ty(&mut self, p: Pair<Rule>) -> TypeExpr {
        let inner = p.into_inner().next().expect("type");
        let span = self.span(&inner);
        match inner.as_rule() {
            Rule::ty_name => TypeExpr::Name(self.ident(inner.into_inner().next().expect("name"))),
            Rule::ty_apply => {
                let mut it = inner.into_inner();
                let head = self.ident(it.next().expect("type head"));
                let args = it.map(|a| self.ty(a)).collect();
                TypeExpr::Apply { head, args, span }
            }
            Rule::ty_tuple => {
                let items = inner.into_inner().map(|t| self.ty(t)).collect();
                TypeExpr::Tuple { items, span }
            }
            _ => {
                let text = inner
                    .as_str()
                    .split_whitespace()
                    .collect::<Vec<_>>()
                    .join(" ");
                TypeExpr::Unsupported {
                    what: format!("`{text}`"),
                    span,
                }
            }
        }
    }

    fn block(&mut self, p: Pair<Rule>) -> Res<Block> {
        let span = self.span(&p);
        let (mut stmts, mut tail, mut open) = (Vec::new(), None, false);
        for c in p.into_inner() {
            match c.as_rule() {
                Rule::rbrace => {}
                Rule::expr => tail = Some(Box::new(self.expr(c)?)),
                _ => {
                    let (stmt, no_semi) = self.stmt(c)?;
                    open = no_semi && matches!(stmt, Stmt::Expr(_));
                    stmts.push(stmt);
                }
            }
        }
        // As in Rust, a final `if`/block without `;` is the block's value.
        if tail.is_none() && open {
            if let Some(Stmt::Expr(e)) = stmts.pop() {
                tail = Some(Box::new(e));
            }
        }
        Ok(Block { stmts, tail, span })
    }

    /// A statement, and whether it is a block-like expression not followed by `;`.
    fn stmt(&mut self, p: Pair<Rule>) -> Res<(Stmt, bool)> {
        let span = self.span(&p);
        let rule = p.as_rule();
        let mut it = p.into_inner();
        let mut next = || it.next().expect("statement part");
        let stmt = match rule {
            Rule::let_tuple => {
                let (mut names, mut init) = (Vec::new(), None);
                for c in it {
                    match c.as_rule() {
                        Rule::tuple_name => {
                            let mut mutable = false;
                            for part in c.into_inner() {
                                match part.as_rule() {
                                    Rule::kw_mut => mutable = true,
                                    _ => names.push((self.ident(part), mutable)),
                                }
                            }
                        }
                        Rule::expr => init = Some(self.expr(c)?),
                        _ => {}
                    }
                }
                let init = init.expect("tuple let value");
                Stmt::LetTuple { names, init, span }
            }
            Rule::let_stmt => {
                let (mut name, mut mutable, mut ty, mut init) = (None, false, None, None);
                for c in it {
                    match c.as_rule() {
                        Rule::kw_mut => mutable = true,
                        Rule::ident => name = Some(self.ident(c)),
                        Rule::ty => ty = Some(self.ty(c)),
                        Rule::expr => init = Some(self.expr(c)?),
                        _ => {}
                    }
                }
                Stmt::Let {
                    name: name.expect("let name"),
                    mutable,
                    ty,
                    init,
                    span,
                }
            }
            // `for var in` and what follows: a range `start..end` or an iterator.
            Rule::for_stmt | Rule::foreach_stmt => {
                next(); // `for`
                let var = self.ident(next());
                next(); // `in`
                let first = self.expr(next())?;
                // A range's `..` or `..=` and its end.
                let range = if rule == Rule::for_stmt {
                    let inclusive = next().as_str() == "..=";
                    Some((inclusive, self.expr(next())?))
                } else {
                    None
                };
                let body = self.block(next())?;
                match range {
                    Some((inclusive, end)) => Stmt::For {
                        var,
                        start: first,
                        end,
                        inclusive,
                        body,
                        span,
                    },
                    None => Stmt::ForEach {
                        var,
                        iter: first,
                        body,
                        span,
                    },
                }
            }
            Rule::assign_stmt => {
                let target = self.expr(next())?;
                let op = next().as_str();
                let op = (op != "=").then(|| binop(op.trim_end_matches('=')));
                let value = self.expr(next())?;
                Stmt::Assign {
                    target,
                    op,
                    value,
                    span,
                }
            }
            _ => {
                let e = self.expr(next())?;
                let no_semi = rule == Rule::blocky_stmt && it.next().is_none();
                let stmt = match e.kind {
                    ExprKind::Unsupported(what) => Stmt::Unsupported { what, span: e.span },
                    _ => Stmt::Expr(e),
                };
                return Ok((stmt, no_semi));
            }
        };
        Ok((stmt, false))
    }

    fn exprs<'i>(&mut self, pairs: impl Iterator<Item = Pair<'i, Rule>>) -> Res<Vec<Expr>> {
        pairs
            .filter(|p| p.as_rule() == Rule::expr)
            .map(|p| self.expr(p))
            .collect()
    }

    fn expr(&mut self, p: Pair<Rule>) -> Res<Expr> {
        let start = p.as_span().start();
        let rule = p.as_rule();
        let kind = match rule {
            Rule::expr
            | Rule::and_expr
            | Rule::cmp_expr
            | Rule::bit_or
            | Rule::bit_xor
            | Rule::bit_and
            | Rule::shift
            | Rule::sum
            | Rule::product => {
                let mut it = p.into_inner();
                let mut lhs = self.expr(it.next().expect("operand"))?;
                while let Some(op) = it.next() {
                    let rhs = self.expr(it.next().expect("operand"))?;
                    let kind = ExprKind::Binary(binop(op.as_str()), Box::new(lhs), Box::new(rhs));
                    lhs = self.mk(start, kind);
                }
                return Ok(lhs);
            }
            Rule::cast => {
                let mut it = p.into_inner();
                let mut e = self.expr(it.next().expect("operand"))?;
                while it.next().is_some() {
                    let ty = self.ty(it.next().expect("type"));
                    e = self.mk(start, ExprKind::Cast(Box::new(e), ty));
                }
                return Ok(e);
            }
            Rule::unary => {
                let mut parts: Vec<_> = p.into_inner().collect();
                let mut e = self.expr(parts.pop().expect("operand"))?;
                for op in parts.into_iter().rev() {
                    let un = if op.as_str() == "-" {
                        UnOp::Neg
                    } else {
                        UnOp::Not
                    };
                    e = self.mk(op.as_span().start(), ExprKind::Unary(un, Box::new(e)));
                }
                return Ok(e);
            }
            Rule::postfix => {
                let mut it = p.into_inner();
                let mut e = self.expr(it.next().expect("primary"))?;
                for op in it {
                    let kind = if op.as_rule() == Rule::member {
                        let member = self.ident(op.into_inner().next().expect("member"));
                        ExprKind::Member {
                            base: Box::new(e),
                            member,
                        }
                    } else if op.as_rule() == Rule::method {
                        let mut parts = op.into_inner();
                        let method = self.ident(parts.next().expect("method"));
                        let args = self.exprs(parts.next().expect("args").into_inner())?;
                        let receiver = Box::new(e);
                        ExprKind::MethodCall {
                            receiver,
                            method,
                            args,
                        }
                    } else {
                        let inner = op.into_inner().next().expect("offset");
                        let offsets = if inner.as_rule() == Rule::offsets {
                            self.exprs(inner.into_inner())?
                        } else {
                            vec![self.expr(inner)?]
                        };
                        ExprKind::Index {
                            base: Box::new(e),
                            offsets,
                        }
                    };
                    e = self.mk(start, kind);
                }
                return Ok(e);
            }
            Rule::paren => ExprKind::Paren(Box::new(self.expr(p.into_inner().next().expect("e"))?)),
            Rule::tuple => ExprKind::Tuple(
                p.into_inner()
                    .filter(|c| c.as_rule() == Rule::expr)
                    .map(|c| self.expr(c))
                    .collect::<Res<Vec<_>>>()?,
            ),
            Rule::call => {
                let mut it = p.into_inner();
                let func = self.ident(it.next().expect("callee"));
                let args = self.exprs(it.next().expect("args").into_inner())?;
                ExprKind::Call { func, args }
            }
            Rule::group_lit => {
                let mut it = p.into_inner();
                let name = self.ident(it.next().expect("group name"));
                let mut members = Vec::new();
                for v in it.filter(|v| v.as_rule() == Rule::group_value) {
                    let mut parts = v.into_inner();
                    let member = self.ident(parts.next().expect("member"));
                    members.push((member, self.expr(parts.next().expect("value"))?));
                }
                ExprKind::GroupLit { name, members }
            }
            Rule::if_expr => {
                let mut it = p.into_inner().skip(1);
                let cond = Box::new(self.expr(it.next().expect("condition"))?);
                let then = self.block(it.next().expect("then block"))?;
                let otherwise = match it.nth(1) {
                    Some(e) => Some(Box::new(self.expr(e)?)),
                    None => None,
                };
                ExprKind::If {
                    cond,
                    then,
                    otherwise,
                }
            }
            Rule::block => ExprKind::Block(self.block(p)?),
            Rule::float_lit | Rule::int_lit => ExprKind::Lit(self.literal(p)?),
            Rule::kw_true => ExprKind::Lit(Lit::Bool(true)),
            Rule::kw_break => ExprKind::Break,
            Rule::kw_continue => ExprKind::Continue,
            Rule::kw_false => ExprKind::Lit(Lit::Bool(false)),
            Rule::ident => ExprKind::Name(self.ident(p)),
            Rule::while_expr => ExprKind::Unsupported("`while` loop".into()),
            Rule::loop_expr => ExprKind::Unsupported("`loop`".into()),
            Rule::match_expr => ExprKind::Unsupported("`match`".into()),
            Rule::return_expr => ExprKind::Unsupported("`return`".into()),
            other => unreachable!("expression rule {other:?}"),
        };
        Ok(self.mk(start, kind))
    }

    fn literal(&mut self, p: Pair<Rule>) -> Res<Lit> {
        let is_float = p.as_rule() == Rule::float_lit;
        let mut it = p.clone().into_inner();
        let body = it.next().expect("digits").as_str().replace('_', "");
        let suffix = it.next().map(|s| s.as_str().to_string());
        let float_suffix = matches!(suffix.as_deref(), Some("f32" | "f64"));
        if is_float || float_suffix {
            if let (Some(s), false) = (&suffix, float_suffix) {
                let msg = format!("invalid suffix `{s}` for a float literal");
                return Err(self.error(&p, msg));
            }
            let v = body
                .parse::<f64>()
                .map_err(|e| self.error(&p, e.to_string()))?;
            return Ok(Lit::Float(v, suffix));
        }
        let v = body
            .parse::<i64>()
            .map_err(|_| self.error(&p, "integer literal is too large".into()))?;
        Ok(Lit::Int(v, suffix))
    }
}

#[cfg(test)]
mod tests;
