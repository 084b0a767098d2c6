//! Syntax errors of the text front end: byte offsets to lines and columns, and pest's
//! errors turned into "expected ..., found ..." messages at the right token.

use super::Rule;
use pest::error::{ErrorVariant, InputLocation};
use std::collections::HashSet;
use std::fmt;

/// A syntax error with 1-based line and column and a message saying what was expected.
#[derive(Debug, Clone)]
pub struct SyntaxError {
    /// 1-based line.
    pub line: usize,
    /// 1-based column, in characters.
    pub col: usize,
    /// What was expected and what was found.
    pub message: String,
}

impl fmt::Display for SyntaxError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "line {}, column {}: {}",
            self.line, self.col, self.message
        )
    }
}

impl std::error::Error for SyntaxError {}

/// Line starts of a text, to turn byte offsets into 1-based lines and columns.
pub(super) struct Lines<'s> {
    pub(super) src: &'s str,
    pub(super) starts: Vec<usize>,
}

impl<'s> Lines<'s> {
    pub(super) fn new(src: &'s str) -> Self {
        let starts = std::iter::once(0)
            .chain(src.match_indices('\n').map(|(i, _)| i + 1))
            .collect();
        Lines { src, starts }
    }

    pub(super) fn line_col(&self, offset: usize) -> (usize, usize) {
        let line = self.starts.partition_point(|&s| s <= offset);
        let start = self.starts[line - 1];
        (line, self.src[start..offset].chars().count() + 1)
    }

    pub(super) fn error(&self, offset: usize, message: String) -> SyntaxError {
        let (line, col) = self.line_col(offset);
        SyntaxError { line, col, message }
    }
}

/// The readable name of a grammar rule in "expected ..." messages.
pub(super) fn describe(rule: &Rule) -> String {
    let s = match rule {
        Rule::EOI => "end of input",
        Rule::module | Rule::item | Rule::attr => "a function with `#[stencil]` or `#[stencil_fn]`",
        Rule::num_suffix => "a literal suffix such as `f64`",
        Rule::attr_opts => "`(`",
        Rule::attr_opt => "an option such as `dims = 2`",
        Rule::attr_helper | Rule::attr_kernel => "`stencil` or `stencil_fn`",
        Rule::ident | Rule::ty_name => "an identifier",
        Rule::generics => "`<`",
        Rule::generic => "a generic parameter",
        Rule::param_list => "`(`",
        Rule::param => "a parameter",
        Rule::ret_type => "`->`",
        Rule::ty | Rule::ty_apply | Rule::ty_other => "a type",
        Rule::block | Rule::braces => "`{`",
        Rule::semi => "`;`",
        Rule::rparen => "`)`",
        Rule::rbracket => "`]`",
        Rule::rbrace => "`}`",
        Rule::let_stmt | Rule::for_stmt | Rule::blocky_stmt | Rule::assign_stmt => "a statement",
        Rule::expr_stmt => "a statement",
        Rule::range_op => "`..` or `..=`",
        Rule::assign_op => "`=`",
        Rule::or_op
        | Rule::and_op
        | Rule::cmp_op
        | Rule::add_op
        | Rule::mul_op
        | Rule::bit_or_op
        | Rule::bit_xor_op
        | Rule::bit_and_op
        | Rule::shift_op => "an operator",
        Rule::method | Rule::member => "`.`",
        Rule::group_item => "a `#[stencil_group]` struct",
        Rule::group_member => "a member such as `g: T`",
        Rule::kw_struct => "`struct`",
        Rule::index => "`[`",
        Rule::call_args => "`(`",
        Rule::offsets => "an offset",
        Rule::kw_fn => "`fn`",
        Rule::kw_pub => "`pub`",
        Rule::kw_mut => "`mut`",
        Rule::kw_in => "`in`",
        Rule::kw_as => "`as`",
        Rule::kw_else => "`else`",
        Rule::int_body => "an integer",
        Rule::int_list => "a list of integers",
        _ => "an expression",
    };
    s.to_string()
}

/// Turns a pest error into a [`SyntaxError`] with readable expectations.
pub(super) fn pest_error(lines: &Lines, mut e: pest::error::Error<Rule>) -> SyntaxError {
    let mut pos = match e.location {
        InputLocation::Pos(p) | InputLocation::Span((p, _)) => p,
    };
    let found = token_at(lines.src, pos);
    if let ErrorVariant::ParsingError { positives, .. } = &mut e.variant {
        if positives.contains(&Rule::semi) {
            // Like rustc, point a missing `;` at the end of the line that lacks it.
            let end = end_of_previous_token(lines.src, pos);
            if lines.src[end..pos].contains('\n') {
                pos = end;
            }
        }
        let mut seen = HashSet::new();
        positives.retain(|r| seen.insert(describe(r)));
        if seen.contains("a statement") {
            positives.retain(|r| describe(r) != "an expression");
        }
        // Closing punctuation first, then operators, as rustc lists them.
        positives.sort_by_key(|r| match r {
            Rule::semi | Rule::rparen | Rule::rbracket | Rule::rbrace => 0,
            _ if describe(r) == "an operator" => 1,
            _ => 2,
        });
    }
    let expected = e.renamed_rules(describe).variant.message().into_owned();
    lines.error(pos, format!("{expected}, found {found}"))
}

/// The token starting at `pos`, quoted, for error messages.
pub(super) fn token_at(src: &str, pos: usize) -> String {
    let rest = &src[pos..];
    let word = |c: &char| c.is_alphanumeric() || *c == '_';
    match rest.chars().next() {
        None => "end of input".to_string(),
        Some(c) if word(&c) => format!("`{}`", rest.chars().take_while(word).collect::<String>()),
        Some(c) => format!("`{c}`"),
    }
}

/// The offset just after the last token before `pos`, skipping whitespace and comments.
pub(super) fn end_of_previous_token(src: &str, mut pos: usize) -> usize {
    loop {
        let text = src[..pos].trim_end();
        let line_start = text.rfind('\n').map_or(0, |i| i + 1);
        if let Some(c) = text[line_start..].find("//") {
            pos = line_start + c;
        } else if let Some(open) = text.strip_suffix("*/").and_then(|t| t.rfind("/*")) {
            pos = open;
        } else {
            return text.len();
        }
    }
}
