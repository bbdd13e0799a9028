//! Packet-level reference models of the RTL devices, written from
//! `shared/reference/ibspec.md` and the project's documented design decisions
//! (`docs/decisions.md`, `docs/arch.md`), not from the RTL.
//! A model takes one packet and the device state and predicts what comes out
//! of which port and which counters move; `crate::check::scoreboard` checks the RTL
//! against it transaction by transaction.
//!
//! - [`ca`]: one channel-adapter port (`ib_ca_top`).
//! - [`switch`]: the switch (`ib_switch_top`), with its own scoreboard and soak.

pub mod ca;
pub mod switch;

/// The P_Key match rule (ibspec §2), shared with the CA twin: both
/// devices' QP1 checks use it.
pub use crate::model::twin::ca::pkey_match;

/// The port counters (`ib_pkg::ctr_e`), in register order: counter `c` is
/// read at `reg::CTR_BASE + c as u8`. `device::reg::COUNTERS` holds the same
/// names; a unit test keeps the two in step (and that one is checked against
/// `rtl/ib_pkg.sv`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
#[repr(u8)]
pub enum Ctr {
    RxPkts = 0,
    RxVcrcErr,
    RxLverErr,
    RxLnhErr,
    RxLenErr,
    RxDataPkts,
    Vl15Dropped,
    SmiIcrcErr,
    SmiBadHdr,
    SmiLidErr,
    SmiDrDiscard,
    SmiPortDown,
    SmiToSma,
    SmiToSm,
    SqDrDiscard,
    SqLocal,
    SqPkts,
    TxVl15Pkts,
    TxDataPkts,
    DataIcrcErr,
    GsiBadHdr,
    GsiGmps,
    RxWords,
    TxWords,
    MkeyViol,
    PkeyViol,
    QkeyViol,
}

/// Number of counters.
pub const NUM_CTRS: usize = 27;

impl Ctr {
    pub const ALL: [Ctr; NUM_CTRS] = [
        Ctr::RxPkts,
        Ctr::RxVcrcErr,
        Ctr::RxLverErr,
        Ctr::RxLnhErr,
        Ctr::RxLenErr,
        Ctr::RxDataPkts,
        Ctr::Vl15Dropped,
        Ctr::SmiIcrcErr,
        Ctr::SmiBadHdr,
        Ctr::SmiLidErr,
        Ctr::SmiDrDiscard,
        Ctr::SmiPortDown,
        Ctr::SmiToSma,
        Ctr::SmiToSm,
        Ctr::SqDrDiscard,
        Ctr::SqLocal,
        Ctr::SqPkts,
        Ctr::TxVl15Pkts,
        Ctr::TxDataPkts,
        Ctr::DataIcrcErr,
        Ctr::GsiBadHdr,
        Ctr::GsiGmps,
        Ctr::RxWords,
        Ctr::TxWords,
        Ctr::MkeyViol,
        Ctr::PkeyViol,
        Ctr::QkeyViol,
    ];

    /// The counter's name as `device::reg::COUNTERS` spells it.
    pub fn name(self) -> &'static str {
        crate::model::regmap::reg::COUNTERS[self as usize]
    }
}

/// Counter changes: one amount per counter (32-bit wrapping, as the RTL's).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct CtrDelta(pub [u32; NUM_CTRS]);

impl CtrDelta {
    pub fn one(c: Ctr) -> Self {
        let mut d = CtrDelta::default();
        d.add(c, 1);
        d
    }
    pub fn add(&mut self, c: Ctr, n: u32) {
        let v = &mut self.0[c as usize];
        *v = v.wrapping_add(n);
    }
    pub fn get(&self, c: Ctr) -> u32 {
        self.0[c as usize]
    }
    pub fn merge(&mut self, o: &CtrDelta) {
        for (a, b) in self.0.iter_mut().zip(o.0.iter()) {
            *a = a.wrapping_add(*b);
        }
    }
    /// The non-zero counters, `name=value` separated by spaces.
    pub fn nonzero(&self) -> String {
        Ctr::ALL
            .iter()
            .filter(|c| self.get(**c) != 0)
            .map(|c| format!("{}={}", c.name(), self.get(*c)))
            .collect::<Vec<_>>()
            .join(" ")
    }
    /// The counters whose values differ from `o`, as `name: self vs o`.
    pub fn diff(&self, o: &CtrDelta) -> Vec<String> {
        Ctr::ALL
            .iter()
            .filter(|c| self.get(**c) != o.get(**c))
            .map(|c| format!("{}: {} vs {}", c.name(), self.get(*c), o.get(*c)))
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ctr_mirrors_register_names() {
        assert_eq!(crate::model::regmap::reg::COUNTERS.len(), NUM_CTRS);
        for (i, c) in Ctr::ALL.iter().enumerate() {
            assert_eq!(*c as usize, i);
        }
        assert_eq!(Ctr::Vl15Dropped.name(), "vl15_dropped");
        assert_eq!(Ctr::TxWords.name(), "tx_words");
        assert_eq!(Ctr::SmiPortDown.name(), "smi_port_down");
    }
}
