//! Generic text output: one [`Table`] type printed as aligned text or as a markdown table, and
//! the number formats every table uses. A leaf: it imports nothing from the crate.

/// Output style of a [`Table`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Style {
    Text,
    Markdown,
}

/// A table of strings; numeric columns are right-aligned.
#[derive(Debug, Clone, Default)]
pub struct Table {
    pub header: Vec<String>,
    pub rows: Vec<Vec<String>>,
    /// Per column: right-align.
    pub right: Vec<bool>,
}

impl Table {
    /// Renders the table; every line ends with `\n`.
    pub fn render(&self, style: Style) -> String {
        let cols = self.header.len();
        let cell = |row: &[String], i: usize| -> String {
            let s = row.get(i).cloned().unwrap_or_default();
            if style == Style::Markdown {
                s.replace('|', "\\|")
            } else {
                s
            }
        };
        let width: Vec<usize> = (0..cols)
            .map(|i| {
                std::iter::once(&self.header)
                    .chain(&self.rows)
                    .map(|r| cell(r, i).chars().count())
                    .max()
                    .unwrap_or(0)
            })
            .collect();
        let right = |i: usize| self.right.get(i).copied().unwrap_or(false);
        let pad = |s: &str, i: usize| {
            let fill = " ".repeat(width[i].saturating_sub(s.chars().count()));
            if right(i) {
                format!("{fill}{s}")
            } else {
                format!("{s}{fill}")
            }
        };
        let line = |row: &[String]| -> String {
            let cells: Vec<String> = (0..cols).map(|i| pad(&cell(row, i), i)).collect();
            match style {
                Style::Text => format!("{}\n", cells.join("  ").trim_end()),
                Style::Markdown => format!("| {} |\n", cells.join(" | ")),
            }
        };
        let mut out = line(&self.header);
        let rule: Vec<String> = (0..cols)
            .map(|i| match style {
                Style::Text => "-".repeat(width[i]),
                Style::Markdown if right(i) => format!("{}:", "-".repeat(width[i].max(3) - 1)),
                Style::Markdown => "-".repeat(width[i].max(3)),
            })
            .collect();
        out.push_str(&match style {
            Style::Text => format!("{}\n", rule.join("  ")),
            Style::Markdown => format!(
                "|{}|\n",
                rule.iter()
                    .map(|r| format!(" {r} "))
                    .collect::<Vec<_>>()
                    .join("|")
            ),
        });
        for r in &self.rows {
            out.push_str(&line(r));
        }
        out
    }
}

/// A value as bench_serving prints it (2 decimals; whole numbers without), `inf`, or `-`.
pub fn fmt_value(v: Option<f64>) -> String {
    match v {
        None => "-".into(),
        Some(x) if x.is_infinite() => "inf".into(),
        Some(x) if x.fract() == 0.0 && x.abs() < 1e15 => format!("{x:.0}"),
        Some(x) => format!("{x:.2}"),
    }
}

/// A compact value for wide tables: 0 decimals from 1000, 1 from 100, else 2.
pub fn fmt_compact(v: Option<f64>) -> String {
    match v {
        None => "-".into(),
        Some(x) if !x.is_finite() => "inf".into(),
        Some(x) if x.abs() >= 1000.0 => format!("{x:.0}"),
        Some(x) if x.abs() >= 100.0 => format!("{x:.1}"),
        Some(x) => format!("{x:.2}"),
    }
}

/// A signed error percentage (`+12.3%`), or `-`.
pub fn fmt_err(v: Option<f64>) -> String {
    match v {
        None => "-".into(),
        Some(x) => format!("{x:+.1}%"),
    }
}
