//! The host side of QP0 on a CA port of the fabric, verbs style, and the
//! SMP transaction layer an SM builds on it.
//!
//! - [`Net::post_send`] hands a MAD and an address handle to the RTL's SM
//!   send interface (`sm_tx_*`); its send completion comes when the RTL has
//!   taken the last beat.
//! - [`Net::post_recv`] posts receive WQEs: it rings the RTL's receive-queue
//!   doorbell (`sm_rq_*`), and the RTL keeps the count. Every MAD the RTL
//!   delivers on `sm_rx_*` consumes one; a MAD for the SM that arrives while
//!   none is posted is discarded by the RTL and counted (VL15Dropped), as
//!   hardware does, and never holds up the MADs behind it
//!   (requests for the node's SMA included).
//! - [`Net::poll_cq`] returns the completions in the order they happened.
//!
//! [`Transactions`] keeps the SM's requests: a TID unique among its
//! outstanding requests (ibspec §7: a response matches on TID and class),
//! at most `max_outstanding` on the wire (OpenSM: 4), a timeout and a number
//! of retries, and hop-count-0 directed-route SMPs answered by the node's
//! own SMA without touching the wire (Linux `handle_outgoing_dr_smp`).

use std::collections::{BTreeMap, VecDeque};

use anyhow::{anyhow, Result};

use crate::agents::node_sma::Net;
use crate::model::device::{check_static_rate, AddressHandle, SmQp, SmiMeta};
use crate::proto::mad::{self, Mad};

pub use crate::model::device::{Wc, WcOpcode};

impl Net {
    /// Post `mad` for sending on CA `d`'s SM port.
    pub fn post_send(&mut self, d: usize, ah: &AddressHandle, mad: &Mad, wr_id: u64) -> Result<()> {
        check_static_rate(ah)?;
        self.sm_post(d, *ah, mad)?;
        if let Some(w) = self.sm_host_mut(d)?.send_wr.back_mut() {
            *w = Some(wr_id);
        }
        Ok(())
    }

    /// Post `n` receive WQEs on CA `d`'s SM port (through the RTL's
    /// doorbell, at most 255 per cycle, starting in the next simulated
    /// cycle). The first call turns the port from "takes everything" (tools
    /// that only collect) to counted receives: the WQEs that mode kept
    /// posted are withdrawn, so exactly `n` MADs are delivered until the
    /// next post.
    /// A switch's SM interface (port 0) has no receive queue in the RTL:
    /// there the call does nothing (every MAD is taken).
    pub fn post_recv(&mut self, d: usize, n: u64) -> Result<()> {
        let port = self.sm_host_mut(d)?.port;
        let dev = &mut self.devs[d];
        if dev.is_switch {
            return Ok(());
        }
        let rq = usize::from(port)
            .checked_sub(1)
            .and_then(|p| dev.sm_rq.get_mut(p))
            .ok_or_else(|| anyhow!("{}: no port {port}", dev.name))?;
        rq.post(n);
        self.wake_dev(d);
        Ok(())
    }

    /// Receive WQEs still posted on CA `d`'s SM port, as the host counts
    /// them (None: the port takes everything; Some(0) with no SM attached).
    pub fn recv_posted(&self, d: usize) -> Option<u64> {
        let dev = self.devs.get(d)?;
        match &dev.sm {
            Some(_) if dev.is_switch => None,
            Some(sm) => dev
                .sm_rq
                .get(usize::from(sm.port).checked_sub(1)?)?
                .posted(),
            None => Some(0),
        }
    }

    /// Up to `max` completions of CA `d`'s SM port, oldest first.
    pub fn poll_cq(&mut self, d: usize, max: usize) -> Result<Vec<Wc>> {
        let sm = self.sm_host_mut(d)?;
        let n = max.min(sm.cq.len());
        Ok(sm.cq.drain(..n).collect())
    }

