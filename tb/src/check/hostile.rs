//! A hostile client for `vl15 serve` (ibspec §10 is the protocol it
//! abuses), and the check that the server is still up and right afterwards.
//!
//! [`storm`] sends, as fast as the sockets take them, for a time bound:
//! control datagrams of every wrong size, wrong magic, unknown and ERROR
//! types, client ids out of range or of other clients, CONNECTs naming
//! unknown nodes (bad UTF-8, no NUL), CONNECTs whose data socket does not
//! exist, clients that connect and vanish without DISCONNECT, reused client
//! ids, more clients than ibsim's ten slots, control messages whose sender
//! never reads the replies; and data datagrams on every `out<i>` socket
//! (connected or not): garbage, every wrong length, `sim_request`s with
//! DLID 0, permissive GMPs, QPs > 1, absurd lengths, and MADs of every kind
//! (the fuzz generator's), DR SMPs with hop counts up to 255 included.
//!
//! [`check_well_behaved`] then attaches a normal client and asks the fabric
//! a directed-route Get(NodeInfo) at hop 0 (the CA itself) and hop 1 (the
//! switch behind it) and compares the answers with the topology file.

use std::os::unix::net::UnixDatagram;
use std::path::Path;
use std::time::{Duration, Instant};

use anyhow::{bail, ensure, Context, Result};

use crate::agents::ibsim::{
    abstract_addr, ctl, IbsimClient, SimCtl, SimRequest, MAX_CLIENTS, SIM_REQUEST_BYTES,
};
use crate::agents::serve::{Background, ServeOptions, ServeStats};
use crate::check::fuzz::{gen_ibsim, gen_mad, mutate};
use crate::model::stream::Rng;
use crate::proto::mad;
use crate::proto::packet::consts::*;
use crate::proto::packet::NodeInfo;
use crate::proto::topology::{NodeKind, Topology};

/// What a storm sent.
#[derive(Debug, Clone, Copy, Default)]
pub struct StormCounts {
    /// Datagrams sent to the control socket.
    pub ctl: u64,
    /// Datagrams sent to the data sockets.
    pub data: u64,
    /// CONNECTs the server accepted.
    pub connected: u64,
    /// Clients that went away without DISCONNECT.
    pub vanished: u64,
    /// Sends the kernel refused (a full queue, or an `out<i>` socket
    /// connected to another client) or that timed out.
    pub send_errors: u64,
}

/// Client ids of hostile clients: far from `unique_client_id`'s (pid-based).
const HOSTILE_ID_BASE: u32 = 0xF000_0000;

struct Hostile {
    base: String,
    rng: Rng,
    /// A socket bound as a client's control socket that never reads.
    deaf: UnixDatagram,
    /// An unbound socket (its replies cannot be sent back).
    anon: UnixDatagram,
    /// Live hostile clients: (id, ctl socket, data socket).
    live: Vec<(u32, UnixDatagram, UnixDatagram)>,
    next_id: u32,
    n: StormCounts,
}

fn bind(name: &str) -> Result<UnixDatagram> {
    let s = UnixDatagram::bind_addr(&abstract_addr(name)?)
        .with_context(|| format!("binding @{name}"))?;
    s.set_write_timeout(Some(Duration::from_millis(50)))?;
    s.set_read_timeout(Some(Duration::from_millis(500)))?;
    Ok(s)
}

impl Hostile {
    fn new(base: &str, seed: u64) -> Result<Hostile> {
        let deaf = bind(&format!("{base}:ctl{}", HOSTILE_ID_BASE - 1))?;
        let anon = UnixDatagram::unbound()?;
        anon.set_write_timeout(Some(Duration::from_millis(50)))?;
        Ok(Hostile {
            base: base.to_string(),
            rng: Rng::new(seed),
            deaf,
            anon,
            live: Vec::new(),
            next_id: HOSTILE_ID_BASE,
            n: StormCounts::default(),
        })
    }

    fn send_ctl(&mut self, from: Option<usize>, b: &[u8]) {
        let Ok(addr) = abstract_addr(&format!("{}:ctl", self.base)) else {
            return;
        };
        let sock = match from {
            Some(i) if i < self.live.len() => &self.live[i].1,
            _ if self.rng.chance(50) => &self.deaf,
            _ => &self.anon,
        };
        self.n.ctl += 1;
        if sock.send_to_addr(b, &addr).is_err() {
            self.n.send_errors += 1;
        }
    }

    fn send_out(&mut self, slot: u32, b: &[u8]) {
        let Ok(addr) = abstract_addr(&format!("{}:out{slot}", self.base)) else {
            return;
        };
        self.n.data += 1;
        if self.anon.send_to_addr(b, &addr).is_err() {
            self.n.send_errors += 1;
        }
    }

