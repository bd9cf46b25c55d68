//! The quick look at a finished upload: an MP4 or MOV file's own index (`moov`), read where the
//! upload's parts are stored.
//!
//! The last chunk of an upload is answered only once the file is known to be a video we take,
//! so that a refusal reaches the client that sent it. ffprobe decides that for any file, but
//! starting it costs about a tenth of a second (it loads some 200 shared libraries), and from a
//! bucket it needs the whole file fetched first. Phones write MP4 and MOV with H.264 or HEVC;
//! for those this module reads the box headers, the index and the codec's own header (its
//! sequence parameter set, where the decoder learns the frame size a decompression bomb lies
//! about) by ranges, a few hundred kilobytes at most.
//!
//! It only ever says yes. Whatever it cannot vouch for (another container or codec, a size or
//! length beyond the limits, an index that points past the data, a box it cannot read) is left
//! to ffprobe, so every refusal and its wording stay ffprobe's. The worker probes every source
//! with ffprobe again before it processes it.

use std::ops::Range;

use mp4_atom::{Codec, Decode, Moov, Stbl, StszSamples, Trak};
use object_store::{path::Path, ObjectStore};

use crate::config::MediaLimits;

/// The largest index read: ten minutes at 240 frames a second with sound lists well under it.
const MAX_INDEX_BYTES: u64 = 32 << 20;
/// A file of more top-level boxes than this is not a phone's.
const MAX_TOP_LEVEL_BOXES: usize = 64;
/// Beyond this a frame rate is not a camera's (as ffprobe's check has it).
const MAX_FRAME_RATE: f64 = 240.0;

/// What the index vouches for: enough to show the video before it is processed.
#[derive(Debug, Clone, PartialEq)]
pub struct Vouched {
    pub duration_ms: u64,
    /// The shown size: square pixels, turned upright.
    pub width: u32,
    pub height: u32,
}

/// An upload's parts, read as one file by ranges. Each part's name carries its offset.
pub struct Parts<'a> {
    objects: &'a dyn ObjectStore,
    /// Where each part begins, and its name; in order, the first at 0.
    parts: Vec<(u64, Path)>,
    length: u64,
}

