//! A minimal SM-side driver: it posts SMP requests through the RTL's SM send
//! interface and collects what the SM receive interface delivers (responses,
//! traps, SMInfo requests), matching responses to requests by TID. The full
//! subnet manager builds on this later.

use std::collections::{BTreeMap, VecDeque};

use anyhow::Result;

use crate::model::device::{AddressHandle, CaPort, HostAgent, SmiMeta};
use crate::proto::mad::{self, Mad};

/// A request the SM sent and what became of it.
#[derive(Debug, Clone)]
pub struct Transaction {
    pub tid: u64,
    pub ah: AddressHandle,
    pub request: Mad,
    /// Cycle the request was handed to the SM send interface.
    pub posted: u64,
    pub response: Option<(Mad, SmiMeta, u64)>,
}

#[derive(Default)]
pub struct SmDriver {
    next_tid: u64,
    pub transactions: BTreeMap<u64, Transaction>,
    /// Deliveries that matched no outstanding request (traps, SMInfo, strays).
    pub unsolicited: Vec<(Mad, SmiMeta, u64)>,
    /// Requests waiting to be posted, with the cycle they may go.
    queue: VecDeque<(u64, AddressHandle, Mad)>,
}

impl SmDriver {
    pub fn new(first_tid: u64) -> Self {
        SmDriver {
            next_tid: first_tid,
            ..Default::default()
        }
    }

    /// A fresh TID (unique among this driver's requests).
    pub fn tid(&mut self) -> u64 {
        let t = self.next_tid;
        self.next_tid += 1;
        t
    }

    /// Queue `mad` (its TID already set) to go out at or after `at`.
    pub fn post(&mut self, at: u64, ah: AddressHandle, mad: Mad) {
        self.queue.push_back((at, ah, mad));
    }

    /// Responses still missing.
    pub fn outstanding(&self) -> usize {
        self.transactions
            .values()
            .filter(|t| t.response.is_none())
            .count()
    }

    pub fn busy(&self) -> bool {
        !self.queue.is_empty()
    }

    pub fn service(&mut self, port: &mut CaPort, now: u64) -> Result<bool> {
        let mut did = false;
        while self.queue.front().is_some_and(|(at, _, _)| *at <= now) {
            let (_, ah, m) = self.queue.pop_front().expect("checked");
            let tid = mad::tid(&m);
            port.sm_tx.push(&m, ah);
            self.transactions.insert(
                tid,
                Transaction {
                    tid,
                    ah,
                    request: m,
                    posted: now,
                    response: None,
                },
            );
            did = true;
        }
        while let Some(rx) = port.sm_rx.packets.pop_front() {
            did = true;
            let mut m = [0u8; 256];
            let n = rx.bytes.len().min(256);
            m[..n].copy_from_slice(&rx.bytes[..n]);
            let tid = mad::tid(&m);
            let is_resp = mad::method(&m) & 0x80 != 0;
            match self.transactions.get_mut(&tid) {
                Some(t)
                    if is_resp
                        && t.response.is_none()
                        && mad::class(&t.request) == mad::class(&m) =>
                {
                    t.response = Some((m, rx.meta, rx.first_cycle));
                }
                _ => self.unsolicited.push((m, rx.meta, rx.first_cycle)),
            }
        }
        Ok(did)
    }

    /// The response to `tid`, if it came.
    pub fn response(&self, tid: u64) -> Option<&Mad> {
        self.transactions
            .get(&tid)
            .and_then(|t| t.response.as_ref().map(|(m, _, _)| m))
    }
}

impl HostAgent for SmDriver {
    fn service(&mut self, port: &mut CaPort, now: u64) -> Result<bool> {
        SmDriver::service(self, port, now)
    }
    fn busy(&self) -> bool {
        SmDriver::busy(self)
    }
}

/// The one-port CA fabric with this SMA and SM driver on every node.
pub type Fabric = crate::model::fabric::Fabric<crate::agents::sma::Sma, SmDriver>;
