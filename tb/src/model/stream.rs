//! Stream drivers for the RTL's AXI-Stream style ports: packet sources that
//! present beats with idle insertion, and sinks that collect beats under a
//! backpressure pattern. Every handshake in the testbench goes through these,
//! so every stream is stressed the same way.
//!
//! Timing contract (see `bindings`): in one `step` the testbench sets a
//! source's `tvalid`/data and a sink's `tready` *before* it sees the model's
//! outputs of that cycle; a beat moves when `tvalid && tready` in that cycle.
//! `tvalid` never depends on `tready` and `tready` never on `tvalid`.

use std::collections::VecDeque;

/// Bytes per beat for a data width in bits (32, 64, 128).
pub fn beat_bytes(data_w: u32) -> usize {
    (data_w / 8) as usize
}

/// The keep mask of a whole beat at a data width in bits (32, 64, 128).
pub fn full_keep(data_w: u32) -> u16 {
    ((1u32 << beat_bytes(data_w)) - 1) as u16
}

/// A small deterministic generator (SplitMix64) so every pattern is
/// reproducible from its seed; no crate needed for 10 lines.
#[derive(Debug, Clone)]
pub struct Rng(u64);

impl Rng {
    pub fn new(seed: u64) -> Self {
        Rng(seed)
    }
    pub fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }
    /// True with probability `percent`/100.
    pub fn chance(&mut self, percent: u32) -> bool {
        (self.next_u64() % 100) < u64::from(percent)
    }
    /// A value in `0..n` (0 when `n` is 0).
    pub fn below(&mut self, n: usize) -> usize {
        if n == 0 {
            0
        } else {
            (self.next_u64() % n as u64) as usize
        }
    }
    /// One element of a non-empty slice.
    pub fn pick<'a, T>(&mut self, from: &'a [T]) -> &'a T {
        &from[self.below(from.len())]
    }
}

/// When a source may present a beat (valid) or a sink may accept one (ready).
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub enum Pattern {
    /// Every cycle.
    Always,
    /// Never (a stalled sink or a held source).
    Never,
    /// On with the given probability in percent, from a seed.
    Random { percent: u32, seed: u64 },
    /// `on` cycles on, then `off` cycles off, repeating.
    Periodic { on: u32, off: u32 },
}

/// A running pattern.
#[derive(Debug, Clone)]
pub struct Gate {
    pattern: Pattern,
    rng: Rng,
    phase: u64,
}

impl Gate {
    pub fn new(pattern: Pattern) -> Self {
        let seed = match pattern {
            Pattern::Random { seed, .. } => seed,
            _ => 0,
        };
        Gate {
            pattern,
            rng: Rng::new(seed),
            phase: 0,
        }
    }
    pub fn pattern(&self) -> &Pattern {
        &self.pattern
    }
    pub fn set(&mut self, pattern: Pattern) {
        *self = Gate::new(pattern);
    }
    /// Whether the gate is open this cycle. Call exactly once per cycle.
    pub fn open(&mut self) -> bool {
        let p = self.phase;
        self.phase += 1;
        match self.pattern {
            Pattern::Always => true,
            Pattern::Never => false,
            Pattern::Random { percent, .. } => self.rng.chance(percent),
            Pattern::Periodic { on, off } => {
                let period = u64::from(on) + u64::from(off);
                period == 0 || (p % period) < u64::from(on)
            }
        }
    }
}

/// One beat as the model sees it: up to 16 bytes, a keep mask, last.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Beat {
    pub data: [u64; 2],
    pub keep: u16,
    pub last: bool,
}

impl Beat {
    /// The kept bytes of the beat, in wire order.
    pub fn bytes(&self) -> Vec<u8> {
        let mut v = Vec::with_capacity(16);
        self.extend_bytes(&mut v);
        v
    }
    /// [`Beat::bytes`] appended to `out`.
    pub fn extend_bytes(&self, out: &mut Vec<u8>) {
        for j in 0..16 {
            if self.keep & (1 << j) != 0 {
                out.push((self.data[j / 8] >> (8 * (j % 8))) as u8);
            }
        }
    }
    /// Bytes `chunk` (at most 16) as a beat; byte j goes to bits 8j..8j+7.
    pub fn from_bytes(chunk: &[u8], last: bool) -> Beat {
        let mut data = [0u64; 2];
        for (j, b) in chunk.iter().enumerate() {
            data[j / 8] |= u64::from(*b) << (8 * (j % 8));
        }
        let keep = if chunk.len() >= 16 {
            0xFFFF
        } else {
            (1u16 << chunk.len()) - 1
        };
        Beat { data, keep, last }
    }
}

/// Split a packet into beats of `bb` bytes.
pub fn to_beats(bytes: &[u8], bb: usize) -> Vec<Beat> {
    let n = bytes.len().div_ceil(bb);
    bytes
        .chunks(bb)
        .enumerate()
        .map(|(i, c)| Beat::from_bytes(c, i + 1 == n))
        .collect()
}