    fn sm_host_mut(&mut self, d: usize) -> Result<&mut crate::model::net::SmHost> {
        let dev = self
            .devs
            .get_mut(d)
            .ok_or_else(|| anyhow!("no device {d}"))?;
        let name = &dev.name;
        dev.sm
            .as_mut()
            .ok_or_else(|| anyhow!("{name}: no SM attached"))
    }
}

/// The SM's QP0 on device `dev` of a fabric.
pub struct NetQp<'a> {
    pub net: &'a mut Net,
    pub dev: usize,
    /// The SM's port (its own SMA answers hop-count-0 SMPs as arrived there).
    pub port: u8,
}

impl SmQp for NetQp<'_> {
    fn now(&self) -> u64 {
        self.net.cycle
    }
    fn post_send(&mut self, ah: &AddressHandle, mad: &Mad, wr_id: u64) -> Result<()> {
        self.net.post_send(self.dev, ah, mad, wr_id)
    }
    fn post_recv(&mut self, n: u64) -> Result<()> {
        self.net.post_recv(self.dev, n)
    }
    fn recv_posted(&self) -> Option<u64> {
        self.net.recv_posted(self.dev)
    }
    fn poll_cq(&mut self, max: usize) -> Result<Vec<Wc>> {
        self.net.poll_cq(self.dev, max)
    }
    fn local_smp(&mut self, req: &Mad) -> Result<Option<Mad>> {
        self.net.local_smp(self.dev, self.port, req)
    }
    fn describe(&self) -> String {
        self.net
            .devs
            .get(self.dev)
            .map_or_else(|| format!("device {}", self.dev), |d| d.name.clone())
    }
}

/// Receive WQEs kept posted beyond the outstanding requests (traps and
/// requests from other SMs).
const RECV_SLACK: u64 = 16;

/// Transaction-layer settings.
#[derive(Debug, Clone, Copy)]
pub struct TxOptions {
    /// Requests on the wire at once (OpenSM `--maxsmps`, default 4).
    pub max_outstanding: usize,
    /// Cycles before a request with no response is sent again.
    pub timeout: u64,
    /// Sends after the first before giving up.
    pub retries: u32,
    /// M_Key written into every SMP sent (requests, TrapRepress, SMInfo
    /// responses); 0 = none.
    pub m_key: u64,
}

impl Default for TxOptions {
    fn default() -> Self {
        TxOptions {
            max_outstanding: 4,
            timeout: 200_000,
            retries: 3,
            m_key: 0,
        }
    }
}

/// What became of a request, or a MAD nobody asked for.
#[derive(Debug)]
pub enum Event<C> {
    Response {
        ctx: C,
        req: Box<Mad>,
        resp: Box<Mad>,
        meta: SmiMeta,
    },
    /// No response after every retry.
    Timeout { ctx: C, req: Box<Mad> },
    /// A request or trap from elsewhere, or a response that matches nothing
    /// outstanding (late, duplicate).
    Unsolicited { mad: Box<Mad>, meta: SmiMeta },
}

struct Outstanding<C> {
    ah: AddressHandle,
    req: Box<Mad>,
    ctx: C,
    deadline: u64,
    tries: u32,
    timeout: u64,
    retries: u32,
}

struct Queued<C> {
    ah: AddressHandle,
    req: Box<Mad>,
    ctx: C,
    timeout: u64,
    retries: u32,
    /// Goes out with the TID it has (`submit_as_is`).
    keep_tid: bool,
}

/// Counters of a [`Transactions`].
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, serde::Serialize)]
pub struct TxStats {
    /// SMPs handed to the RTL (retries included).
    pub sent: u64,
    /// Hop-count-0 SMPs answered by the local SMA.
    pub local: u64,
    pub responses: u64,
    pub retries: u64,
    pub timeouts: u64,
    pub unsolicited: u64,
}

