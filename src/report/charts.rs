//! SVG charts drawn with plotters' SVG backend: line/scatter charts (linear or log axes) and
//! horizontal grouped bar charts. Text is emitted as SVG `<text>` with plotters' built-in
//! size estimate, so no font file or fontconfig is needed, and the output is a pure function
//! of the data (integer pixel coordinates, fixed palette): the same bytes on every machine.
use plotters::coord::ranged1d::{AsRangedCoord, ValueFormatter};
use plotters::coord::Shift;
use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, Pos, VPos};

/// Colour-blind-friendly palette (Okabe–Ito, then greys); series cycle through it.
const PALETTE: [RGBColor; 8] = [
    RGBColor(0, 114, 178),
    RGBColor(213, 94, 0),
    RGBColor(0, 158, 115),
    RGBColor(204, 121, 167),
    RGBColor(230, 159, 0),
    RGBColor(86, 180, 233),
    RGBColor(120, 120, 120),
    RGBColor(40, 40, 40),
];

/// The palette colour `i` (cycling).
pub fn color(i: usize) -> RGBColor {
    PALETTE[i % PALETTE.len()]
}

const FONT: &str = "sans-serif";

/// How a series is drawn.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Mark {
    Line,
    LinePoints,
    Dashed,
    Points,
}

/// One named series of (x, y) points; non-finite points are skipped.
#[derive(Debug, Clone)]
pub struct Series {
    pub label: String,
    pub points: Vec<(f64, f64)>,
    /// Palette index.
    pub color: usize,
    pub mark: Mark,
}

/// An axis: its title and whether it is logarithmic (non-positive values are then skipped).
#[derive(Debug, Clone)]
pub struct Scale {
    pub label: String,
    pub log: bool,
}

impl Scale {
    pub fn linear(label: &str) -> Scale {
        Scale {
            label: label.into(),
            log: false,
        }
    }
    pub fn log(label: &str) -> Scale {
        Scale {
            label: label.into(),
            log: true,
        }
    }
    fn keeps(&self, v: f64) -> bool {
        v.is_finite() && (!self.log || v > 0.0)
    }
}

/// A line or scatter chart.
#[derive(Debug, Clone)]
pub struct LineChart {
    pub title: String,
    pub x: Scale,
    pub y: Scale,
    pub series: Vec<Series>,
}

/// A horizontal grouped bar chart: one row per category, one bar per group in each row.
#[derive(Debug, Clone)]
pub struct BarChart {
    pub title: String,
    /// The value axis (horizontal).
    pub value: Scale,
    pub categories: Vec<String>,
    /// (group label, one value per category).
    pub groups: Vec<(String, Vec<Option<f64>>)>,
}

const WIDTH: u32 = 900;
const HEIGHT: u32 = 480;

/// Pixel height of one legend row.
const LEGEND_ROW: u32 = 18;

/// A tick label: [`compact`], and on a log axis only at 1, 2 and 5 × 10ⁿ (the other ticks
/// crowd the decade's top).
fn tick(v: f64, log: bool) -> String {
    if log && v > 0.0 {
        let mantissa = v / 10f64.powf(v.log10().floor());
        if ![1.0, 2.0, 5.0].iter().any(|m| (mantissa - m).abs() < 1e-6) {
            return String::new();
        }
    }
    compact(v)
}

/// Axis tick labels: at most 4 significant digits, k/M suffixes for large values.
pub fn compact(v: f64) -> String {
    let a = v.abs();
    let trim = |s: String| {
        if s.contains('.') {
            s.trim_end_matches('0').trim_end_matches('.').to_string()
        } else {
            s
        }
    };
    if a >= 1e6 {
        format!("{}M", trim(format!("{:.2}", v / 1e6)))
    } else if a >= 1e4 {
        format!("{}k", trim(format!("{:.1}", v / 1e3)))
    } else if a >= 100.0 || a == 0.0 {
        format!("{v:.0}")
    } else if a >= 1.0 {
        trim(format!("{v:.2}"))
    } else {
        trim(format!("{v:.4}"))
    }
}

