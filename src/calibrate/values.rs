//! How fitted values are rounded and written: [`SIG_DIGITS`] significant digits, printed so
//! that the text parses back to exactly the value the fit evaluated.

/// Significant digits of every fitted value.
pub const SIG_DIGITS: i32 = 4;

/// `v` rounded to `digits` significant digits (0 and non-finite values unchanged).
pub fn round_sig(v: f64, digits: i32) -> f64 {
    if v == 0.0 || !v.is_finite() {
        return v;
    }
    let e = v.abs().log10().floor() as i32;
    let p = digits - 1 - e;
    // Scale by an exact power of ten in the direction that keeps the division exact-ish, and
    // parse back through the shortest decimal so the result prints as at most `digits` digits.
    let s = if p >= 0 {
        format!("{:.*}", p as usize, v)
    } else {
        let f = 10f64.powi(-p);
        format!("{}", (v / f).round() * f)
    };
    s.parse().unwrap_or(v)
}

/// The value as written to a profile: plain decimal below 1e5, `m.mmme<exp>` from 1e5.
pub fn format_value(v: f64) -> String {
    if v.abs() >= 1e5 && v.is_finite() {
        let e = v.abs().log10().floor() as i32;
        let m = v / 10f64.powi(e);
        let text = format!("{}e{e}", round_sig(m, SIG_DIGITS));
        let text = if text.contains('.') {
            text
        } else {
            text.replacen('e', ".0e", 1)
        };
        if text.parse::<f64>().ok() == Some(v) {
            return text;
        }
    }
    let text = format!("{v}");
    if text.contains('.') || text.contains('e') || !v.is_finite() {
        text
    } else {
        format!("{text}.0")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rounding_and_formatting_round_trip() {
        assert_eq!(round_sig(0.123456, 4), 0.1235);
        assert_eq!(round_sig(2_134_567.0, 4), 2_135_000.0);
        assert_eq!(round_sig(1.0, 4), 1.0);
        assert_eq!(format_value(2_135_000.0), "2.135e6");
        assert_eq!(format_value(0.1235), "0.1235");
        assert_eq!(format_value(64.0), "64.0");
        assert_eq!(format_value(3.0e6), "3.0e6");
        for v in [0.85, 2.5e6, 30e3, 12.34, 1e-4] {
            let f = format_value(round_sig(v, 4));
            assert_eq!(f.parse::<f64>().unwrap(), round_sig(v, 4), "{f}");
        }
    }
}