impl<'a> Parts<'a> {
    /// `None` when the names do not tile `0..length` in order.
    pub fn new(objects: &'a dyn ObjectStore, names: &[Path], length: u64) -> Option<Parts<'a>> {
        let parts: Vec<(u64, Path)> = names
            .iter()
            .map(|name| Some((super::names::upload_part_offset(name)?, name.clone())))
            .collect::<Option<_>>()?;
        let starts_at_zero = parts.first().is_some_and(|(offset, _)| *offset == 0);
        let in_order = parts.windows(2).all(|w| w[0].0 < w[1].0);
        let within = parts.last().is_some_and(|(offset, _)| *offset < length);
        (starts_at_zero && in_order && within).then_some(Parts {
            objects,
            parts,
            length,
        })
    }

    /// The bytes of `range`, which lies within the file.
    async fn read(&self, range: Range<u64>) -> anyhow::Result<Vec<u8>> {
        let mut out = Vec::with_capacity((range.end - range.start) as usize);
        for (i, (start, name)) in self.parts.iter().enumerate() {
            let end = self.parts.get(i + 1).map_or(self.length, |(next, _)| *next);
            let (from, to) = (range.start.max(*start), range.end.min(end));
            if from < to {
                let bytes = self
                    .objects
                    .get_range(name, from - start..to - start)
                    .await?;
                anyhow::ensure!(
                    bytes.len() as u64 == to - from,
                    "{name} is shorter than named"
                );
                out.extend_from_slice(&bytes);
            }
        }
        Ok(out)
    }
}

/// Reads the file's index and vouches for it, or returns `None` to leave it to ffprobe.
pub async fn vouch(file: &Parts<'_>, limits: &MediaLimits) -> Option<Vouched> {
    let layout = match top_level(file).await {
        Ok(layout) => layout?,
        Err(e) => {
            tracing::debug!(error = format!("{e:#}"), "cannot read an upload's boxes");
            return None;
        }
    };
    let index = file.read(layout.moov.clone()).await.ok()?;
    let limits = *limits;
    // Up to 32 MiB of index to decode: off the threads that answer requests.
    tokio::task::spawn_blocking(move || {
        // The parsers are not ours and the bytes are a stranger's: a parser that panics on them
        // means only that ffprobe decides.
        std::panic::catch_unwind(|| {
            let moov = Moov::decode(&mut index.as_slice()).ok()?;
            vouch_index(&moov, &layout.data, &limits)
        })
        .ok()
        .flatten()
    })
    .await
    .ok()
    .flatten()
}

/// Where a file's index and sample data lie.
struct Layout {
    moov: Range<u64>,
    /// The bodies of its `mdat` boxes.
    data: Vec<Range<u64>>,
}

/// Walks the top-level boxes: an `ftyp` first, every box whole within the file, one `moov`, no
/// fragments. `Ok(None)` for any other shape.
async fn top_level(file: &Parts<'_>) -> anyhow::Result<Option<Layout>> {
    let mut at = 0;
    let mut moov = None;
    let mut data = Vec::new();
    let mut count = 0;
    while at < file.length {
        count += 1;
        if count > MAX_TOP_LEVEL_BOXES {
            return Ok(None);
        }
        let head = file.read(at..file.length.min(at + 16)).await?;
        let Some((kind, header, size)) = box_header(&head, file.length - at) else {
            return Ok(None);
        };
        let end = at + size;
        if (count == 1) != (&kind == b"ftyp") {
            return Ok(None);
        }
        match &kind {
            b"moov" if moov.is_none() && size <= MAX_INDEX_BYTES => moov = Some(at..end),
            b"mdat" => data.push(at + header..end),
            b"moov" | b"moof" | b"mfra" => return Ok(None),
            _ => {}
        }
        at = end;
    }
    Ok(moov.map(|moov| Layout { moov, data }))
}

/// A box's kind, header length and whole size, when it lies within `left` bytes.
fn box_header(head: &[u8], left: u64) -> Option<([u8; 4], u64, u64)> {
    let word = |at: usize| -> Option<u64> {
        Some(u32::from_be_bytes(head.get(at..at + 4)?.try_into().ok()?).into())
    };
    let kind: [u8; 4] = head.get(4..8)?.try_into().ok()?;
    let (header, size) = match word(0)? {
        // To the end of the file.
        0 => (8, left),
        1 => (16, (word(8)? << 32) | word(12)?),
        size => (8, size),
    };
    (size >= header && size <= left).then_some((kind, header, size))
}

fn vouch_index(moov: &Moov, data: &[Range<u64>], limits: &MediaLimits) -> Option<Vouched> {
    if moov.mvex.is_some() || moov.mvhd.timescale == 0 {
        return None;
    }
    let duration_ms = moov.mvhd.duration.checked_mul(1000)? / u64::from(moov.mvhd.timescale);
    if duration_ms == 0 || duration_ms > limits.max_duration.as_millis() as u64 {
        return None;
    }
    let video = moov
        .trak
        .iter()
        .find(|t| t.mdia.hdlr.handler == mp4_atom::FourCC::new(b"vide"))?;
    let coded = coded_size(&video.mdia.minf.stbl)?;
    let tkhd = &video.tkhd;
    let stored = (
        u32::from(tkhd.width.integer()),
        u32::from(tkhd.height.integer()),
    );
    let within = |(w, h): (u32, u32)| w > 0 && h > 0 && w.max(h) <= limits.max_side;
    if !within(coded) || !within(stored) || tkhd.size_is_aspect_ratio {
        return None;
    }
    let m = &tkhd.matrix;
    let (width, height) = match (m.a, m.b, m.c, m.d) {
        (_, 0, 0, _) => stored,
        (0, _, _, 0) => (stored.1, stored.0),
        _ => return None,
    };
    if frame_rate(video)? > MAX_FRAME_RATE {
        return None;
    }
    if !moov
        .trak
        .iter()
        .all(|t| samples_lie_in(&t.mdia.minf.stbl, data))
    {
        return None;
    }
    Some(Vouched {
        duration_ms,
        width,
        height,
    })
}

/// The frame size the decoder allocates, from the codec's sequence parameter set, for H.264
/// and HEVC with square pixels; `None` for anything else.
fn coded_size(stbl: &Stbl) -> Option<(u32, u32)> {
    let [codec] = stbl.stsd.codecs.as_slice() else {
        return None;
    };
    let (visual, size) = match codec {
        Codec::Avc1(avc) => (&avc.visual, h264_size(&avc.avcc)?),
        Codec::Avc3(avc) => (&avc.visual, h264_size(&avc.avcc)?),
        Codec::Hvc1(hevc) => (&hevc.visual, hevc_size(&hevc.hvcc)?),
        Codec::Hev1(hevc) => (&hevc.visual, hevc_size(&hevc.hvcc)?),
        _ => return None,
    };
    let pasp = match codec {
        Codec::Avc1(avc) => avc.pasp.as_ref(),
        Codec::Avc3(avc) => avc.pasp.as_ref(),
        Codec::Hvc1(hevc) => hevc.pasp.as_ref(),
        Codec::Hev1(hevc) => hevc.pasp.as_ref(),
        _ => None,
    };
    if pasp.is_some_and(|p| p.h_spacing != p.v_spacing) {
        return None;
    }
    // The entry's size is the one shown; a codec header that disagrees is no phone's.
    let entry = (u32::from(visual.width), u32::from(visual.height));
    (entry.0 <= size.0 && entry.1 <= size.1).then_some(size)
}

fn h264_size(avcc: &mp4_atom::Avcc) -> Option<(u32, u32)> {
    let [sps] = avcc.sequence_parameter_sets.as_slice() else {
        return None;
    };
    let sps = scuffle_h264::Sps::parse_with_emulation_prevention(sps.as_slice()).ok()?;
    let fields = if sps.mb_adaptive_frame_field_flag.is_none() {
        1
    } else {
        2
    };
    let width = sps
        .pic_width_in_mbs_minus1
        .checked_add(1)?
        .checked_mul(16)?;
    let height = sps
        .pic_height_in_map_units_minus1
        .checked_add(1)?
        .checked_mul(16 * fields)?;
    Some((u32::try_from(width).ok()?, u32::try_from(height).ok()?))
}

fn hevc_size(hvcc: &mp4_atom::Hvcc) -> Option<(u32, u32)> {
    const SPS_NUT: u8 = 33;
    let mut sets = hvcc
        .arrays
        .iter()
        .filter(|a| a.nal_unit_type == SPS_NUT)
        .flat_map(|a| &a.nalus);
    let (Some(sps), None) = (sets.next(), sets.next()) else {
        return None;
    };
    let sps = scuffle_h265::SpsNALUnit::parse(sps.as_slice()).ok()?.rbsp;
    Some((
        u32::try_from(sps.pic_width_in_luma_samples.get()).ok()?,
        u32::try_from(sps.pic_height_in_luma_samples.get()).ok()?,
    ))
}

/// Frames a second over the video track's own length.
fn frame_rate(video: &Trak) -> Option<f64> {
    let mdhd = &video.mdia.mdhd;
    let frames = match &video.mdia.minf.stbl.stsz.samples {
        StszSamples::Identical { count, .. } => u64::from(*count),
        StszSamples::Different { sizes } => sizes.len() as u64,
    };
    if mdhd.timescale == 0 || mdhd.duration == 0 || frames == 0 {
        return None;
    }
    Some(frames as f64 * f64::from(mdhd.timescale) / mdhd.duration as f64)
}

/// Every chunk the track's index names lies whole within the file's sample data: a file cut
/// short, or an index that points elsewhere, is not vouched for. Linear in the index's size.
fn samples_lie_in(stbl: &Stbl, data: &[Range<u64>]) -> bool {
    let offsets: Vec<u64> = match (&stbl.stco, &stbl.co64) {
        (Some(stco), None) => stco.entries.iter().map(|&o| u64::from(o)).collect(),
        (None, Some(co64)) => co64.entries.clone(),
        _ => return false,
    };
    let total = match &stbl.stsz.samples {
        StszSamples::Identical { count, .. } => u64::from(*count),
        StszSamples::Different { sizes } => sizes.len() as u64,
    };
    // The bytes of `count` samples from `first`, when the index lists them.
    let bytes_of = |first: u64, count: u64| -> Option<u64> {
        if first.checked_add(count)? > total {
            return None;
        }
        match &stbl.stsz.samples {
            StszSamples::Identical { size, .. } => count.checked_mul(u64::from(*size)),
            StszSamples::Different { sizes } => Some(
                sizes[first as usize..(first + count) as usize]
                    .iter()
                    .map(|&s| u64::from(s))
                    .sum(),
            ),
        }
    };
    let runs = &stbl.stsc.entries;
    // stsc numbers chunks from 1, each entry applying from its first chunk to the next's.
    if runs.first().is_some_and(|r| r.first_chunk != 1)
        || runs
            .windows(2)
            .any(|w| w[0].first_chunk >= w[1].first_chunk)
    {
        return false;
    }
    let mut run = 0;
    let mut sample = 0u64;
    for (chunk, &offset) in offsets.iter().enumerate() {
        while runs
            .get(run + 1)
            .is_some_and(|next| next.first_chunk as usize <= chunk + 1)
        {
            run += 1;
        }
        let Some(per_chunk) = runs.get(run).map(|r| u64::from(r.samples_per_chunk)) else {
            return false;
        };
        let Some(end) = bytes_of(sample, per_chunk).and_then(|bytes| offset.checked_add(bytes))
        else {
            return false;
        };
        if !data.iter().any(|d| d.start <= offset && end <= d.end) {
            return false;
        }
        sample += per_chunk;
    }
    true
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use object_store::memory::InMemory;
    use object_store::PutPayload;
    use uuid::Uuid;

    use super::*;
    use crate::media::names;
    use crate::media::samples::{self, Sample};

    fn limits() -> MediaLimits {
        MediaLimits::for_tests()
    }

    async fn bytes_of(sample: Sample) -> Vec<u8> {
        let dir = tempfile::tempdir().unwrap();
        let path = samples::make_in(sample, dir.path()).await.unwrap();
        std::fs::read(path).unwrap()
    }

    /// `bytes` stored as an upload's parts, cut at `cuts`, and what `vouch` says of them.
    async fn vouch_parts(bytes: &[u8], cuts: &[usize], limits: &MediaLimits) -> Option<Vouched> {
        let store = InMemory::new();
        let video = Uuid::new_v4();
        let mut bounds = vec![0];
        bounds.extend(cuts.iter().copied().filter(|&c| c > 0 && c < bytes.len()));
        bounds.push(bytes.len());
        let mut names = Vec::new();
        for pair in bounds.windows(2) {
            let name = names::upload_part(video, pair[0] as u64, Uuid::new_v4());
            let part = PutPayload::from(bytes[pair[0]..pair[1]].to_vec());
            store.put(&name, part).await.unwrap();
            names.push(name);
        }
        let file = Parts::new(&store, &names, bytes.len() as u64)?;
        vouch(&file, limits).await
    }

    /// Where the box `kind` begins (its size field), the first time it occurs.
    fn find_box(bytes: &[u8], kind: &[u8; 4]) -> usize {
        bytes.windows(4).position(|w| w == kind).expect("the box") - 4
    }

    #[tokio::test]
    async fn phone_files_are_vouched_for_from_their_index_wherever_it_lies_and_however_it_was_sent()
    {
        let small = Sample::H264 {
            width: 640,
            height: 360,
            seconds: 2,
            audio: true,
        };
        for (sample, shown) in [
            (small, (640, 360)),
            (Sample::IndexLast { seconds: 2 }, (640, 360)),
            (Sample::Hevc, (640, 360)),
            (Sample::Rotated, (360, 640)),
            (Sample::NoAudio, (640, 360)),
        ] {
            let bytes = bytes_of(sample).await;
            let third = bytes.len() / 3;
            for cuts in [vec![], vec![7, third, 2 * third + 1]] {
                let vouched = vouch_parts(&bytes, &cuts, &limits()).await;
                let vouched = vouched.unwrap_or_else(|| panic!("{sample:?} in {cuts:?}"));
                assert_eq!((vouched.width, vouched.height), shown, "{sample:?}");
                assert!(
                    (1_950..=2_100).contains(&vouched.duration_ms),
                    "{sample:?}: {vouched:?}"
                );
            }
        }
    }

    #[tokio::test]
    async fn anything_the_index_cannot_vouch_for_is_left_to_ffprobe() {
        for sample in [
            Sample::Corrupt,
            Sample::Renamed,
            Sample::Image,
            Sample::AudioOnly,
            Sample::Empty,
            Sample::Vp9,
            Sample::Recorded,
            Sample::ProRes,
        ] {
            let bytes = bytes_of(sample).await;
            assert_eq!(
                vouch_parts(&bytes, &[], &limits()).await,
                None,
                "{sample:?}"
            );
        }

        let small = Sample::H264 {
            width: 640,
            height: 360,
            seconds: 2,
            audio: true,
        };
        let bytes = bytes_of(small).await;
        let short = MediaLimits {
            max_duration: Duration::from_secs(1),
            ..limits()
        };
        let narrow = MediaLimits {
            max_side: 600,
            ..limits()
        };
        assert_eq!(vouch_parts(&bytes, &[], &short).await, None, "too long");
        assert_eq!(vouch_parts(&bytes, &[], &narrow).await, None, "too large");

        // Cut short by a byte, with its index first or last.
        let cut = &bytes[..bytes.len() - 1];
        assert_eq!(vouch_parts(cut, &[], &limits()).await, None, "cut");
        let last = bytes_of(Sample::IndexLast { seconds: 2 }).await;
        let cut = &last[..last.len() - 1];
        assert_eq!(
            vouch_parts(cut, &[], &limits()).await,
            None,
            "cut, index last"
        );

        // The index points a chunk past the sample data: its first chunk offset, moved on.
        let mut moved = last.clone();
        let stco = find_box(&moved, b"stco") + 16;
        let offset = u32::from_be_bytes(moved[stco..stco + 4].try_into().unwrap());
        let beyond = (last.len() as u32).to_be_bytes();
        moved[stco..stco + 4].copy_from_slice(&beyond);
        assert_ne!(offset, last.len() as u32);
        assert_eq!(vouch_parts(&moved, &[], &limits()).await, None, "moved");
    }

    /// A decompression bomb: the container claims a small picture, the codec's own header a
    /// large one. The decoder would allocate the large one, so the index does not vouch.
    #[tokio::test]
    async fn a_picture_smaller_in_the_container_than_in_the_codec_header_is_not_vouched_for() {
        let small = Sample::H264 {
            width: 640,
            height: 360,
            seconds: 2,
            audio: false,
        };
        let mut bytes = bytes_of(small).await;
        let limit = MediaLimits {
            max_side: 400,
            ..limits()
        };
        // tkhd (version 0): header 8, version and flags 4, then 76 bytes to its width.
        let tkhd = find_box(&bytes, b"tkhd");
        assert_eq!(bytes[tkhd + 8], 0, "a version 0 tkhd");
        bytes[tkhd + 84..tkhd + 92].copy_from_slice(&[0, 160, 0, 0, 0, 90, 0, 0]);
        // avc1 (the sample entry in stsd, not the brand in ftyp): header 8, then 24 bytes to
        // its width and height.
        let stsd = find_box(&bytes, b"stsd");
        let avc1 = stsd + find_box(&bytes[stsd..], b"avc1");
        bytes[avc1 + 32..avc1 + 36].copy_from_slice(&[0, 160, 0, 90]);
        assert_eq!(vouch_parts(&bytes, &[], &limit).await, None);

        // The same file, its codec header small too, is vouched for: the test changes only
        // what it means to.
        let honest = bytes_of(Sample::H264 {
            width: 320,
            height: 180,
            seconds: 2,
            audio: false,
        })
        .await;
        let vouched = vouch_parts(&honest, &[], &limit).await.expect("vouched");
        assert_eq!((vouched.width, vouched.height), (320, 180));
    }

    #[test]
    fn a_parts_offset_is_read_back_from_its_name() {
        let name = names::upload_part(Uuid::new_v4(), 8 << 20, Uuid::new_v4());
        assert_eq!(names::upload_part_offset(&name), Some(8 << 20));
        assert_eq!(
            names::upload_part_offset(&Path::from("uploads/x/notes")),
            None
        );
    }
}