/// The SMP transactions of one SM on CA `dev`, SM port `port`.
pub struct Transactions<C> {
    pub dev: usize,
    pub port: u8,
    pub opts: TxOptions,
    /// High 32 bits of every TID (tells this SM's MADs from others').
    tid_base: u64,
    tid_seq: u32,
    queue: VecDeque<Queued<C>>,
    outstanding: BTreeMap<u64, Outstanding<C>>,
    pub stats: TxStats,
}

impl<C> Transactions<C> {
    pub fn new(dev: usize, port: u8, tid_base: u32, opts: TxOptions) -> Self {
        Transactions {
            dev,
            port,
            opts,
            tid_base: u64::from(tid_base) << 32,
            tid_seq: 0,
            queue: VecDeque::new(),
            outstanding: BTreeMap::new(),
            stats: TxStats::default(),
        }
    }

    /// Queue a request; its TID is assigned when it goes out.
    pub fn submit(&mut self, ah: AddressHandle, req: Mad, ctx: C) {
        let (timeout, retries) = (self.opts.timeout, self.opts.retries);
        self.submit_with(ah, req, ctx, timeout, retries);
    }

    /// Queue a request with its own timeout and retry count (a Standby's
    /// poll: one try, answered before the next poll or counted missing).
    pub fn submit_with(
        &mut self,
        ah: AddressHandle,
        mut req: Mad,
        ctx: C,
        timeout: u64,
        retries: u32,
    ) {
        mad::set_m_key(&mut req, self.opts.m_key);
        self.queue.push_back(Queued {
            ah,
            req: Box::new(req),
            ctx,
            timeout: timeout.max(1),
            retries,
            keep_tid: false,
        });
    }

    /// Queue a request that goes out exactly as given, its TID and M_Key
    /// included (a test that needs a given TID on the wire, such as
    /// reference vector V1). It is matched, timed out and retried like the
    /// others; a retry takes a fresh TID. A TID already outstanding is an
    /// error when it is sent.
    pub fn submit_as_is(&mut self, ah: AddressHandle, req: Mad, ctx: C) {
        self.queue.push_back(Queued {
            ah,
            req: Box::new(req),
            ctx,
            timeout: self.opts.timeout.max(1),
            retries: self.opts.retries,
            keep_tid: true,
        });
    }

    /// Send a MAD now, outside the transaction accounting (responses the SM
    /// gives, TrapRepress): its TID is left as it is.
    pub fn send_untracked(&mut self, net: &mut Net, ah: AddressHandle, m: &Mad) -> Result<()> {
        let (dev, port) = (self.dev, self.port);
        self.send_untracked_on(&mut NetQp { net, dev, port }, ah, m)
    }

    /// [`send_untracked`](Self::send_untracked) on any QP0.
    pub fn send_untracked_on(
        &mut self,
        qp: &mut dyn SmQp,
        ah: AddressHandle,
        m: &Mad,
    ) -> Result<()> {
        self.stats.sent += 1;
        let mut m = *m;
        mad::set_m_key(&mut m, self.opts.m_key);
        qp.post_send(&ah, &m, 0)
    }

    /// Requests queued, not yet sent.
    pub fn queued(&self) -> usize {
        self.queue.len()
    }

    /// Requests queued or on the wire.
    pub fn pending(&self) -> usize {
        self.queue.len() + self.outstanding.len()
    }

    /// Requests are queued and the window has room: the next pump sends.
    pub fn can_send(&self) -> bool {
        !self.queue.is_empty() && self.outstanding.len() < self.opts.max_outstanding.max(1)
    }

    /// The earliest timeout, if any request is on the wire.
    pub fn next_deadline(&self) -> Option<u64> {
        self.outstanding.values().map(|o| o.deadline).min()
    }

    fn next_tid(&mut self) -> u64 {
        loop {
            self.tid_seq = self.tid_seq.wrapping_add(1);
            let tid = self.tid_base | u64::from(self.tid_seq);
            if !self.outstanding.contains_key(&tid) {
                return tid;
            }
        }
    }