    /// A CONNECT as `sim_client.c` sends it, for `node`; `with_in`: bind the
    /// client's data socket first (else the server cannot reach it).
    fn connect(&mut self, node: &[u8], issm: bool, reuse: bool, with_in: bool) -> Result<()> {
        let id = if reuse && !self.live.is_empty() {
            let k = self.rng.below(self.live.len());
            self.live[k].0
        } else {
            self.next_id += 1;
            self.next_id
        };
        let mut info = [0u8; 44];
        info[0..4].copy_from_slice(&id.to_ne_bytes());
        info[8..12].copy_from_slice(&u32::from(issm).to_ne_bytes());
        let n = node.len().min(32);
        info[12..12 + n].copy_from_slice(&node[..n]);
        let msg = SimCtl::new(ctl::CONNECT, 0, &info)?;
        // A fresh ctl socket for this client (the reply tells the slot).
        let Ok(c) = bind(&format!("{}:ctl{id}", self.base)) else {
            return Ok(()); // id reused while its first socket lives
        };
        let d = if with_in {
            match bind(&format!("{}:in{id}", self.base)) {
                Ok(d) => Some(d),
                Err(_) => return Ok(()),
            }
        } else {
            None
        };
        let addr = abstract_addr(&format!("{}:ctl", self.base))?;
        self.n.ctl += 1;
        if c.send_to_addr(&msg.encode(), &addr).is_err() {
            self.n.send_errors += 1;
            return Ok(());
        }
        let mut buf = [0u8; 128];
        let Ok(k) = c.recv(&mut buf) else {
            return Ok(());
        };
        let Ok(r) = SimCtl::decode(&buf[..k]) else {
            bail!("the server answered CONNECT with {k} bytes that are no sim_ctl");
        };
        if r.kind == ctl::CONNECT {
            self.n.connected += 1;
            let slot = u32::from_ne_bytes([r.data[0], r.data[1], r.data[2], r.data[3]]);
            ensure!(slot < MAX_CLIENTS, "the server gave slot {slot}");
            if let Some(d) = d {
                let _ = d.connect_addr(&abstract_addr(&format!("{}:out{slot}", self.base))?);
                let _ = d.set_nonblocking(true);
                self.live.push((slot, c, d));
            }
        }
        Ok(())
    }

    /// Drop a live client without DISCONNECT.
    fn vanish(&mut self) {
        if !self.live.is_empty() {
            let k = self.rng.below(self.live.len());
            self.live.swap_remove(k);
            self.n.vanished += 1;
        }
    }

    /// Read what the server sent the live clients (as a client would, or
    /// not: a client that never reads is one of the cases).
    fn drain(&mut self) {
        let mut buf = [0u8; 1024];
        for (_, c, d) in &self.live {
            let _ = c.set_nonblocking(true);
            while c.recv(&mut buf).is_ok() {}
            while d.recv(&mut buf).is_ok() {}
        }
    }

    fn one(&mut self) -> Result<()> {
        let kind = self.rng.below(16);
        self.one_kind(kind)
    }

