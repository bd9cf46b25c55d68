//! Each segment's first moments in a fragment of their own.
//!
//! ffmpeg's HLS muxer writes every fMP4 segment as one fragment (one `moof`, one `mdat`), and a
//! browser's Media Source parser hands a fragment's frames on only once all of it has arrived:
//! a shopper would wait for 2 s of pictures before seeing the first. Each segment is rewritten
//! here as two fragments: the first eighth of every track (a quarter second of a 2 s segment:
//! the keyframe and the few frames a decoder holds back to reorder them, and enough sound for
//! playback to begin), then the rest. Samples, timing and bytes are unchanged; the `sidx` boxes,
//! which index the one fragment and which HLS does not use, are dropped. mp4-atom reads and
//! writes the boxes.

use mp4_atom::{Any, Decode, Encode, Mdat, Mfhd, Moof, Tfdt, Traf, Trun, TrunEntry, TrunSamples};

/// The share of each track's duration in the first fragment.
const FIRST_SHARE: f64 = 0.125;

/// One track's samples in a segment, as read from its fragment.
struct Track {
    traf: Traf,
    base_time: u64,
    entries: Vec<TrunEntry>,
    durations: Vec<u64>,
    /// The track's sample bytes, in order.
    data: Vec<u8>,
    /// Where in `data` each sample starts, and the end.
    bounds: Vec<usize>,
}

/// `segment` with the first eighth of each track in a fragment of its own, or `None` when its
/// layout is not the one ffmpeg writes (then it is served as it is).
pub fn split_first_samples(segment: &[u8]) -> Option<Vec<u8>> {
    let mut rest = segment;
    let mut out = Vec::with_capacity(segment.len() + 512);
    let mut fragment: Option<(Moof, usize)> = None;
    let mut mdat: Option<(Mdat, usize)> = None;
    while !rest.is_empty() {
        let before = rest.len();
        let atom = Any::decode(&mut rest).ok()?;
        let size = before - rest.len();
        match atom {
            Any::Styp(styp) if fragment.is_none() => styp.encode(&mut out).ok()?,
            Any::Sidx(_) if fragment.is_none() => {}
            Any::Moof(moof) if fragment.is_none() => fragment = Some((moof, size)),
            Any::Mdat(data) if fragment.is_some() && mdat.is_none() => mdat = Some((data, size)),
            _ => return None,
        }
    }
    let ((moof, moof_size), (mdat, mdat_size)) = (fragment?, mdat?);
    let mdat_start = moof_size + (mdat_size - mdat.data.len());
    let tracks = moof
        .traf
        .into_iter()
        .map(|traf| track(traf, &mdat.data, mdat_start))
        .collect::<Option<Vec<_>>>()?;
    if tracks.is_empty() || tracks.iter().any(|t| t.entries.len() < 2) {
        return None;
    }
    let sequence = moof.mfhd.sequence_number;
    write_fragment(&mut out, sequence.wrapping_mul(2), &tracks, |t| {
        0..first_samples(t)
    })?;
    write_fragment(
        &mut out,
        sequence.wrapping_mul(2).wrapping_add(1),
        &tracks,
        |t| first_samples(t)..t.entries.len(),
    )?;
    Some(out)
}

/// How many of the track's samples go into the first fragment: those that start within its
/// first eighth, and at least one; never all of them.
fn first_samples(track: &Track) -> usize {
    let total: u64 = track.durations.iter().sum();
    let first = (total as f64 * FIRST_SHARE) as u64;
    let mut elapsed = 0;
    let starting = track
        .durations
        .iter()
        .take_while(|d| {
            let before = elapsed;
            elapsed += **d;
            before < first
        })
        .count();
    starting.clamp(1, track.entries.len() - 1)
}

fn track(traf: Traf, mdat: &[u8], mdat_start: usize) -> Option<Track> {
    let plain = traf.tfhd.default_base_is_moof
        && traf.tfhd.base_data_offset.is_none()
        && traf.trun.len() == 1
        && traf.sbgp.is_empty()
        && traf.sgpd.is_empty()
        && traf.subs.is_empty()
        && traf.saiz.is_empty()
        && traf.saio.is_empty()
        && traf.meta.is_none()
        && traf.senc.is_none()
        && traf.udta.is_none();
    if !plain {
        return None;
    }
    let base_time = traf.tfdt.as_ref()?.base_media_decode_time;
    let trun = &traf.trun[0];
    let offset = usize::try_from(trun.data_offset?)
        .ok()?
        .checked_sub(mdat_start)?;
    let entries: Vec<TrunEntry> = trun.samples.iter().collect();
    let mut durations = Vec::with_capacity(entries.len());
    let mut bounds = vec![0];
    for entry in &entries {
        let size = entry.size.or(traf.tfhd.default_sample_size)?;
        durations.push(u64::from(
            entry.duration.or(traf.tfhd.default_sample_duration)?,
        ));
        bounds.push(bounds.last()? + usize::try_from(size).ok()?);
    }
    let data = mdat
        .get(offset..offset.checked_add(*bounds.last()?)?)?
        .to_vec();
    Some(Track {
        traf,
        base_time,
        entries,
        durations,
        data,
        bounds,
    })
}

/// Writes one fragment holding, of each track, the samples `range` picks.
fn write_fragment(
    out: &mut Vec<u8>,
    sequence_number: u32,
    tracks: &[Track],
    range: impl Fn(&Track) -> std::ops::Range<usize>,
) -> Option<()> {
    let mut moof = Moof {
        mfhd: Mfhd { sequence_number },
        traf: Vec::with_capacity(tracks.len()),
    };
    let mut data = Vec::new();
    let mut starts = Vec::with_capacity(tracks.len());
    for t in tracks {
        let picked = range(t);
        starts.push(data.len());
        data.extend_from_slice(&t.data[t.bounds[picked.start]..t.bounds[picked.end]]);
        let mut traf = t.traf.clone();
        traf.tfdt = Some(Tfdt {
            base_media_decode_time: t.base_time + t.durations[..picked.start].iter().sum::<u64>(),
        });
        traf.trun = vec![Trun {
            data_offset: Some(0),
            samples: TrunSamples::Explicit(t.entries[picked].to_vec()),
        }];
        moof.traf.push(traf);
    }
    // The offsets count from the fragment's start, past its `moof` and the `mdat` header.
    let mut moof_bytes = Vec::new();
    moof.encode(&mut moof_bytes).ok()?;
    let header = moof_bytes.len() + 8;
    for (traf, start) in moof.traf.iter_mut().zip(starts) {
        traf.trun[0].data_offset = Some(i32::try_from(header + start).ok()?);
    }
    moof.encode(out).ok()?;
    Mdat { data }.encode(out).ok()
}