/// A packet source: queued packets (bytes plus sideband of type `M`) leave as
/// beats whenever the gate is open and the sink takes them.
#[derive(Debug)]
pub struct Source<M: Clone> {
    bb: usize,
    queue: VecDeque<(Vec<Beat>, M)>,
    pos: usize,
    gate: Gate,
    presenting: bool,
    /// Cycle at which each packet's first beat was accepted, in order.
    pub started: Vec<u64>,
    /// Cycle at which each packet's first beat was first presented (valid).
    pub presented: Vec<u64>,
}

impl<M: Clone> Source<M> {
    pub fn new(data_w: u32, pattern: Pattern) -> Self {
        Source {
            bb: beat_bytes(data_w),
            queue: VecDeque::new(),
            pos: 0,
            gate: Gate::new(pattern),
            presenting: false,
            started: Vec::new(),
            presented: Vec::new(),
        }
    }
    pub fn set_pattern(&mut self, p: Pattern) {
        self.gate.set(p);
    }
    pub fn push(&mut self, bytes: &[u8], meta: M) {
        assert!(!bytes.is_empty(), "empty packet");
        self.queue.push_back((to_beats(bytes, self.bb), meta));
    }
    pub fn pending(&self) -> usize {
        self.queue.len()
    }
    pub fn idle(&self) -> bool {
        self.queue.is_empty()
    }
    /// Withdraw every packet whose first beat has not been presented; a
    /// packet under way stays (a presented beat stays valid until taken,
    /// and a packet once begun runs to its last beat). True if one stays.
    pub fn withdraw_unstarted(&mut self) -> bool {
        let keep = usize::from(self.presenting || self.pos > 0);
        self.queue.truncate(keep);
        !self.queue.is_empty()
    }
    /// The beat and sideband to present this cycle, if any. Once a beat is
    /// presented it stays presented until taken (AXI rule), whatever the gate.
    pub fn present(&mut self) -> Option<(Beat, M)> {
        let (beats, meta) = self.queue.front()?;
        if !self.presenting {
            if !self.gate.open() {
                return None;
            }
            self.presenting = true;
        }
        Some((beats[self.pos], meta.clone()))
    }
    /// The front packet's beats and sideband, where none of it has been
    /// presented yet and the gate opens in every cycle: a packet that can
    /// be offered whole, one beat a cycle.
    pub fn whole_front(&self) -> Option<(&[Beat], &M)> {
        if self.presenting || self.pos > 0 || *self.gate.pattern() != Pattern::Always {
            return None;
        }
        self.queue.front().map(|(b, m)| (b.as_slice(), m))
    }

    /// Note the cycle in which a packet's first beat is presented.
    pub fn mark_presented(&mut self, cycle: u64) {
        if self.presenting && self.pos == 0 && self.presented.len() == self.started.len() {
            self.presented.push(cycle);
        }
    }

    /// Drop the packet being sent (its beats presented so far stay sent, the
    /// rest never is; a reset or a link that went down cut it). Returns the
    /// number of beats of it already taken, 0 when no packet was under way.
    pub fn abort_current(&mut self) -> usize {
        let sent = self.pos;
        if sent > 0 {
            self.queue.pop_front();
        }
        self.pos = 0;
        self.presenting = false;
        sent
    }

    /// Drop every queued packet, the one under way included.
    pub fn clear(&mut self) {
        self.queue.clear();
        self.pos = 0;
        self.presenting = false;
    }

    /// Beats of the front packet already taken.
    pub fn beats_sent(&self) -> usize {
        self.pos
    }

    /// Tell the source whether the presented beat was taken this cycle.
    pub fn taken(&mut self, fired: bool, cycle: u64) {
        if !(fired && self.presenting) {
            return;
        }
        self.presenting = false;
        if self.pos == 0 {
            self.started.push(cycle);
        }
        self.pos += 1;
        if self.pos == self.queue.front().map_or(0, |(b, _)| b.len()) {
            self.queue.pop_front();
            self.pos = 0;
        }
    }
}

/// A received packet with the cycles of its first and last beat.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Received<M> {
    pub bytes: Vec<u8>,
    pub meta: M,
    pub first_cycle: u64,
    pub last_cycle: u64,
    /// Cycles inside the packet with no beat (valid low after the first beat).
    pub gaps: u64,
    /// `tuser` on the last beat (bad-packet flag), for streams that have it.
    pub bad: bool,
}

/// A packet sink: accepts beats when its gate is open.
#[derive(Debug)]
pub struct Sink<M> {
    gate: Gate,
    /// Force `tready` low (a stalled host), whatever the pattern says.
    pub hold: bool,
    cur: Vec<u8>,
    first: u64,
    gaps: u64,
    ready: bool,
    pub packets: VecDeque<Received<M>>,
}

