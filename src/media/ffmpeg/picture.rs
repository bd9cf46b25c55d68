//! The pictures the steps make from a source: their sizes (by the short side, never larger
//! than the source, even numbers as H.264 needs), their frame rate, and the filters that
//! lead from the decoded source to them.

use super::SourceFacts;

/// Frame rates above this are halved (or quartered…) for outputs: a shop's video gains nothing
/// from 60 frames a second but the cost of encoding and sending twice as many.
const MAX_OUTPUT_RATE: f64 = 30.5;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct Size {
    pub width: u32,
    pub height: u32,
}

impl Size {
    pub fn short_side(self) -> u32 {
        self.width.min(self.height)
    }
}

/// The source as shown (rotated, square pixels) scaled so its short side is `short` (or the
/// source's own, when smaller), in even numbers.
pub(super) fn fit(facts: &SourceFacts, short: u32) -> Size {
    let (width, height) = (facts.width.max(2), facts.height.max(2));
    let source_short = width.min(height);
    let short = even(short.min(source_short));
    let long = even(
        (f64::from(width.max(height)) * f64::from(short) / f64::from(source_short)).round() as u32,
    );
    if width <= height {
        Size {
            width: short,
            height: long,
        }
    } else {
        Size {
            width: long,
            height: short,
        }
    }
}

/// Rounded down to even, at least 2.
fn even(n: u32) -> u32 {
    (n & !1).max(2)
}

/// Frame rates cameras and editors use; a source's average near none of them has frames
/// unevenly spaced (a phone saving power in the dark, a screen recording).
const COMMON_RATES: [f64; 6] = [15.0, 24_000.0 / 1001.0, 24.0, 25.0, 30_000.0 / 1001.0, 30.0];
/// The rate frames unevenly spaced are evened out to.
const EVEN_RATE: f64 = 30.0;

/// The outputs' frame rate, constant so that every segment holds the same number of frames:
/// the source's, divided by the smallest whole number that brings it to 30 or below (60 → 30,
/// 50 → 25, 120 → 30); a rate that is no camera's (frames unevenly spaced) becomes 30.
pub(super) fn output_rate(facts: &SourceFacts) -> f64 {
    let rate = facts.frame_rate;
    if !rate.is_finite() || rate <= 0.0 {
        return EVEN_RATE;
    }
    let divided = rate / (rate / MAX_OUTPUT_RATE).ceil().max(1.0);
    let distance = |common: f64| (divided / common - 1.0).abs();
    COMMON_RATES
        .into_iter()
        .min_by(|a, b| distance(*a).total_cmp(&distance(*b)))
        .filter(|nearest| distance(*nearest) < 0.01)
        .unwrap_or(EVEN_RATE)
}

/// `fps=…` for the filter graph: ffmpeg turns 29.970030 back into 30000/1001.
pub(super) fn fps_filter(rate: f64) -> String {
    format!("fps={rate:.6}")
}

/// Scaled to `size` with square pixels, in the 4:2:0 8-bit pixels every H.264 player decodes
/// (a 10-bit HEVC or 4:2:2 ProRes source is converted here).
pub(super) fn scale_filter(size: Size) -> String {
    format!(
        "scale={}:{}:flags=bicubic,setsar=1,format=yuv420p",
        size.width, size.height
    )
}

/// Pixels a decoder may allocate for one frame of this source: a square twice its long side,
/// room for coded padding and pixels stored narrower than shown. A stream that grows beyond it
/// midway is not decoded.
pub(super) fn max_pixels(facts: &SourceFacts) -> u64 {
    let side = 2 * u64::from(facts.width.max(facts.height)) + 128;
    side * side
}

#[cfg(test)]
mod tests {
    use super::*;

    fn facts(width: u32, height: u32, frame_rate: f64) -> SourceFacts {
        SourceFacts {
            duration_ms: 1000,
            width,
            height,
            frame_rate,
            has_audio: false,
            audio_copyable: false,
            video_codec: "h264".into(),
            rotation: 0,
        }
    }

    #[test]
    fn sizes_follow_the_short_side_in_even_numbers_and_never_grow() {
        for ((width, height), short, (fitted_width, fitted_height)) in [
            ((1080, 1920), 720, (720, 1280)),
            ((3840, 2160), 1080, (1920, 1080)),
            ((1000, 750), 360, (480, 360)),
            ((321, 241), 720, (320, 240)),
        ] {
            assert_eq!(
                fit(&facts(width, height, 30.0), short),
                Size {
                    width: fitted_width,
                    height: fitted_height
                },
                "{width}x{height} to {short}"
            );
        }
    }

    #[test]
    fn high_frame_rates_are_divided_to_thirty_or_below_and_uneven_ones_evened_to_thirty() {
        assert_eq!(output_rate(&facts(64, 64, 60.0)), 30.0);
        assert_eq!(output_rate(&facts(64, 64, 50.0)), 25.0);
        assert_eq!(output_rate(&facts(64, 64, 120.0)), 30.0);
        assert_eq!(output_rate(&facts(64, 64, 59.94)), 30_000.0 / 1001.0);
        assert_eq!(output_rate(&facts(64, 64, 24.0)), 24.0);
        assert_eq!(output_rate(&facts(64, 64, 16.67)), 30.0);
        assert_eq!(output_rate(&facts(64, 64, 29.99)), 30.0);
        assert_eq!(output_rate(&facts(64, 64, 25.1)), 25.0);
        assert_eq!(output_rate(&facts(64, 64, 29.4)), 30.0);
        assert_eq!(fps_filter(30_000.0 / 1001.0), "fps=29.970030");
    }
}
