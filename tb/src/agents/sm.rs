//! The SM on a CA port driven on its own (the spine regression): the SM
//! stack's transaction layer ([`Transactions`], the one every fabric SM
//! uses) on the port's QP0 ([`SmQp`] of a [`CaPort`]), keeping every
//! response and every unsolicited MAD (traps, SMInfo, strays) for the test
//! to read. Requests go out as given, TID and M_Key included, with no
//! window and no retry: a test decides what is on the wire.

use std::collections::BTreeMap;

use anyhow::Result;

use crate::agents::qp0::{Event, Transactions, TxOptions};
use crate::model::device::{AddressHandle, CaPort, HostAgent, SmiMeta};
use crate::proto::mad::Mad;

pub struct PortSm {
    tx: Transactions<()>,
    next_tid: u64,
    responses: BTreeMap<u64, (Mad, SmiMeta)>,
    /// Deliveries that matched no outstanding request (traps, SMInfo,
    /// strays), in arrival order.
    pub unsolicited: Vec<(Mad, SmiMeta)>,
}

impl PortSm {
    /// An SM whose [`tid`](Self::tid) starts at `first_tid`.
    pub fn new(first_tid: u64) -> Self {
        let opts = TxOptions {
            max_outstanding: usize::MAX,
            timeout: u64::MAX / 4,
            retries: 0,
            m_key: 0,
        };
        PortSm {
            tx: Transactions::new(0, 0, 0, opts),
            next_tid: first_tid,
            responses: BTreeMap::new(),
            unsolicited: Vec::new(),
        }
    }

    /// A fresh TID (unique among this SM's requests).
    pub fn tid(&mut self) -> u64 {
        let t = self.next_tid;
        self.next_tid += 1;
        t
    }

    /// Send `mad` (its TID and M_Key already set) in the next cycle.
    pub fn post(&mut self, ah: AddressHandle, mad: Mad) {
        self.tx.submit_as_is(ah, mad, ());
    }

    /// Requests still without a response.
    pub fn outstanding(&self) -> usize {
        self.tx.pending() - self.tx.queued()
    }

    /// Requests not yet handed to the port.
    pub fn busy(&self) -> bool {
        self.tx.queued() > 0
    }

    /// The response to `tid`, if it came.
    pub fn response(&self, tid: u64) -> Option<&Mad> {
        self.responses.get(&tid).map(|(m, _)| m)
    }

    pub fn service(&mut self, port: &mut CaPort) -> Result<bool> {
        let sent = self.tx.stats.sent;
        let events = self.tx.pump_on(port)?;
        let did = !events.is_empty() || self.tx.stats.sent != sent;
        for e in events {
            match e {
                Event::Response { resp, meta, .. } => {
                    self.responses
                        .insert(crate::proto::mad::tid(&resp), (*resp, meta));
                }
                Event::Unsolicited { mad, meta } => self.unsolicited.push((*mad, meta)),
                // No timeout is ever due (see `new`).
                Event::Timeout { .. } => {}
            }
        }
        Ok(did)
    }
}

impl HostAgent for PortSm {
    fn service(&mut self, port: &mut CaPort, _now: u64) -> Result<bool> {
        PortSm::service(self, port)
    }
    fn busy(&self) -> bool {
        PortSm::busy(self)
    }
}

/// A CA port on a bench with the SMA and this SM on its host side: the
/// driver of each device of the spine's net.
pub type Bench = crate::model::bench::PortBench<crate::agents::sma::Sma, PortSm>;