impl<M> Sink<M> {
    pub fn new(pattern: Pattern) -> Self {
        Sink {
            gate: Gate::new(pattern),
            hold: false,
            cur: Vec::new(),
            first: 0,
            gaps: 0,
            ready: false,
            packets: VecDeque::new(),
        }
    }
    pub fn set_pattern(&mut self, p: Pattern) {
        self.gate.set(p);
    }
    /// `tready` for this cycle. Call exactly once per cycle, before `observe`.
    pub fn ready(&mut self) -> bool {
        let open = self.gate.open();
        self.ready = open && !self.hold;
        self.ready
    }
    /// For streams without `tready`: the sink takes every beat.
    pub fn always(&mut self) {
        self.ready = true;
    }
    /// Forget a packet half received (the device was reset under it).
    /// Returns how many bytes of it had arrived.
    pub fn clear_partial(&mut self) -> usize {
        let n = self.cur.len();
        self.cur.clear();
        n
    }
    pub fn in_packet(&self) -> bool {
        !self.cur.is_empty()
    }
    /// The model's outputs of this cycle; `meta` is read on the last beat.
    pub fn observe(
        &mut self,
        valid: bool,
        beat: Beat,
        bad: bool,
        cycle: u64,
        meta: impl FnOnce() -> M,
    ) {
        if !(valid && self.ready) {
            if self.in_packet() {
                self.gaps += 1;
            }
            return;
        }
        if self.cur.is_empty() {
            self.first = cycle;
            self.gaps = 0;
        }
        self.cur.extend(beat.bytes());
        if beat.last {
            self.packets.push_back(Received {
                bytes: std::mem::take(&mut self.cur),
                meta: meta(),
                first_cycle: self.first,
                last_cycle: cycle,
                gaps: self.gaps,
                bad,
            });
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn beats_round_trip_all_widths() {
        let pkt: Vec<u8> = (0..290u32).map(|i| (i * 7 + 3) as u8).collect();
        for w in [32, 64, 128] {
            let beats = to_beats(&pkt, beat_bytes(w));
            assert_eq!(beats.len(), 290usize.div_ceil(beat_bytes(w)));
            assert!(beats.last().unwrap().last);
            assert_eq!(beats.iter().filter(|b| b.last).count(), 1);
            let back: Vec<u8> = beats.iter().flat_map(|b| b.bytes()).collect();
            assert_eq!(back, pkt);
        }
    }

    #[test]
    fn periodic_gate_duty() {
        let mut g = Gate::new(Pattern::Periodic { on: 2, off: 3 });
        let v: Vec<bool> = (0..10).map(|_| g.open()).collect();
        assert_eq!(
            v,
            [true, true, false, false, false, true, true, false, false, false]
        );
    }

    #[test]
    fn random_gate_reproducible() {
        let p = Pattern::Random {
            percent: 30,
            seed: 7,
        };
        let a: Vec<bool> = {
            let mut g = Gate::new(p.clone());
            (0..100).map(|_| g.open()).collect()
        };
        let b: Vec<bool> = {
            let mut g = Gate::new(p);
            (0..100).map(|_| g.open()).collect()
        };
        assert_eq!(a, b);
        let on = a.iter().filter(|x| **x).count();
        assert!((10..60).contains(&on), "{on}");
    }

    #[test]
    fn source_holds_beat_until_taken() {
        let mut s: Source<()> = Source::new(64, Pattern::Always);
        s.push(&[1u8; 20], ());
        let (b0, _) = s.present().unwrap();
        s.taken(false, 0);
        let (b0b, _) = s.present().unwrap();
        assert_eq!(b0, b0b);
        s.taken(true, 1);
        s.present().unwrap();
        s.taken(true, 2);
        let (b2, _) = s.present().unwrap();
        assert!(b2.last);
        assert_eq!(b2.keep, 0x0F);
        s.taken(true, 3);
        assert!(s.idle());
        assert_eq!(s.started, vec![1]);
    }
}

/// Beats of one direction of a wire gathered back into packets (for
/// traces): a packet is every beat up to one with `last`.
#[derive(Debug, Default, Clone)]
pub struct PacketAssembler {
    cur: Vec<u8>,
    first: u64,
}

impl PacketAssembler {
    /// `b` crossed the wire at cycle `now`; the packet (its first cycle and
    /// bytes) when `b` ends it.
    pub fn beat(&mut self, now: u64, b: &Beat) -> Option<(u64, Vec<u8>)> {
        if self.cur.is_empty() {
            self.first = now;
        }
        self.cur.extend(b.bytes());
        b.last.then(|| (self.first, std::mem::take(&mut self.cur)))
    }

    /// The beats of a packet that will not end (its link went down): what
    /// the wire carried of it, if anything.
    pub fn cut(&mut self) -> Option<(u64, Vec<u8>)> {
        (!self.cur.is_empty()).then(|| (self.first, std::mem::take(&mut self.cur)))
    }
}
