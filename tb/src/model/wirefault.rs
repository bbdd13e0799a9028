//! Faults on a cable: a share of the packets that arrive at one port is
//! corrupted on the wire, beat by beat, as the sender's beats enter the
//! cable. What the RTL at the receiving port then does with them (discard,
//! count, or forward a packet whose ICRC it does not check) is the RTL's.
//!
//! Three classes ([`FaultClass`]):
//! - `vcrc`: one bit of the packet's VCRC is flipped (the link layer of the
//!   receiving port discards it: a local physical error);
//! - `icrc`: one bit of the ICRC is flipped and the VCRC recomputed, so the
//!   link layer passes it and the ICRC check of the end node discards it (a
//!   switch's external port forwards it: switches check no ICRC);
//! - `truncate`: the packet ends after about half its bytes (a multiple of
//!   four) with a correct VCRC over what is left, so its length no longer
//!   matches LRH.PktLen (a malformed packet).
//!
//! Which packets: each packet draws once from a SplitMix64 generator
//! seeded by [`FaultSpec::seed`]; it is corrupted when the draw (0..99) is
//! below the rate, as ibsim's `random() % 100 < rate`, and, with an
//! attribute, only when it is a MAD (QP0 or QP1) of that AttributeID.
//! The same seed, rate and traffic give the same packets.

use crate::model::stream::{Beat, Rng};
use crate::proto::crc;

/// How a packet is corrupted.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FaultClass {
    Vcrc,
    Icrc,
    Truncate,
}

impl FaultClass {
    pub const ALL: [FaultClass; 3] = [FaultClass::Vcrc, FaultClass::Icrc, FaultClass::Truncate];

    pub fn name(self) -> &'static str {
        match self {
            FaultClass::Vcrc => "vcrc",
            FaultClass::Icrc => "icrc",
            FaultClass::Truncate => "truncate",
        }
    }

    pub fn parse(s: &str) -> Option<FaultClass> {
        FaultClass::ALL
            .into_iter()
            .find(|c| c.name().eq_ignore_ascii_case(s))
    }
}

/// What to do to the packets arriving at one port.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FaultSpec {
    /// Percent of the packets, 0..=100.
    pub rate: u8,
    /// Only MADs of this AttributeID (None: every packet).
    pub attr: Option<u16>,
    pub class: FaultClass,
    pub seed: u64,
}

/// A [`FaultSpec`] at work on one direction of a cable.
#[derive(Debug, Clone)]
pub struct WireFault {
    pub spec: FaultSpec,
    rng: Rng,
    /// The current packet's bytes as they went onto the cable.
    cur: Vec<u8>,
    /// The current packet drew a hit.
    hit: bool,
    /// The ICRC was changed: the last beat gets a new VCRC.
    fix_vcrc: bool,
    /// The packet was cut: drop its remaining beats.
    swallow: bool,
    /// The current packet was corrupted.
    done: bool,
    /// Packets that started on the cable since the fault was set.
    pub packets: u64,
    /// Packets corrupted.
    pub corrupted: u64,
}

/// Bytes of LRH, BTH, DETH and the MAD header up to AttributeID.
const LRH: usize = 8;
const GRH: usize = 40;
const BTH: usize = 12;
const DETH: usize = 8;
const MAD_ATTR: usize = 16;
/// Packets shorter than this are never truncated (they would lose their
/// headers).
const MIN_TRUNCATE: usize = 64;

impl WireFault {
    pub fn new(spec: FaultSpec) -> WireFault {
        WireFault {
            spec,
            rng: Rng::new(spec.seed),
            cur: Vec::new(),
            hit: false,
            fix_vcrc: false,
            swallow: false,
            done: false,
            packets: 0,
            corrupted: 0,
        }
    }

    /// The packet length LRH.PktLen announces (LRH..ICRC plus the VCRC).
    fn planned_len(&self) -> Option<usize> {
        let c = &self.cur;
        // LRH bytes 4..6: 5 reserved bits, PktLen (11 bits, 4-byte words).
        (c.len() >= 6).then(|| (usize::from(c[4] & 0x07) << 8 | usize::from(c[5])) * 4 + 2)
    }

