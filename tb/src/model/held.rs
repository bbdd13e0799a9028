//! MADs held whole for a host's send streams
//! ([`crate::model::dut::Dut::host_burst`]): each is offered from its first
//! cycle on, beat after beat, each beat until the model's `tready` takes
//! it, as the host would drive it. The CA and the switch twins keep them
//! so, and `Lockstep` feeds them so to the RTL beside a twin.

use vl15_bindings::{DevIn, DevOut};

use crate::model::dut::{drive_host, host_ready, HostIn, HostTaken};
use crate::model::stream::Beat;

/// A MAD held for stream `stream`, offered from cycle `first` on.
#[derive(Debug, Clone)]
pub struct HeldMad {
    pub stream: HostIn,
    pub beats: Vec<Beat>,
    /// The stream's sideband (`*_slid`, `*_dlid`, `*_sl`, `*_path_bits`,
    /// `*_port`).
    pub side: DevIn,
    pub first: u64,
    /// Beats taken so far, and the cycle the first was.
    pub k: usize,
    pub first_taken: u64,
    /// The port it goes to (a multiport CA's tag; 0 elsewhere).
    pub port: usize,
}

impl HeldMad {
    pub fn new(stream: HostIn, first: u64, beats: &[Beat], side: &DevIn, port: usize) -> Self {
        HeldMad {
            stream,
            beats: beats.to_vec(),
            side: *side,
            first,
            k: 0,
            first_taken: 0,
            port,
        }
    }

    /// `n` beats taken in consecutive cycles, the first of them (if any) in
    /// cycle `at`.
    pub fn took(&mut self, n: usize, at: u64) {
        if n > 0 && self.k == 0 {
            self.first_taken = at;
        }
        self.k += n;
    }
}

/// The tag of stream `s` in `side`.
pub(crate) fn tag(s: HostIn, side: &DevIn) -> u8 {
    match s {
        HostIn::SmaTx => side.sma_tx_port,
        HostIn::SmTx => side.sm_tx_port,
        HostIn::TrapTx => side.trap_tx_port,
    }
}

/// `i` with the beats the MADs `held` offer in cycle `c` on their
/// streams.
pub(crate) fn offer(i: &DevIn, c: u64, held: &[HeldMad]) -> DevIn {
    let mut x = *i;
    for h in held.iter().filter(|h| c >= h.first) {
        drive_host(&mut x, h.stream, &h.beats[h.k], &h.side);
    }
    x
}

/// After cycle `c` with outputs `o`: the beats the MADs offered were taken
/// in; those taken whole leave `held` for `taken`.
pub(crate) fn note_taken(held: &mut Vec<HeldMad>, o: &DevOut, c: u64, taken: &mut Vec<HostTaken>) {
    held.retain_mut(|h| {
        if c < h.first || !host_ready(o, h.stream) {
            return true;
        }
        h.took(1, c);
        if h.k < h.beats.len() {
            return true;
        }
        taken.push(HostTaken {
            stream: h.stream,
            first: h.first_taken,
            last: c,
        });
        false
    });
}

/// Per host source (SMA, SM, trap), whether a MAD of `held` for `port`
/// is offered in cycle `c`.
pub(crate) fn fed(held: &[HeldMad], c: u64, port: usize) -> [bool; 3] {
    let mut f = [false; 3];
    for h in held.iter().filter(|h| h.port == port && c >= h.first) {
        f[h.stream as usize] = true;
    }
    f
}

/// `n` edges of a send engine (`smi_tx_ctrl`) at packet beat `k` (`hb`
/// header beats of `db` bytes first) whose source offers a held MAD's
/// `beats` from beat `k0` on: the header beats pass, the MAD's beats go
/// into `mad`. Returns the beats taken and the edge (of the `n`, from 0)
/// that took the MAD's first, if one did. `n` must not reach past the
/// MAD's last beat.
pub(crate) fn copy_through(
    k: &mut usize,
    mad: &mut Vec<u8>,
    (hb, db): (usize, usize),
    n: u64,
    beats: &[Beat],
    k0: usize,
) -> (usize, Option<u64>) {
    let hdr = (hb.saturating_sub(*k) as u64).min(n);
    let take = (n - hdr) as usize;
    let first = (*k <= hb && take > 0).then_some(hdr);
    for b in &beats[k0..k0 + take] {
        mad.extend((0..db).map(|i| (b.data[i / 8] >> ((i % 8) * 8)) as u8));
    }
    *k += hdr as usize + take;
    (take, first)
}

/// Whether a model at cycle `now` with MADs `held` can hold `beats` (a
/// MAD of `mad_beats`) on `s` from `first`.
pub(crate) fn can_hold(
    held: &[HeldMad],
    s: HostIn,
    first: u64,
    now: u64,
    beats: &[Beat],
    mad_beats: usize,
) -> bool {
    beats.len() == mad_beats && first >= now && !held.iter().any(|h| h.stream == s)
}
