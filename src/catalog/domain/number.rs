//! Integers as JSON clients write them.

use serde::Deserialize;

/// A 32-bit integer as JSON clients send it (a widget's priority, a poster's moment): an
/// integer, which some write as `92.0` (JSON Schema's `integer` includes it); a fraction or a
/// value beyond 32 bits is refused.
pub(crate) fn json_i32<'de, D: serde::Deserializer<'de>>(d: D) -> Result<i32, D::Error> {
    use serde::de::Error;
    let n = serde_json::Number::deserialize(d)?;
    let integral = match (n.as_i64(), n.as_f64()) {
        (Some(i), _) => i32::try_from(i).ok(),
        (None, Some(f)) if f.fract() == 0.0 && f.abs() <= f64::from(i32::MAX) + 1.0 => {
            format!("{f:.0}").parse().ok()
        }
        _ => None,
    };
    integral.ok_or_else(|| {
        D::Error::custom(format!(
            "must be an integer from {} to {}, got {n}",
            i32::MIN,
            i32::MAX
        ))
    })
}
