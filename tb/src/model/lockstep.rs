//! Two back ends of one device stepped side by side: the RTL (the truth)
//! and another model of it (a twin), given the same inputs in every cycle.
//! [`Lockstep`] is a [`Dut`] whose outputs are the RTL's; after every step
//! it compares the other model's outputs with them and fails the step at
//! the first cycle where they differ, naming each field that differs and
//! both values.
//!
//! What is compared is what a stream's consumer may look at (AXI-Stream):
//! a stream's data, keep, last and sideband fields only in a cycle where
//! its `tvalid` is 1, and data bytes only where `tkeep` is set; the
//! verdicts that ride on a last beat only on that beat. Every ready,
//! register read, state, counter output and `idle` is compared in every
//! cycle.

use anyhow::{bail, ensure, Result};
use vl15_bindings::{Changed, DevIn, DevOut, PortIn, PortOut};

use crate::model::dut::Dut;

/// The RTL and a second model of the same device, in lockstep.
pub struct Lockstep {
    rtl: Box<dyn Dut>,
    other: Box<dyn Dut>,
    /// Cycles compared.
    compared: u64,
}

impl Lockstep {
    /// `rtl` and `other` must model the same device (ports, width), both
    /// not yet reset.
    pub fn new(rtl: Box<dyn Dut>, other: Box<dyn Dut>) -> Result<Self> {
        ensure!(
            rtl.num_ports() == other.num_ports() && rtl.data_w() == other.data_w(),
            "lockstep of two different devices: {} and {}",
            rtl.describe(),
            other.describe()
        );
        Ok(Lockstep {
            rtl,
            other,
            compared: 0,
        })
    }

    /// Cycles in which both models were stepped and compared.
    pub fn compared(&self) -> u64 {
        self.compared
    }
}

/// Keep the bytes of `d` (two 64-bit words, byte 0 in bits 7:0) whose
/// `keep` bit is set.
fn mask_bytes(d: [u64; 2], keep: u16) -> [u64; 2] {
    let mut m = [0u64; 2];
    for b in 0..16 {
        if keep & (1 << b) != 0 {
            m[b / 8] |= 0xFF << ((b % 8) * 8);
        }
    }
    [d[0] & m[0], d[1] & m[1]]
}

/// A stream of `w` bits carries all its bytes on every beat but the last
/// (which has `tkeep`): the keep of a stream without one.
fn full_keep(w: u32) -> u16 {
    if w >= 128 {
        0xFFFF
    } else {
        (1u16 << (w / 8)) - 1
    }
}

/// `o` with every field a consumer may not look at set to 0.
pub fn visible_dev(o: &DevOut, w: u32) -> DevOut {
    let mut v = *o;
    if !v.sma_rx_tvalid {
        v.sma_rx_tdata = [0; 2];
        v.sma_rx_tlast = false;
        v.sma_rx_slid = 0;
        v.sma_rx_dlid = 0;
        v.sma_rx_sl = 0;
        v.sma_rx_port = 0;
        v.sma_rx_mgmt_class = 0;
        v.sma_rx_hop_ptr = 0;
        v.sma_rx_hop_cnt = 0;
    } else {
        v.sma_rx_tdata = mask_bytes(v.sma_rx_tdata, full_keep(w));
    }
    if !(v.sma_rx_tvalid && v.sma_rx_tlast) {
        v.sma_rx_mkey_viol = false;
        v.sma_rx_mkey_mask = false;
    }
    if !v.sm_rx_tvalid {
        v.sm_rx_tdata = [0; 2];
        v.sm_rx_tlast = false;
        v.sm_rx_slid = 0;
        v.sm_rx_dlid = 0;
        v.sm_rx_sl = 0;
        v.sm_rx_port = 0;
        v.sm_rx_mgmt_class = 0;
        v.sm_rx_hop_ptr = 0;
        v.sm_rx_hop_cnt = 0;
    } else {
        v.sm_rx_tdata = mask_bytes(v.sm_rx_tdata, full_keep(w));
    }
    if !v.gmp_rx_tvalid {
        v.gmp_rx_tdata = [0; 2];
        v.gmp_rx_tkeep = 0;
        v.gmp_rx_tlast = false;
    } else {
        v.gmp_rx_tdata = mask_bytes(v.gmp_rx_tdata, v.gmp_rx_tkeep);
    }
    if !(v.gmp_rx_tvalid && v.gmp_rx_tlast) {
        v.gmp_rx_tuser = false;
        v.gmp_rx_reason = 0;
    }
    v
}

/// `o` with every field a consumer may not look at set to 0.
pub fn visible_port(o: &PortOut) -> PortOut {
    let mut v = *o;
    if !v.tx_tvalid {
        v.tx_tdata = [0; 2];
        v.tx_tkeep = 0;
        v.tx_tlast = false;
    } else {
        v.tx_tdata = mask_bytes(v.tx_tdata, v.tx_tkeep);
    }
    if !v.drx_tvalid {
        v.drx_tdata = [0; 2];
        v.drx_tkeep = 0;
        v.drx_tlast = false;
    } else {
        v.drx_tdata = mask_bytes(v.drx_tdata, v.drx_tkeep);
    }
    if !(v.drx_tvalid && v.drx_tlast) {
        v.drx_tuser = false;
        v.drx_reason = 0;
    }
    v
}