    fn one_kind(&mut self, kind: usize) -> Result<()> {
        let r = &mut self.rng;
        match kind {
            // Control: garbage of every size.
            0 => {
                let n = r.below(200);
                let b: Vec<u8> = (0..n).map(|_| r.next_u64() as u8).collect();
                self.send_ctl(None, &b);
            }
            // Control: a sim_ctl (or a request), mutated.
            1 | 2 => {
                let mut b = gen_ibsim(r);
                if r.chance(50) {
                    mutate(r, &mut b, false);
                }
                let from = if r.chance(50) {
                    Some(r.below(10))
                } else {
                    None
                };
                self.send_ctl(from, &b);
            }
            // Control: right magic, every type, any client id.
            3 => {
                let kind = if r.chance(80) {
                    r.below(13) as u32
                } else {
                    r.next_u64() as u32
                };
                let id = {
                    let v = r.next_u64() as u32;
                    *r.pick(&[0, 1, 9, 10, 11, u32::MAX, v])
                };
                let data: Vec<u8> = (0..64).map(|_| r.next_u64() as u8).collect();
                let mut c = SimCtl::new(kind, id, &data)?;
                c.len = r.next_u64() as u32;
                let b = c.encode();
                let from = if r.chance(50) {
                    Some(r.below(10))
                } else {
                    None
                };
                self.send_ctl(from, &b);
            }
            // CONNECT: valid node, unknown node, bad UTF-8, 32 bytes without
            // NUL; sometimes without a data socket, reused id, IsSM.
            4..=6 => {
                let node: Vec<u8> = match r.below(6) {
                    0 => b"Hca1".to_vec(),
                    1 => b"Switch1".to_vec(),
                    2 => Vec::new(),
                    3 => b"\xFF\xFEnobody".to_vec(),
                    4 => vec![b'A'; 32],
                    _ => b"Hca2".to_vec(),
                };
                let issm = r.chance(20);
                let reuse = r.chance(20);
                let with_in = r.chance(80);
                self.connect(&node, issm, reuse, with_in)?;
            }
            7 => self.vanish(),
            // Data: garbage and every wrong length on any out socket.
            8 | 9 => {
                let len = match r.below(3) {
                    0 => r.below(600),
                    1 => *r.pick(&[0, 1, 31, 32, 287, 289, 4096, 65000]),
                    _ => SIM_REQUEST_BYTES,
                };
                let b: Vec<u8> = (0..len).map(|_| r.next_u64() as u8).collect();
                let slot = r.below(MAX_CLIENTS as usize) as u32;
                self.send_out(slot, &b);
            }
            // Data: sim_requests with MADs of every kind, mutated or not,
            // from live clients (so they reach the fabric) or strangers.
            _ => {
                let mut req = SimRequest {
                    dlid: {
                        let v = r.next_u64() as u16;
                        *r.pick(&[0, 1, 2, 3, 0xBFFF, PERMISSIVE_LID, v])
                    },
                    slid: r.next_u64() as u16,
                    dqp: *r.pick(&[QP0, QP0, QP1, 2, u32::MAX]),
                    sqp: r.below(3) as u32,
                    status: 0,
                    length: {
                        let v = r.next_u64();
                        *r.pick(&[256, 0, 36, 100, u64::MAX, v])
                    },
                    mad: gen_mad(r),
                };
                if req.dqp == QP0 && r.chance(50) {
                    req.dlid = PERMISSIVE_LID;
                }
                let mut b = req.encode().to_vec();
                if r.chance(30) {
                    let mut m = req.mad.to_vec();
                    mutate(r, &mut m, false);
                    m.resize(256, 0);
                    b[32..].copy_from_slice(&m);
                }
                if !self.live.is_empty() && r.chance(70) {
                    let k = r.below(self.live.len());
                    self.n.data += 1;
                    if self.live[k].2.send(&b).is_err() {
                        self.n.send_errors += 1;
                    }
                } else {
                    let slot = r.below(MAX_CLIENTS as usize) as u32;
                    self.send_out(slot, &b);
                }
            }
        }
        if self.rng.chance(30) {
            self.drain();
        }
        Ok(())
    }
}

/// Storm the server at `sockname` for `time` (at most `max` datagrams);
/// every hostile client is gone when it returns (none disconnected).
pub fn storm(sockname: &str, seed: u64, time: Duration, max: u64) -> Result<StormCounts> {
    let mut h = Hostile::new(sockname, seed)?;
    let t0 = Instant::now();
    while t0.elapsed() < time && h.n.ctl + h.n.data < max {
        h.one()?;
    }
    h.n.vanished += h.live.len() as u64;
    Ok(h.n)
}

/// Attach a normal client to `ca` (a CA with port 1 cabled to a switch) and
/// check that hop 0 and hop 1 directed-route Get(NodeInfo) answer what the
/// topology file says: the CA's and the switch's type, ports, NodeGUID, and
/// the port the SMP arrived on (the CA's port 1, the switch's port at the
/// other end of the cable).
pub fn check_well_behaved(sockname: &str, topo: &Topology, ca: &str) -> Result<String> {
    let node = topo
        .node(ca)
        .with_context(|| format!("no node {ca:?} in the topology"))?;
    let (sw, sw_port) = topo
        .remote(topo.node_index(ca).unwrap_or(0), 1)
        .with_context(|| format!("{ca} port 1 is not cabled"))?;
    let sw = &topo.nodes[sw];
    let mut c = IbsimClient::connect(sockname, Some(ca))
        .context("a well-behaved client could not attach after the storm")?;
    c.set_timeout(Duration::from_secs(5));
    let mut out = String::new();
    for (hops, want, port) in [(0usize, node, 1u8), (1, sw, sw_port)] {
        let path: Vec<u8> = vec![1; hops];
        let tid = 0x1234_0000 + hops as u64;
        let req = mad::dr_request(METHOD_GET, ATTR_NODE_INFO, 0, tid, &path);
        let resp = c
            .smp(&req, PERMISSIVE_LID)
            .with_context(|| format!("DR Get(NodeInfo) at hop {hops} after the storm"))?;
        ensure!(
            mad::method(&resp) == METHOD_GET_RESP && mad::status(&resp) == 0,
            "hop {hops}: method {:#04x} status {:#06x}",
            mad::method(&resp),
            mad::status(&resp)
        );
        ensure!(
            mad::tid(&resp) & 0xFFFF_FFFF_FFFF == tid,
            "hop {hops}: TID {:#x}",
            mad::tid(&resp)
        );
        let ni = NodeInfo::decode(mad::data(&resp))?;
        let kind = match want.kind {
            NodeKind::Switch => NODE_TYPE_SWITCH,
            NodeKind::Ca => NODE_TYPE_CA,
            NodeKind::Router => NODE_TYPE_ROUTER,
        };
        ensure!(
            ni.node_type == kind
                && ni.num_ports == want.nports
                && ni.node_guid == want.node_guid
                && ni.local_port_num == port,
            "hop {hops}: NodeInfo {ni:?}, the file says {:?}: type {kind}, {} ports, GUID {:#x}, port {port}",
            want.id,
            want.nports,
            want.node_guid
        );
        out.push_str(&format!(
            "hop {hops}: {} (GUID {:#x}, {} ports, port {port}) ok; ",
            want.id, ni.node_guid, ni.num_ports
        ));
    }
    Ok(out)
}