/// The (min, max) of `values` kept by `scale`, widened so the data does not touch the frame.
fn bounds(values: impl Iterator<Item = f64>, scale: &Scale, from_zero: bool) -> (f64, f64) {
    let (mut lo, mut hi) = values
        .filter(|v| scale.keeps(*v))
        .fold((f64::INFINITY, f64::NEG_INFINITY), |(l, h), v| {
            (l.min(v), h.max(v))
        });
    if !lo.is_finite() {
        (lo, hi) = (1.0, 10.0);
    }
    if scale.log {
        if hi <= lo {
            hi = lo * 10.0;
        }
        return (lo / 1.25, hi * 1.25);
    }
    if from_zero && lo >= 0.0 {
        lo = 0.0;
    }
    if hi <= lo {
        hi = lo + lo.abs().max(1.0);
    }
    let pad = (hi - lo) * 0.05;
    (
        if from_zero && lo == 0.0 {
            0.0
        } else {
            lo - pad
        },
        hi + pad,
    )
}

type Area<'a> = DrawingArea<SVGBackend<'a>, Shift>;

/// Draws `draw` onto a fresh SVG of `size` and returns the document (without an XML prolog,
/// so it can be inlined in HTML as is).
fn render(size: (u32, u32), draw: impl FnOnce(&Area) -> Result<(), String>) -> String {
    let mut svg = String::new();
    let result = {
        let root = SVGBackend::with_string(&mut svg, size).into_drawing_area();
        root.fill(&WHITE)
            .map_err(|e| e.to_string())
            .and_then(|_| draw(&root))
            .and_then(|_| root.present().map_err(|e| e.to_string()))
    };
    match result {
        Ok(()) => svg,
        Err(e) => error_svg(size, &e),
    }
}

fn error_svg(size: (u32, u32), msg: &str) -> String {
    format!(
        "<svg width=\"{}\" height=\"{}\" xmlns=\"http://www.w3.org/2000/svg\"><text x=\"10\" y=\"20\">chart not drawn: {}</text></svg>\n",
        size.0,
        size.1,
        super::markup::escape(msg)
    )
}

impl LineChart {
    /// The chart as an SVG document.
    pub fn svg(&self) -> String {
        let xs = self
            .series
            .iter()
            .flat_map(|s| s.points.iter().map(|p| p.0));
        let ys = self
            .series
            .iter()
            .flat_map(|s| s.points.iter().map(|p| p.1));
        let (x0, x1) = bounds(xs, &self.x, false);
        let (y0, y1) = bounds(ys, &self.y, true);
        let labels = self.series.iter().filter(|s| !s.label.is_empty());
        let widest = labels.map(|s| s.label.chars().count()).max();
        let legend_w = widest.map_or(0, |n| (40 + 7 * n as u32).clamp(120, 420));
        render((WIDTH + legend_w, HEIGHT), |root| {
            let (plot, legend) = root.split_horizontally(WIDTH);
            match (self.x.log, self.y.log) {
                (false, false) => self.draw(&plot, x0..x1, y0..y1),
                (true, false) => self.draw(&plot, (x0..x1).log_scale(), y0..y1),
                (false, true) => self.draw(&plot, x0..x1, (y0..y1).log_scale()),
                (true, true) => self.draw(&plot, (x0..x1).log_scale(), (y0..y1).log_scale()),
            }?;
            self.draw_legend(&legend)
        })
    }

    /// One row per labelled series (sample and label), top to bottom, in the column right of
    /// the plot; rows that do not fit are summarised in a last row.
    fn draw_legend(&self, area: &Area) -> Result<(), String> {
        let err = |e: DrawingAreaErrorKind<_>| e.to_string();
        let labelled: Vec<&Series> = self.series.iter().filter(|s| !s.label.is_empty()).collect();
        let fits = ((HEIGHT - 60) / LEGEND_ROW) as usize;
        let style = TextStyle::from((FONT, 12).into_font())
            .color(&BLACK)
            .pos(Pos::new(HPos::Left, VPos::Center));
        for (i, s) in labelled.iter().take(fits).enumerate() {
            let y = 48 + (i as u32 * LEGEND_ROW) as i32;
            let c = color(s.color);
            let (outer, middle, dot, gap) = glyph_styles(s.mark, c);
            area.draw(
                &(EmptyElement::at((4, y))
                    + PathElement::new(vec![(0, 0), (7 - gap, 0)], outer)
                    + PathElement::new(vec![(11 + gap, 0), (18, 0)], outer)
                    + PathElement::new(vec![(7, 0), (11, 0)], middle)
                    + Circle::new((9, 0), 3, dot)),
            )
            .map_err(err)?;
            area.draw(&Text::new(s.label.as_str(), (28, y), style.clone()))
                .map_err(err)?;
        }
        if labelled.len() > fits {
            let y = 48 + (fits as u32 * LEGEND_ROW) as i32;
            let more = format!("… {} more series", labelled.len() - fits);
            area.draw(&Text::new(more, (28, y), style)).map_err(err)?;
        }
        Ok(())
    }