/// The `name: value` fields of two `{:?}` forms of one struct that differ,
/// as `name: a (RTL) vs b`.
fn field_diff(a: &str, b: &str) -> String {
    fn fields(s: &str) -> Vec<&str> {
        let inner = s
            .find('{')
            .and_then(|i| s.rfind('}').map(|j| &s[i + 1..j]))
            .unwrap_or(s);
        // Values hold no ", " except inside arrays: split at ", " that
        // starts a new `name:` only.
        let mut out = Vec::new();
        let mut start = 0;
        let bytes = inner.as_bytes();
        let mut depth = 0i32;
        for (i, &c) in bytes.iter().enumerate() {
            match c {
                b'[' => depth += 1,
                b']' => depth -= 1,
                b',' if depth == 0 => {
                    out.push(inner[start..i].trim());
                    start = i + 1;
                }
                _ => {}
            }
        }
        out.push(inner[start..].trim());
        out
    }
    let (fa, fb) = (fields(a), fields(b));
    fa.iter()
        .zip(fb.iter())
        .filter(|(x, y)| x != y)
        .map(|(x, y)| {
            let v = y.split_once(':').map_or(*y, |(_, v)| v.trim());
            format!("{x} (RTL) vs {v}")
        })
        .collect::<Vec<_>>()
        .join(", ")
}

impl Dut for Lockstep {
    fn step(&mut self, i: &DevIn, pin: &[PortIn], changed: Changed<'_>) -> Result<DevOut> {
        let cycle = self.rtl.cycle();
        let o = self.rtl.step(i, pin, changed)?;
        let t = self.other.step(i, pin, changed)?;
        let w = self.rtl.data_w();
        let (vo, vt) = (visible_dev(&o, w), visible_dev(&t, w));
        let mut diffs = Vec::new();
        if vo != vt {
            diffs.push(format!(
                "device: {}",
                field_diff(&format!("{vo:?}"), &format!("{vt:?}"))
            ));
        }
        for (p, (a, b)) in self
            .rtl
            .ports_out()
            .iter()
            .zip(self.other.ports_out())
            .enumerate()
        {
            let (va, vb) = (visible_port(a), visible_port(b));
            if va != vb {
                diffs.push(format!(
                    "port {}: {}",
                    p + 1,
                    field_diff(&format!("{va:?}"), &format!("{vb:?}"))
                ));
            }
        }
        if !diffs.is_empty() {
            bail!(
                "{} and {} differ in cycle {cycle}: {}",
                self.rtl.describe(),
                self.other.describe(),
                diffs.join("; ")
            );
        }
        self.compared += 1;
        Ok(o)
    }

    fn ports_out(&self) -> &[PortOut] {
        self.rtl.ports_out()
    }

    fn skip(&mut self, n: u64) {
        self.rtl.skip(n);
        self.other.skip(n);
    }

    fn reset(&mut self, cycles: u32) -> Result<()> {
        self.rtl.reset(cycles)?;
        self.other.reset(cycles)
    }

    fn cycle(&self) -> u64 {
        self.rtl.cycle()
    }

    fn num_ports(&self) -> u32 {
        self.rtl.num_ports()
    }

    fn data_w(&self) -> u32 {
        self.rtl.data_w()
    }

    fn describe(&self) -> String {
        format!(
            "{} in lockstep with {}",
            self.rtl.describe(),
            self.other.describe()
        )
    }

    fn trace_open(&mut self, path: &std::path::Path) -> Result<()> {
        self.rtl.trace_open(path)
    }

    fn trace_close(&mut self) {
        self.rtl.trace_close();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn field_diff_names_each_differing_field() {
        let a = "DevOut { a: 1, b: [1, 2], c: true }";
        let b = "DevOut { a: 1, b: [1, 3], c: false }";
        assert_eq!(
            field_diff(a, b),
            "b: [1, 2] (RTL) vs [1, 3], c: true (RTL) vs false"
        );
    }

    #[test]
    fn invisible_fields_are_not_compared() {
        let mut a = PortOut {
            tx_tdata: [0x1122, 7],
            tx_tkeep: 0x0001,
            tx_tvalid: true,
            ..PortOut::default()
        };
        let mut b = a;
        b.tx_tdata[0] = 0x9922; // byte 1 is not kept
        b.tx_tdata[1] = 9;
        assert_eq!(visible_port(&a), visible_port(&b));
        b.tx_tdata[0] = 0x1123;
        assert_ne!(visible_port(&a), visible_port(&b));
        a.tx_tvalid = false;
        b.tx_tvalid = false;
        assert_eq!(visible_port(&a), visible_port(&b));
    }
}