/// A storm run of the bench: the server in this process on
/// `net.2sw2path4hca`.
#[derive(Debug, Clone)]
pub struct StormReport {
    pub seed: u64,
    pub elapsed: Duration,
    pub counts: StormCounts,
    pub sent: u64,
    pub stats: ServeStats,
    /// The well-behaved client's result.
    pub after: std::result::Result<String, String>,
}

impl StormReport {
    pub fn ok(&self) -> bool {
        self.after.is_ok()
    }

    pub fn summary(&self) -> String {
        let c = &self.counts;
        format!(
            "fuzz serve    seed {:#018x}: {} datagrams in {:.1} s ({:.0}/s: {} ctl, {} data; {} clients attached, {} vanished, {} sends refused by the kernel); server: {} connects, {} refused, {} dropped, {} to RTL, {} local, {} returned 110; afterwards: {}",
            self.seed,
            self.sent,
            self.elapsed.as_secs_f64(),
            self.sent as f64 / self.elapsed.as_secs_f64().max(1e-9),
            c.ctl,
            c.data,
            c.connected,
            c.vanished,
            c.send_errors,
            self.stats.connects,
            self.stats.refused,
            self.stats.dropped,
            self.stats.to_rtl,
            self.stats.local,
            self.stats.not_delivered,
            match &self.after {
                Ok(s) => format!("ok ({s})"),
                Err(e) => format!("FAILED: {e}"),
            }
        )
    }
}

/// Start `vl15 serve` on `net.2sw2path4hca` in this process, storm it for
/// `time`, check it with a well-behaved client, stop it.
pub fn storm_run(seed: u64, time: Duration) -> Result<StormReport> {
    let dir = tempfile::tempdir().context("a scratch directory for the topology")?;
    let (name, text) = crate::check::fuzz::EXAMPLES[3];
    let path = dir.path().join(name);
    std::fs::write(&path, text)?;
    storm_file(&path, seed, time, u64::MAX)
}

/// [`storm_run`] on any topology file whose first CA is cabled on port 1.
pub fn storm_file(path: &Path, seed: u64, time: Duration, max: u64) -> Result<StormReport> {
    let topo = Topology::load(path)?;
    let ca = topo
        .nodes
        .iter()
        .find(|n| n.kind == NodeKind::Ca)
        .map(|n| n.id.clone())
        .context("the topology has no CA")?;
    let opts = ServeOptions {
        timeout_cycles: 20_000,
        // The storm earns a log line per datagram; the counts say enough.
        log_lines_per_second: 2,
        ..ServeOptions::default()
    };
    let server = Background::start(path, opts)?;
    let t0 = Instant::now();
    let counts = storm(&server.sockname, seed, time, max)?;
    let elapsed = t0.elapsed();
    let after = check_well_behaved(&server.sockname, &topo, &ca).map_err(|e| format!("{e:#}"));
    let alive = server.prober.run(|net| net.cycle).is_ok();
    let fin = server
        .stop()
        .context("vl15 serve failed during the storm")?;
    let after = if alive {
        after
    } else {
        Err("the server no longer answers probes".into())
    };
    Ok(StormReport {
        seed,
        elapsed,
        counts,
        sent: counts.ctl + counts.data,
        stats: fin.stats,
        after,
    })
}