    fn draw<X, Y>(&self, root: &Area, x: X, y: Y) -> Result<(), String>
    where
        X: AsRangedCoord<Value = f64>,
        Y: AsRangedCoord<Value = f64>,
        X::CoordDescType: ValueFormatter<f64>,
        Y::CoordDescType: ValueFormatter<f64>,
    {
        let err = |e: DrawingAreaErrorKind<_>| e.to_string();
        let mut chart = ChartBuilder::on(root)
            .caption(&self.title, (FONT, 20))
            .margin(12)
            .x_label_area_size(44)
            .y_label_area_size(64)
            .build_cartesian_2d(x, y)
            .map_err(err)?;
        chart
            .configure_mesh()
            .x_desc(self.x.label.as_str())
            .y_desc(self.y.label.as_str())
            // At most 8 ticks a side: 10 labels of "12.34k" crowd a 900-px axis.
            .x_labels(8)
            .y_labels(8)
            .x_label_formatter(&|v| tick(*v, self.x.log))
            .y_label_formatter(&|v| tick(*v, self.y.log))
            .label_style((FONT, 13))
            .light_line_style(RGBColor(240, 240, 240))
            .draw()
            .map_err(err)?;
        for s in &self.series {
            let c = color(s.color);
            let pts: Vec<(f64, f64)> = s
                .points
                .iter()
                .copied()
                .filter(|&(a, b)| self.x.keeps(a) && self.y.keeps(b))
                .collect();
            let line = c.stroke_width(2);
            match s.mark {
                Mark::Line | Mark::LinePoints => chart
                    .draw_series(LineSeries::new(pts.clone(), line))
                    .map_err(err)?,
                Mark::Dashed => chart
                    .draw_series(DashedLineSeries::new(pts.clone(), 6, 4, line))
                    .map_err(err)?,
                Mark::Points => chart
                    .draw_series(pts.iter().map(|p| Circle::new(*p, 3, c.filled())))
                    .map_err(err)?,
            };
            if s.mark == Mark::LinePoints {
                chart
                    .draw_series(pts.iter().map(|p| Circle::new(*p, 3, c.filled())))
                    .map_err(err)?;
            }
        }
        Ok(())
    }
}

/// Styles of a legend sample of `mark`: (outer segments, middle segment, dot, gap). The
/// sample is two outer segments, a middle one and a dot; parts a mark lacks are transparent,
/// so every mark draws as one element type.
fn glyph_styles(mark: Mark, c: RGBColor) -> (ShapeStyle, ShapeStyle, ShapeStyle, i32) {
    let clear = c.mix(0.0);
    let (line, gap, dot) = match mark {
        Mark::Line => (true, 0, false),
        Mark::Dashed => (true, 2, false),
        Mark::Points => (false, 0, true),
        Mark::LinePoints => (true, 0, true),
    };
    let outer = if line {
        c.stroke_width(2)
    } else {
        clear.stroke_width(2)
    };
    let middle = if line && gap == 0 {
        outer
    } else {
        clear.stroke_width(2)
    };
    let fill = if dot { c.filled() } else { clear.filled() };
    (outer, middle, fill, gap)
}

/// Pixel height of one category row of a bar chart.
const BAR_ROW: u32 = 22;