    /// Whether the current packet is one the spec names (its AttributeID
    /// is known once `cur` holds it).
    fn selected(&self) -> bool {
        let Some(want) = self.spec.attr else {
            return true;
        };
        let c = &self.cur;
        if c.len() < 2 {
            return false;
        }
        let base = match c[1] & 0x03 {
            2 => LRH,
            3 => LRH + GRH,
            _ => return false,
        };
        let attr_at = base + BTH + DETH + MAD_ATTR;
        if c.len() < attr_at + 2 {
            return false;
        }
        let qp = u32::from_be_bytes([0, c[base + 5], c[base + 6], c[base + 7]]);
        qp <= 1 && u16::from_be_bytes([c[attr_at], c[attr_at + 1]]) == want
    }

    /// The beat `b` leaves the sender onto the cable: what the cable
    /// carries instead (None: nothing, the rest of a cut packet).
    pub fn beat(&mut self, b: Beat) -> Option<Beat> {
        if self.cur.is_empty() && !self.swallow {
            self.packets += 1;
            self.hit = self.rng.chance(u32::from(self.spec.rate));
            self.fix_vcrc = false;
            self.done = false;
        }
        if self.swallow {
            if b.last {
                self.swallow = false;
                self.cur.clear();
            }
            return None;
        }
        let start = self.cur.len();
        let mut bytes = b.bytes();
        self.cur.extend_from_slice(&bytes);
        let mut out = b;
        if self.hit && !self.done {
            if let Some(o) = self.corrupt(start, &mut bytes, b.last) {
                out = o;
            }
        }
        if b.last {
            self.cur.clear();
        }
        Some(out)
    }