    /// Do everything due at the fabric's current cycle: take completions,
    /// match responses, time out and retry, send what the window allows,
    /// keep receive WQEs posted. Returns what happened.
    pub fn pump(&mut self, net: &mut Net) -> Result<Vec<Event<C>>> {
        let (dev, port) = (self.dev, self.port);
        self.pump_on(&mut NetQp { net, dev, port })
    }

    /// [`pump`](Self::pump) on any QP0.
    pub fn pump_on(&mut self, qp: &mut dyn SmQp) -> Result<Vec<Event<C>>> {
        let now = qp.now();
        let mut events = Vec::new();
        for wc in qp.poll_cq(usize::MAX)? {
            let Some(m) = wc.mad else { continue };
            let is_resp = mad::method(&m) & 0x80 != 0;
            let tid = mad::tid(&m);
            match self.outstanding.get(&tid) {
                Some(o) if is_resp && mad::class(&o.req) == mad::class(&m) => {
                    let o = self.outstanding.remove(&tid).expect("present");
                    self.stats.responses += 1;
                    events.push(Event::Response {
                        ctx: o.ctx,
                        req: o.req,
                        resp: m,
                        meta: wc.meta,
                    });
                }
                _ => {
                    self.stats.unsolicited += 1;
                    events.push(Event::Unsolicited {
                        mad: m,
                        meta: wc.meta,
                    });
                }
            }
        }
        // Timeouts.
        let due: Vec<u64> = self
            .outstanding
            .iter()
            .filter(|(_, o)| o.deadline <= now)
            .map(|(&t, _)| t)
            .collect();
        for tid in due {
            let mut o = self.outstanding.remove(&tid).expect("present");
            if o.tries > o.retries {
                self.stats.timeouts += 1;
                events.push(Event::Timeout {
                    ctx: o.ctx,
                    req: o.req,
                });
                continue;
            }
            // Same request, a fresh TID (a late answer to the old one is
            // then unsolicited, never taken for the new one).
            let tid = self.next_tid();
            mad::set_tid(&mut o.req, tid);
            o.tries += 1;
            o.deadline = now + o.timeout;
            self.stats.retries += 1;
            self.stats.sent += 1;
            qp.post_send(&o.ah, &o.req, tid)?;
            self.outstanding.insert(tid, o);
        }
        // New requests.
        while self.outstanding.len() < self.opts.max_outstanding.max(1) {
            let Some(Queued {
                ah,
                mut req,
                ctx,
                timeout,
                retries,
                keep_tid,
            }) = self.queue.pop_front()
            else {
                break;
            };
            let tid = if keep_tid {
                let tid = mad::tid(&req);
                if self.outstanding.contains_key(&tid) {
                    return Err(anyhow!("TID {tid:#x} is already outstanding"));
                }
                tid
            } else {
                let tid = self.next_tid();
                mad::set_tid(&mut req, tid);
                tid
            };
            if mad::is_dr(&req) && req[mad::off::HOP_CNT] == 0 {
                // For this node's own SMA: the host stack answers it.
                self.stats.local += 1;
                let resp = qp
                    .local_smp(&req)?
                    .ok_or_else(|| anyhow!("{}: the local SMA gave no response", qp.describe()))?;
                events.push(Event::Response {
                    ctx,
                    req,
                    resp: Box::new(resp),
                    meta: SmiMeta {
                        port: self.port,
                        ..SmiMeta::default()
                    },
                });
                continue;
            }
            self.stats.sent += 1;
            qp.post_send(&ah, &req, tid)?;
            self.outstanding.insert(
                tid,
                Outstanding {
                    ah,
                    req,
                    ctx,
                    deadline: now + timeout,
                    tries: 1,
                    timeout,
                    retries,
                },
            );
        }
        // Receive WQEs: one per outstanding request plus slack for traps
        // and requests from other SMs.
        let want = self.outstanding.len() as u64 + RECV_SLACK;
        let have = qp.recv_posted().unwrap_or(0);
        if have < want {
            qp.post_recv(want - have)?;
        }
        Ok(events)
    }
}