impl BarChart {
    /// The chart as an SVG document.
    pub fn svg(&self) -> String {
        let values = self
            .groups
            .iter()
            .flat_map(|(_, v)| v.iter().flatten().copied());
        let (v0, v1) = bounds(values, &self.value, true);
        let n = self.categories.len().max(1);
        let height = 110 + BAR_ROW * n as u32;
        render((WIDTH, height), |root| {
            if self.value.log {
                self.draw(root, (v0..v1).log_scale(), v0)
            } else {
                self.draw(root, v0..v1, v0)
            }
        })
    }

    fn draw<X>(&self, root: &Area, x: X, base: f64) -> Result<(), String>
    where
        X: AsRangedCoord<Value = f64>,
        X::CoordDescType: ValueFormatter<f64>,
    {
        let err = |e: DrawingAreaErrorKind<_>| e.to_string();
        let n = self.categories.len().max(1) as f64;
        let mut chart = ChartBuilder::on(root)
            .caption(&self.title, (FONT, 20))
            .margin(12)
            .x_label_area_size(40)
            .y_label_area_size(150)
            .build_cartesian_2d(x, 0f64..n)
            .map_err(err)?;
        chart
            .configure_mesh()
            .x_desc(self.value.label.as_str())
            .x_labels(6)
            .x_label_formatter(&|v| compact(*v))
            .y_labels(0)
            .disable_y_mesh()
            .label_style((FONT, 13))
            .light_line_style(RGBColor(235, 235, 235))
            .draw()
            .map_err(err)?;
        let g = self.groups.len().max(1) as f64;
        let band = 0.8 / g;
        for (j, (label, vals)) in self.groups.iter().enumerate() {
            let c = color(j);
            let bars = vals.iter().enumerate().filter_map(|(i, v)| {
                let v = (*v).filter(|v| self.value.keeps(*v))?;
                // Category 0 at the top.
                let top = n - i as f64 - 0.1 - band * j as f64;
                Some(Rectangle::new([(base, top), (v, top - band)], c.filled()))
            });
            chart
                .draw_series(bars)
                .map_err(err)?
                .label(label.as_str())
                .legend(move |(px, py)| {
                    Rectangle::new([(px, py - 5), (px + 12, py + 5)], c.filled())
                });
        }
        let style = TextStyle::from((FONT, 13).into_font())
            .color(&BLACK)
            .pos(Pos::new(HPos::Right, VPos::Center));
        for (i, name) in self.categories.iter().enumerate() {
            let (px, py) = chart.backend_coord(&(base, n - i as f64 - 0.5));
            root.draw(&Text::new(name.as_str(), (px - 6, py), style.clone()))
                .map_err(err)?;
        }
        chart
            .configure_series_labels()
            .position(SeriesLabelPosition::UpperRight)
            .label_font((FONT, 12))
            .background_style(WHITE.mix(0.85))
            .border_style(RGBColor(180, 180, 180))
            .draw()
            .map_err(err)?;
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn compact_labels() {
        assert_eq!(compact(0.0), "0");
        assert_eq!(compact(2.5), "2.5");
        assert_eq!(compact(512.0), "512");
        assert_eq!(compact(25_000.0), "25k");
        assert_eq!(compact(1_500_000.0), "1.5M");
        assert_eq!(compact(0.125), "0.125");
    }

    #[test]
    fn charts_are_deterministic_svg() {
        let c = LineChart {
            title: "t <&>".into(),
            x: Scale::log("x"),
            y: Scale::linear("y"),
            series: vec![Series {
                label: "s".into(),
                points: vec![(1.0, 2.0), (4.0, 3.0), (0.0, 1.0), (f64::NAN, 1.0)],
                color: 0,
                mark: Mark::LinePoints,
            }],
        };
        let a = c.svg();
        assert!(a.starts_with("<svg") && a.contains("</svg>"), "{a}");
        assert!(a.contains("t &lt;&amp;&gt;"));
        assert_eq!(a, c.svg());
        let b = BarChart {
            title: "bars".into(),
            value: Scale::log("v"),
            categories: vec!["r1".into(), "r2".into()],
            groups: vec![
                ("real".into(), vec![Some(10.0), Some(200.0)]),
                ("sim".into(), vec![Some(12.0), None]),
            ],
        };
        let s = b.svg();
        assert!(s.contains("\nr2\n") && s.contains("<rect"), "{s}");
    }
}