    /// Apply the class to the beat holding bytes `start..` of the packet
    /// (`bytes`, which it may change); the beat to send instead, if any.
    fn corrupt(&mut self, start: usize, bytes: &mut [u8], last: bool) -> Option<Beat> {
        let end = start + bytes.len();
        let total = self.planned_len()?;
        match self.spec.class {
            FaultClass::Vcrc => {
                if !last || !self.selected() {
                    return None;
                }
                *bytes.last_mut()? ^= 0x01;
                self.done = true;
                self.corrupted += 1;
                Some(Beat::from_bytes(bytes, true))
            }
            FaultClass::Icrc => {
                // The ICRC's last byte sits just before the 2-byte VCRC.
                let k = total.checked_sub(3)?;
                let mut changed = false;
                if (start..end).contains(&k) && self.selected() {
                    bytes[k - start] ^= 0x01;
                    self.cur[k] ^= 0x01;
                    self.fix_vcrc = true;
                    changed = true;
                }
                if last && self.fix_vcrc {
                    let n = self.cur.len();
                    if n == total && bytes.len() >= 2 {
                        let v = crc::vcrc_to_wire(crc::vcrc(&self.cur[..n - 2]));
                        let m = bytes.len();
                        bytes[m - 2..].copy_from_slice(&v);
                        self.done = true;
                        self.corrupted += 1;
                    }
                    changed = true;
                }
                changed.then(|| Beat::from_bytes(bytes, last))
            }
            FaultClass::Truncate => {
                if total < MIN_TRUNCATE || last {
                    return None;
                }
                let cut = (total / 2) & !3;
                if !(start..end).contains(&cut) || !self.selected() {
                    return None;
                }
                let mut keep = self.cur[start..cut].to_vec();
                keep.extend_from_slice(&crc::vcrc_to_wire(crc::vcrc(&self.cur[..cut])));
                self.done = true;
                self.corrupted += 1;
                self.swallow = true;
                Some(Beat::from_bytes(&keep, true))
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::stream::to_beats;

    /// A QP0 SMP (LRH LNH=2, BTH DestQP 0, DETH, 256-byte MAD with
    /// AttributeID `attr`) with correct ICRC and VCRC.
    fn smp(attr: u16) -> Vec<u8> {
        let mut p = vec![0u8; LRH + BTH + DETH + 256];
        p[0] = 0xF0; // VL15
        p[1] = 0x02; // LNH: BTH
        let words = ((p.len() + 4) / 4) as u16;
        p[2..4].copy_from_slice(&0xFFFFu16.to_be_bytes()); // DLID
        p[4..6].copy_from_slice(&words.to_be_bytes());
        p[LRH] = 0x64; // UD SEND only
        let mad = LRH + BTH + DETH;
        p[mad] = 1; // base version
        p[mad + MAD_ATTR..mad + MAD_ATTR + 2].copy_from_slice(&attr.to_be_bytes());
        crc::append_crcs(&mut p);
        p
    }

    fn through(f: &mut WireFault, pkt: &[u8], bb: usize) -> Vec<u8> {
        let mut out = Vec::new();
        for b in to_beats(pkt, bb) {
            if let Some(o) = f.beat(b) {
                out.extend(o.bytes());
                if o.last {
                    break;
                }
            }
        }
        out
    }

    fn spec(class: FaultClass, rate: u8, attr: Option<u16>) -> FaultSpec {
        FaultSpec {
            rate,
            attr,
            class,
            seed: 7,
        }
    }

    #[test]
    fn each_class_breaks_only_its_check() {
        for bb in [8, 16] {
            let p = smp(0x11);
            assert_eq!(crc::check_wire(&p), Some((true, true)));
            let mut f = WireFault::new(spec(FaultClass::Vcrc, 100, None));
            let out = through(&mut f, &p, bb);
            assert_eq!(out.len(), p.len());
            assert_eq!(crc::check_wire(&out), Some((true, false)), "vcrc at {bb}");

            let mut f = WireFault::new(spec(FaultClass::Icrc, 100, None));
            let out = through(&mut f, &p, bb);
            assert_eq!(crc::check_wire(&out), Some((false, true)), "icrc at {bb}");

            let mut f = WireFault::new(spec(FaultClass::Truncate, 100, None));
            let out = through(&mut f, &p, bb);
            assert_eq!(out.len(), ((p.len() / 2) & !3) + 2, "truncate at {bb}");
            // A good VCRC over what is left; LRH.PktLen still the old length.
            let n = out.len();
            assert_eq!(
                crc::vcrc_to_wire(crc::vcrc(&out[..n - 2])),
                [out[n - 2], out[n - 1]]
            );
            assert_eq!(out[..6], p[..6]);
            assert_eq!((f.packets, f.corrupted), (1, 1));
        }
    }

    #[test]
    fn the_rest_of_a_cut_packet_is_dropped_and_the_next_one_passes() {
        let mut f = WireFault::new(spec(FaultClass::Truncate, 100, Some(0x15)));
        let a = smp(0x15);
        let b = smp(0x11);
        let mut beats = to_beats(&a, 16);
        beats.extend(to_beats(&b, 16));
        let out: Vec<Beat> = beats.into_iter().filter_map(|x| f.beat(x)).collect();
        let lasts = out.iter().filter(|x| x.last).count();
        assert_eq!(lasts, 2);
        let second: Vec<u8> = out
            .iter()
            .skip_while(|x| !x.last)
            .skip(1)
            .flat_map(|x| x.bytes())
            .collect();
        assert_eq!(second, b);
        assert_eq!((f.packets, f.corrupted), (2, 1));
    }

    #[test]
    fn rate_and_attribute_select_packets() {
        let p = smp(0x11);
        let mut none = WireFault::new(spec(FaultClass::Vcrc, 0, None));
        let mut other = WireFault::new(spec(FaultClass::Vcrc, 100, Some(0x15)));
        for _ in 0..50 {
            assert_eq!(through(&mut none, &p, 16), p);
            assert_eq!(through(&mut other, &p, 16), p);
        }
        assert_eq!(none.corrupted + other.corrupted, 0);
        // About half at 50 %, and the same packets for the same seed.
        let run = || {
            let mut f = WireFault::new(spec(FaultClass::Vcrc, 50, Some(0x11)));
            (0..1000)
                .map(|_| through(&mut f, &p, 8) != p)
                .collect::<Vec<bool>>()
        };
        let hits = run().iter().filter(|&&h| h).count();
        assert!((400..600).contains(&hits), "{hits} of 1000 at 50 %");
        assert_eq!(run(), run());
    }

    #[test]
    fn class_names_round_trip() {
        for c in FaultClass::ALL {
            assert_eq!(FaultClass::parse(c.name()), Some(c));
        }
        assert_eq!(FaultClass::parse("ICRC"), Some(FaultClass::Icrc));
        assert_eq!(FaultClass::parse("crc"), None);
    }
}
