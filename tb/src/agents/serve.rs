//! `vl15 serve`: an ibsim-compatible server (ibspec §10) in front of the RTL
//! fabric, so that unmodified libibumad programs (OpenSM, infiniband-diags)
//! run against it with `LD_PRELOAD=libumad2sim.so`.
//!
//! * Sockets: `<base>:ctl` and `<base>:out<i>` (i = 0..10) in the abstract
//!   AF_UNIX namespace, names with the trailing NUL, as ibsim binds them.
//!   Nothing else is bound or listened on.
//! * Control (`struct sim_ctl`): CONNECT (by `SIM_HOST` = topology node id
//!   or NodeDescription, matched whole as ibsim does; a CA attached at
//!   port 1, a switch at port 0; unset: the file's first node), DISCONNECT, GET_PORT, GET_VENDOR, GET_GID,
//!   GET_GUID, GET_NODEINFO, GET_PORTINFO, SET_ISSM, GET_PKEYS, answered from
//!   the node's own SMA in the same byte layouts as ibsim 0.10.
//! * Data (`struct sim_request`): a QP0 MAD from client i gets its TID bits
//!   63:48 replaced by i (as ibsim does) and enters the RTL through the
//!   node's SM send interface (a switch's: `sm_tx_*` of its port-0 SMI) ([`Net::post_send`]): directed route when dlid =
//!   0xFFFF, else LID-routed; a hop-count-0 DR SMP is answered by the node's
//!   own SMA on the host side, as the kernel does. What the RTL delivers to
//!   the CA's receive queue goes back to the client named by TID bits 63:48
//!   (responses) or to the node's issm client (requests, traps).
//! * QP1 ([`crate::agents::gmp`]): a GMP from client i (dqp 1, TID bits 63:48 = i)
//!   is built by the CA's host as a whole UD packet (LRH VL from the
//!   port's SL2VL, BTH 0x64, P_Key 0xFFFF, DETH Q_Key 0x80010000, ICRC) and
//!   enters the RTL through the CA port's data TX stream; RTL switches
//!   forward it LID-routed on its data VL; the destination CA's data RX
//!   stream delivers it to that host's GSI. PerfMgt requests are answered
//!   there by the node's PMA from the port's RTL counters, and the answer
//!   crosses the RTL back. SA (class 0x03) and every other GMP request goes
//!   to the node's SM client (as ibsim does), whose response crosses back
//!   the same way; responses go to the client named by TID bits 63:48. A
//!   GMP to a switch LID reaches the switch's port-0 GMP path (`gmp_rx`)
//!   and its PMA, whose answer leaves by `gmp_tx`. A request nobody can
//!   take (no SM client there) comes back with status 110. A client's MAD
//!   to a QP > 1 is refused with 110 (`sim_request` has no Q_Key field).
//! * A request with no response within [`ServeOptions::timeout_cycles`]
//!   simulated cycles is returned to its client with status 110
//!   (ETIMEDOUT), as ibsim returns what it cannot deliver.
//! * The fabric is clocked only while a client's request is in flight or a
//!   device has work; otherwise the server blocks on its sockets.
//! * ibsim's console ([`crate::agents::console`]): lines from a
//!   [`ConsoleLink`] run in the server's thread between two turns; `Attached`
//!   and `X` on the client table here.
//!
//! A client on a switch sends its GMPs on the switch's `gmp_tx` and gets
//! them from its `gmp_rx` (port 0's GMP path).
//!
//! Not modelled (yet): `SIM_HOST` naming a port (ibsim has no such form
//! either: it matches the whole string against node ids and
//! NodeDescriptions)
//! , inet (remote) mode.
//!
//! Bad input (wrong magic, wrong sizes, unknown types or nodes, a twelfth
//! client, a client gone mid-transaction) is answered with SIM_CTL_ERROR or
//! dropped, with one log line on stderr; nothing here panics on socket input.

use std::cell::Cell;
use std::collections::HashMap;
use std::io::ErrorKind;
use std::os::unix::net::{SocketAddr, UnixDatagram};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc;
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use anyhow::{anyhow, bail, Context, Result};

use crate::agents::console::{self, ConsoleState, Done, Frontend};
use crate::agents::gmp::{received_mad_len, rmpp_send_header, GmpDest, GmpRecv, Gsi};
use crate::agents::ibsim::{
    abstract_addr, ctl, SimCtl, SimRequest, MAX_CLIENTS, SIM_STATUS_ETIMEDOUT,
};
use crate::agents::node_sma::Net;
use crate::agents::umad_classes::{self, Classes};
use crate::model::device::AddressHandle;
use crate::proto::mad;
use crate::proto::packet::consts::{
    ATTR_NODE_INFO, ATTR_PORT_INFO, ATTR_P_KEY_TABLE, CLASS_SA, METHOD_GET, METHOD_GET_RESP,
    METHOD_RESP_BIT, METHOD_SET, METHOD_TRAP, METHOD_TRAP_REPRESS, PERMISSIVE_LID, QP0, QP1,
    STATUS_ATTR_UNSUPPORTED,
};

/// 4.096 µs × 2^18 (PortInfo SubnetTimeOut 18, OpenSM's default) in
/// cycles of 1 µs.
const SUBNET_TIMEOUT_CYCLES: u64 = (4096 << 18) / 1000;

/// Length of `sim_client_info.nodeid`.
const NODEID_BYTES: usize = 32;
/// `sizeof(struct sim_client_info)`.
const CLIENT_INFO_BYTES: usize = 12 + NODEID_BYTES;

/// Settings of a [`Server`].
#[derive(Debug, Clone)]
pub struct ServeOptions {
    /// Socket base name (`IBSIM_SOCKNAME`).
    pub sockname: String,
    /// Simulated cycles a request may take before it is returned with
    /// status 110.
    pub timeout_cycles: u64,
    /// How long the server blocks on its sockets when nothing is in flight
    /// before it looks at its stop flag again.
    pub idle_wait: Duration,
    /// Cycles simulated between two looks at the sockets while busy.
    pub batch: u64,
    /// At most this many log lines a second on stderr; the rest are
    /// counted (see [`LOG_LINES_PER_SECOND`], the default).
    pub log_lines_per_second: u32,
}

impl Default for ServeOptions {
    fn default() -> Self {
        ServeOptions {
            sockname: std::env::var("IBSIM_SOCKNAME").unwrap_or_else(|_| "sim".to_string()),
            timeout_cycles: 2_000_000,
            idle_wait: Duration::from_millis(100),
            batch: 256,
            log_lines_per_second: LOG_LINES_PER_SECOND,
        }
    }
}

/// What the server counted.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, serde::Serialize)]
pub struct ServeStats {
    pub connects: u64,
    pub refused: u64,
    /// MADs from clients handed to the RTL.
    pub to_rtl: u64,
    /// Hop-count-0 DR SMPs answered by the local SMA.
    pub local: u64,
    /// MADs from the RTL handed to clients.
    pub to_clients: u64,
    /// Requests returned with status 110 (timeout, unroutable, nobody to
    /// take them).
    pub not_delivered: u64,
    /// Datagrams dropped (bad size, magic, client).
    pub dropped: u64,
}

struct Client {
    /// The client's id (its pid in the socket names).
    id: u32,
    /// The QP it says it serves (`sim_client_info.qp`).
    qp: u32,
    dev: usize,
    node: String,
    issm: bool,
    /// The GMP classes it is known to have agents for.
    classes: Classes,
}

struct InFlight {
    client: usize,
    deadline: u64,
    req: SimRequest,
}

enum Msg {
    Ctl(Vec<u8>, SocketAddr),
    Data(usize, Vec<u8>),
    Probe(Box<dyn FnOnce(&mut Net) + Send>),
    /// A console line and where its text (and whether to quit) goes.
    Console(String, mpsc::Sender<(String, bool)>),
}

/// Runs console lines in a running server, between two turns.
#[derive(Clone)]
pub struct ConsoleLink(mpsc::Sender<Msg>);

impl ConsoleLink {
    /// Run `line` ([`crate::agents::console::execute`]); its text and
    /// whether it ends the server. None when the server is gone.
    pub fn run(&self, line: &str) -> Option<(String, bool)> {
        let (tx, rx) = mpsc::channel();
        self.0.send(Msg::Console(line.to_string(), tx)).ok()?;
        rx.recv().ok()
    }
}

/// Runs closures on a running server's fabric, in the server's thread,
/// between two turns (what a test uses to read RTL registers while clients
/// are served).
#[derive(Clone)]
pub struct Prober(mpsc::Sender<Msg>);

impl Prober {
    /// Run `f` on the fabric and return its result.
    pub fn run<T: Send + 'static>(
        &self,
        f: impl FnOnce(&mut Net) -> T + Send + 'static,
    ) -> Result<T> {
        let (tx, rx) = mpsc::channel();
        self.0
            .send(Msg::Probe(Box::new(move |net| {
                let _ = tx.send(f(net));
            })))
            .map_err(|_| anyhow!("the server is gone"))?;
        rx.recv()
            .map_err(|_| anyhow!("the server dropped the probe"))
    }
}

/// One `vl15 serve` instance on one fabric.
pub struct Server {
    pub net: Net,
    /// QP1 of every CA port and switch port 0: GMP transport and the PMAs.
    pub gsi: Gsi,
    pub opts: ServeOptions,
    pub stats: ServeStats,
    ctl: UnixDatagram,
    outs: Vec<UnixDatagram>,
    clients: Vec<Option<Client>>,
    inflight: HashMap<u64, InFlight>,
    rx: mpsc::Receiver<Msg>,
    /// For [`Server::prober`].
    tx: mpsc::Sender<Msg>,
    stop: Arc<AtomicBool>,
    readers: Vec<JoinHandle<()>>,
    log: Log,
    /// ibsim's console ([`ConsoleLink`]).
    pub console: ConsoleState,
}

/// At most this many log lines a second; the rest are counted and their
/// number printed once the second is over. A hostile client gets a log line
/// for every datagram it gets dropped (tens of thousands a second, 40 MB
/// of stderr a minute): without a limit it could fill a disk or drown the
/// lines that matter.
pub const LOG_LINES_PER_SECOND: u32 = 50;

/// The server's stderr log, rate-limited (see [`LOG_LINES_PER_SECOND`]).
struct Log {
    max: u32,
    window: Cell<Instant>,
    lines: Cell<u32>,
    suppressed: Cell<u64>,
}

impl Log {
    fn new(max: u32) -> Self {
        Log {
            max,
            window: Cell::new(Instant::now()),
            lines: Cell::new(0),
            suppressed: Cell::new(0),
        }
    }

    /// Print one line unless the second's quota is used up; whether printed.
    fn line(&self, base: &str, msg: std::fmt::Arguments) -> bool {
        if self.window.get().elapsed() >= Duration::from_secs(1) {
            let n = self.suppressed.replace(0);
            if n > 0 {
                eprintln!("vl15 serve @{base}: ({n} more log lines in the last second not shown)");
            }
            self.window.set(Instant::now());
            self.lines.set(0);
        }
        if self.lines.get() < self.max {
            self.lines.set(self.lines.get() + 1);
            eprintln!("vl15 serve @{base}: {msg}");
            true
        } else {
            self.suppressed.set(self.suppressed.get() + 1);
            false
        }
    }
}

macro_rules! slog {
    ($s:expr, $($t:tt)*) => {{
        $s.log.line(&$s.opts.sockname, format_args!($($t)*));
    }};
}

impl Server {
    /// Bind `<base>:ctl` and `<base>:out0..9` for `net`.
    pub fn bind(mut net: Net, opts: ServeOptions) -> Result<Server> {
        // A real SM counts a trap sent again: OpenSM disables the port of
        // a switch that sends the same one 10 times. An SMA repeats a trap
        // not repressed once per SubnetTimeOut period, 4.096 µs × 2^18 at
        // OpenSM's default (1 cycle = 1 µs); the server runs many of those
        // in a moment while it waits out a lost request's deadline.
        net.opts.trap_interval = net.opts.trap_interval.max(SUBNET_TIMEOUT_CYCLES);
        let base = opts.sockname.clone();
        let log_max = opts.log_lines_per_second;
        if base.is_empty() || base.contains('\0') {
            bail!("socket name {base:?} must be non-empty and without NUL");
        }
        let bind = |name: String| -> Result<UnixDatagram> {
            let a = abstract_addr(&name)?;
            UnixDatagram::bind_addr(&a).with_context(|| {
                format!("binding @{name} (is another ibsim or vl15 serve using {base:?}?)")
            })
        };
        let ctl = bind(format!("{base}:ctl"))?;
        let mut outs = Vec::new();
        for i in 0..MAX_CLIENTS {
            outs.push(bind(format!("{base}:out{i}"))?);
        }
        let stop = Arc::new(AtomicBool::new(false));
        let (tx, rx) = mpsc::channel();
        let mut readers = Vec::new();
        let mut socks = vec![(None, ctl.try_clone().context("cloning the control socket")?)];
        for (i, out) in outs.iter().enumerate() {
            socks.push((Some(i), out.try_clone().context("cloning a data socket")?));
        }
        for (slot, sock) in socks {
            readers.push(spawn_reader(slot, sock, tx.clone(), stop.clone())?);
        }
        Ok(Server {
            gsi: Gsi::new(&net),
            net,
            opts,
            stats: ServeStats::default(),
            ctl,
            outs,
            clients: (0..MAX_CLIENTS).map(|_| None).collect(),
            inflight: HashMap::new(),
            rx,
            tx,
            stop,
            readers,
            log: Log::new(log_max),
            console: ConsoleState::new(0),
        })
    }

    /// A handle that runs closures on this server's fabric.
    pub fn prober(&self) -> Prober {
        Prober(self.tx.clone())
    }

    /// A handle that runs console lines in this server.
    pub fn console_link(&self) -> ConsoleLink {
        ConsoleLink(self.tx.clone())
    }

    /// A flag that ends [`Server::run`] when set.
    pub fn stop_flag(&self) -> Arc<AtomicBool> {
        self.stop.clone()
    }

    /// Serve until the stop flag is set. Errors only when the simulation
    /// itself fails; socket input never ends it.
    pub fn run(&mut self) -> Result<()> {
        while !self.stop.load(Ordering::Relaxed) {
            self.turn()?;
        }
        Ok(())
    }

    fn busy(&self) -> bool {
        // (a device asleep until a wake-up has work too: a twin calm while
        // its SMI sends what its host gave it)
        !self.inflight.is_empty() || self.net.has_work() || !self.gsi.idle()
    }

    /// One turn of the loop: take what the sockets have, then simulate a
    /// batch of cycles if anything is in flight, else block on the sockets
    /// for up to `idle_wait`.
    pub fn turn(&mut self) -> Result<()> {
        if !self.busy() {
            match self.rx.recv_timeout(self.opts.idle_wait) {
                Ok(m) => self.handle(m)?,
                Err(mpsc::RecvTimeoutError::Timeout) => return Ok(()),
                // The readers end when the stop flag is set.
                Err(mpsc::RecvTimeoutError::Disconnected) if self.stop.load(Ordering::Relaxed) => {
                    return Ok(())
                }
                Err(mpsc::RecvTimeoutError::Disconnected) => {
                    bail!("the socket reader threads ended")
                }
            }
        }
        while let Ok(m) = self.rx.try_recv() {
            self.handle(m)?;
        }
        if !self.gsi.idle() {
            // GMPs a host looped back (to its own LID) need no cycle.
            self.deliver_gmps()?;
        }
        for _ in 0..self.opts.batch {
            if !self.busy() {
                break;
            }
            if self.net.quiet() {
                // Nothing is clocked: jump to the next wake-up, or to the
                // earliest deadline of a request the fabric has lost.
                let deadline = self.inflight.values().map(|f| f.deadline).min();
                match (self.net.next_wake(), deadline) {
                    (Some(w), Some(dl)) => self.net.cycle = self.net.cycle.max(w.min(dl)),
                    (Some(w), None) => self.net.cycle = self.net.cycle.max(w),
                    (None, Some(dl)) => self.net.cycle = self.net.cycle.max(dl),
                    (None, None) => break,
                }
            }
            self.net.step()?;
            self.deliver()?;
            self.expire();
        }
        Ok(())
    }

    fn handle(&mut self, m: Msg) -> Result<()> {
        match m {
            Msg::Ctl(b, from) => {
                self.control(&b, &from);
                Ok(())
            }
            Msg::Data(i, b) => self.data(i, &b),
            Msg::Probe(f) => {
                f(&mut self.net);
                Ok(())
            }
            Msg::Console(line, reply) => {
                let r = self.console_line(&line);
                let _ = reply.send(r);
                Ok(())
            }
        }
    }

    /// One console line: its text and whether it ends the server.
    pub fn console_line(&mut self, line: &str) -> (String, bool) {
        match console::execute(&mut self.net, &mut self.console, line) {
            Done::Text(t) => (t, false),
            Done::Quit(t) => {
                self.stop.store(true, Ordering::Relaxed);
                (t, true)
            }
            Done::ListClients => {
                let mut out = String::new();
                for i in 0..self.clients.len() {
                    let Some(c) = &self.clients[i] else {
                        continue;
                    };
                    let (id, dev, qp, issm, node) = (c.id, c.dev, c.qp, c.issm, c.node.clone());
                    let port = u8::from(!self.net.devs[dev].is_switch);
                    let guid = self.net.devs[dev].agent().identity().port_guid(port);
                    let lid = self.net.devs[dev].agent().port_lid(port).unwrap_or(0);
                    out += &console::client_line(i, id, &node, guid, lid, qp, issm);
                }
                (out, false)
            }
            Done::Disconnect(n) => {
                let i = usize::try_from(n)
                    .ok()
                    .filter(|&i| self.clients.get(i).is_some_and(Option::is_some));
                match i {
                    Some(i) => {
                        self.disconnect(i, "disconnected from the console");
                        (String::new(), false)
                    }
                    None => (format!("disconnect client: bad clientid {n}\n"), false),
                }
            }
        }
    }

    // ------------------------------------------------------------------
    // Control

    fn control(&mut self, b: &[u8], from: &SocketAddr) {
        let mut c = match SimCtl::decode(b) {
            Ok(c) => c,
            Err(e) => {
                self.stats.dropped += 1;
                slog!(self, "dropped a control message: {e:#}");
                return;
            }
        };
        let ok = match c.kind {
            ctl::CONNECT => self.connect(&mut c),
            ctl::ERROR => Err(anyhow!("sim_ctl type ERROR (0) from a client")),
            k if k > ctl::GET_PKEYS => Err(anyhow!("unknown sim_ctl type {k}")),
            _ => self.client_ctl(&mut c),
        };
        if let Err(e) = ok {
            slog!(self, "control type {} refused: {e:#}", c.kind);
            c.kind = ctl::ERROR;
        }
        if let Err(e) = send_nowait(&self.ctl, &c.encode(), from) {
            slog!(self, "could not reply to a control message: {e}");
        }
    }

    fn connect(&mut self, c: &mut SimCtl) -> Result<()> {
        let d = &c.data;
        let id = u32::from_ne_bytes([d[0], d[1], d[2], d[3]]);
        let qp = u32::from_ne_bytes([d[4], d[5], d[6], d[7]]);
        let issm = u32::from_ne_bytes([d[8], d[9], d[10], d[11]]) != 0;
        let raw = &d[12..12 + NODEID_BYTES];
        let end = raw.iter().position(|&x| x == 0).unwrap_or(NODEID_BYTES);
        let want = String::from_utf8_lossy(&raw[..end]).into_owned();
        let r = self.connect_node(id, qp, &want, issm);
        match r {
            Ok((i, node)) => {
                self.stats.connects += 1;
                let mut out = [0u8; 64];
                out[0..4].copy_from_slice(&(i as u32).to_ne_bytes());
                out[4..12].copy_from_slice(&d[4..12]);
                let n = node.as_bytes();
                let n = &n[..n.len().min(NODEID_BYTES - 1)];
                out[12..12 + n.len()].copy_from_slice(n);
                c.data = out;
                c.len = CLIENT_INFO_BYTES as u32;
                slog!(self, "client {i} (id {id}) attached to {node:?}");
                Ok(())
            }
            Err(e) => {
                self.stats.refused += 1;
                Err(e)
            }
        }
    }

    fn connect_node(
        &mut self,
        id: u32,
        qp: u32,
        want: &str,
        issm: bool,
    ) -> Result<(usize, String)> {
        if self.clients.iter().all(Option::is_some) {
            self.reclaim_gone();
        }
        let slot = self
            .clients
            .iter()
            .position(Option::is_none)
            .ok_or_else(|| anyhow!("all {MAX_CLIENTS} client slots in use (id {id})"))?;
        let dev = if want.is_empty() {
            let (n, _) = self
                .net
                .topo
                .default_port()
                .ok_or_else(|| anyhow!("the topology has no nodes"))?;
            let name = &self.net.topo.nodes[n].id;
            self.net
                .dev_index(name)
                .ok_or_else(|| anyhow!("no device for node {name:?}"))?
        } else {
            // A topology node id, else a NodeDescription (as ibsim matches).
            let by_desc = || {
                let n = self.net.topo.nodes.iter().find(|n| n.description == want)?;
                self.net.dev_index(&n.id)
            };
            self.net
                .dev_index(want)
                .or_else(by_desc)
                .ok_or_else(|| anyhow!("client id {id}: unknown node {want:?} (SIM_HOST)"))?
        };
        let node = self.net.devs[dev].name.clone();
        // ibsim attaches at `node_get_port(node, 0)`: a switch's port 0, a
        // CA's first port.
        let port = u8::from(!self.net.devs[dev].is_switch);
        if issm && self.issm_client(dev).is_some() {
            bail!("client id {id}: {node:?} already has an SM client");
        }
        let in_name = format!("{}:in{id}", self.opts.sockname);
        self.outs[slot]
            .connect_addr(&abstract_addr(&in_name)?)
            .with_context(|| format!("connecting out{slot} to @{in_name}"))?;
        if self.net.devs[dev].sm.is_none() {
            self.net.attach_host(dev, port, false)?;
        }
        let classes = umad_classes::declared(id).unwrap_or_else(|e| {
            slog!(self, "client {slot} (id {id}): {e:#}");
            Classes::default()
        });
        self.clients[slot] = Some(Client {
            id,
            qp,
            dev,
            node: node.clone(),
            issm: false,
            classes,
        });
        if issm {
            self.set_issm(slot, true)?;
        }
        Ok((slot, node))
    }

    /// Free the slots of clients that went away without DISCONNECT (their
    /// data socket `<base>:in<id>` no longer exists: connecting to it is
    /// refused). Without this, ten clients that vanish (killed, crashed)
    /// would hold every slot until the server happened to send them
    /// something, and no new client could attach.
    fn reclaim_gone(&mut self) {
        for i in 0..self.clients.len() {
            let Some(id) = self.clients[i].as_ref().map(|c| c.id) else {
                continue;
            };
            let Ok(addr) = abstract_addr(&format!("{}:in{id}", self.opts.sockname)) else {
                continue;
            };
            if let Err(e) = self.outs[i].connect_addr(&addr) {
                if e.kind() == ErrorKind::ConnectionRefused {
                    self.disconnect(i, "is gone (its data socket no longer exists); slot freed");
                }
            }
        }
    }

    /// A QP0 MAD client `i` sent to its own node that the SMI delivers to
    /// the SM interface ([`mad::smi_to_sm`]): a request goes to the node's SM
    /// client, an answer to the client its TID names (on this node).
    fn loop_to_sm(
        &mut self,
        i: usize,
        dev: usize,
        req: SimRequest,
        is_request: bool,
        own_lid: u16,
    ) -> Result<()> {
        let r = SimRequest {
            dlid: req.dlid,
            slid: if req.slid == 0 { own_lid } else { req.slid },
            dqp: 0,
            sqp: 0,
            status: 0,
            length: 256,
            mad: req.mad,
        };
        let to = if mad::method(&req.mad) & METHOD_RESP_BIT != 0 {
            self.requester(mad::tid(&req.mad), dev)
        } else {
            self.issm_client(dev)
        };
        if to.is_some_and(|c| self.send(c, &r)) {
            return Ok(());
        }
        self.stats.dropped += 1;
        slog!(
            self,
            "client {i}: a MAD for the SM of its own node, and no SM client there to take it"
        );
        if is_request {
            self.not_delivered(i, req, true)?;
        }
        Ok(())
    }

    /// The client on device `dev` whose request TID `tid` answers (TID
    /// bits 63:48, as the server set them).
    fn requester(&self, tid: u64, dev: usize) -> Option<usize> {
        let i = (tid >> 48) as usize;
        self.clients
            .get(i)
            .and_then(Option::as_ref)
            .filter(|c| c.dev == dev)
            .map(|_| i)
    }

    fn issm_client(&self, dev: usize) -> Option<usize> {
        self.clients
            .iter()
            .position(|c| c.as_ref().is_some_and(|c| c.dev == dev && c.issm))
    }

    fn set_issm(&mut self, i: usize, on: bool) -> Result<()> {
        let dev = self.clients[i]
            .as_ref()
            .map(|c| c.dev)
            .ok_or_else(|| anyhow!("no client {i}"))?;
        if on {
            if let Some(o) = self.issm_client(dev).filter(|&o| o != i) {
                bail!(
                    "client {i}: {} already has an SM client ({o})",
                    self.net.devs[dev].name
                );
            }
        }
        if let Some(c) = self.clients[i].as_mut() {
            c.issm = on;
        }
        slog!(
            self,
            "client {i}: IsSM {}",
            if on { "set" } else { "cleared" }
        );
        self.net.set_host_is_sm(dev, on)
    }

    fn disconnect(&mut self, i: usize, why: &str) {
        let Some(c) = self.clients[i].take() else {
            return;
        };
        slog!(self, "client {i} (id {}, {:?}) {why}", c.id, c.node);
        self.inflight.retain(|_, f| f.client != i);
        let others = self.clients.iter().flatten().any(|o| o.dev == c.dev);
        let r = if others {
            if c.issm {
                self.net.set_host_is_sm(c.dev, false)
            } else {
                Ok(())
            }
        } else {
            self.net.detach_sm(c.dev)
        };
        if let Err(e) = r {
            slog!(self, "detaching client {i}: {e:#}");
        }
    }

    /// The node SMA's answer to a local Get(attr, modifier) on `port`.
    fn local_get(&mut self, dev: usize, port: u8, attr: u16, modifier: u32) -> Result<[u8; 64]> {
        let req = mad::dr_request(METHOD_GET, attr, modifier, 0, &[]);
        let resp = self
            .net
            .local_smp(dev, port, &req)?
            .ok_or_else(|| anyhow!("the SMA of {} gave no answer", self.net.devs[dev].name))?;
        let mut out = [0u8; 64];
        out.copy_from_slice(&mad::data(&resp)[..64]);
        Ok(out)
    }

    fn client_ctl(&mut self, c: &mut SimCtl) -> Result<()> {
        let i = c.clientid as usize;
        let (dev, port) = match self.clients.get(i).and_then(Option::as_ref) {
            Some(cl) => (cl.dev, self.net.sm_host_port(cl.dev)?),
            None => bail!("no client {} is connected", c.clientid),
        };
        let mut out = [0u8; 64];
        match c.kind {
            ctl::DISCONNECT => {
                self.disconnect(i, "disconnected");
                return Ok(());
            }
            ctl::GET_PORT => {
                let pi = self.local_get(dev, port, ATTR_PORT_INFO, u32::from(port))?;
                let lid = u16::from_be_bytes([pi[16], pi[17]]);
                out[0..2].copy_from_slice(&lid.to_ne_bytes());
                out[2] = pi[32] & 0x0F;
            }
            ctl::GET_VENDOR => {
                let ni = self.local_get(dev, port, ATTR_NODE_INFO, 0)?;
                let devid = u32::from(u16::from_be_bytes([ni[30], ni[31]]));
                let rev = u32::from_be_bytes([ni[32], ni[33], ni[34], ni[35]]);
                let vendor = u32::from_be_bytes([0, ni[37], ni[38], ni[39]]);
                out[0..4].copy_from_slice(&vendor.to_ne_bytes());
                out[4..8].copy_from_slice(&devid.to_ne_bytes());
                out[8..12].copy_from_slice(&rev.to_ne_bytes());
                out[16..24].copy_from_slice(&1u64.to_ne_bytes());
            }
            ctl::GET_GID | ctl::GET_GUID => {
                let guid = self.net.devs[dev].agent().identity().port_guid(port);
                if c.kind == ctl::GET_GID {
                    let pi = self.local_get(dev, port, ATTR_PORT_INFO, u32::from(port))?;
                    out[0..8].copy_from_slice(&pi[8..16]);
                    out[8..16].copy_from_slice(&guid.to_ne_bytes());
                } else {
                    out[0..8].copy_from_slice(&guid.to_ne_bytes());
                }
            }
            ctl::GET_NODEINFO => out = self.local_get(dev, port, ATTR_NODE_INFO, 0)?,
            ctl::GET_PORTINFO => {
                let nports = self.net.devs[dev].nports;
                let p = match c.data[0] {
                    0 => port,
                    p if p > nports => port,
                    p => p,
                };
                // Asked on the attached port, as a local Get(PortInfo, p).
                // (ibsim 0.10 answers port p - 1 of a CA here, an
                // off-by-one; port 0 and out-of-range mean the attached
                // port in both.)
                out = self.local_get(dev, port, ATTR_PORT_INFO, u32::from(p))?;
            }
            ctl::SET_ISSM => {
                let on = i32::from_ne_bytes([c.data[0], c.data[1], c.data[2], c.data[3]]) != 0;
                self.set_issm(i, on)?;
                return Ok(());
            }
            ctl::GET_PKEYS => {
                let ni = self.local_get(dev, port, ATTR_NODE_INFO, 0)?;
                let cap = usize::from(u16::from_be_bytes([ni[28], ni[29]]));
                let t = self.local_get(dev, port, ATTR_P_KEY_TABLE, 0)?;
                let n = (cap * 2).min(64);
                out[..n].copy_from_slice(&t[..n]);
            }
            k => bail!("unknown sim_ctl type {k}"),
        }
        c.data = out;
        Ok(())
    }

    // ------------------------------------------------------------------
    // Data

    fn data(&mut self, i: usize, b: &[u8]) -> Result<()> {
        let Some(dev) = self.clients.get(i).and_then(Option::as_ref).map(|c| c.dev) else {
            self.stats.dropped += 1;
            slog!(
                self,
                "dropped a data message on out{i}: no client connected there"
            );
            return Ok(());
        };
        let mut req = match SimRequest::decode(b) {
            Ok(r) => r,
            Err(e) => {
                self.stats.dropped += 1;
                slog!(self, "client {i}: dropped a data message: {e:#}");
                return Ok(());
            }
        };
        let method = mad::method(&req.mad);
        let is_request = method & METHOD_RESP_BIT == 0 && method != METHOD_TRAP_REPRESS;
        if req.dlid == 0 {
            slog!(self, "client {i}: MAD to DLID 0 not delivered");
            return self.not_delivered(i, req, is_request);
        }
        if is_request {
            let tid = (mad::tid(&req.mad) & 0xFFFF_FFFF_FFFF) | ((i as u64) << 48);
            mad::set_tid(&mut req.mad, tid);
        }
        if req.dqp != QP0 {
            if req.dqp == QP1 && method & METHOD_RESP_BIT != 0 {
                // (it answers requests of this class: a server's agent)
                if let Some(c) = self.clients[i].as_mut() {
                    c.classes.add(mad::class(&req.mad));
                }
            }
            return self.data_gmp(i, dev, req, is_request);
        }
        let dr = req.dlid == PERMISSIVE_LID;
        let port = self.net.sm_host_port(dev)?;
        let local = if dr {
            mad::is_dr(&req.mad) && req.mad[mad::off::HOP_CNT] == 0
        } else {
            // LID-routed to one of the port's own LIDs: looped back by the
            // host, as an HCA does (ibsim answers it too).
            let pi = self.local_get(dev, port, ATTR_PORT_INFO, u32::from(port))?;
            let lid = u16::from_be_bytes([pi[16], pi[17]]);
            let lmc = u32::from(pi[34] & 7);
            lid != 0 && u32::from(req.dlid).wrapping_sub(u32::from(lid)) < (1 << lmc)
        };
        if local {
            self.stats.local += 1;
            let own_lid = if dr {
                PERMISSIVE_LID
            } else {
                self.net.devs[dev].agent().port_lid(port).unwrap_or(0)
            };
            if mad::smi_to_sm(mad::method(&req.mad), mad::attr_id(&req.mad)) {
                // What the SMI gives the SM interface (an answer, a trap,
                // SMInfo) goes to this node's SM client, looped back by
                // the host as the RTL would deliver it from the wire.
                return self.loop_to_sm(i, dev, req, is_request, own_lid);
            }
            // For this node's own SMA: the host stack answers it.
            return match self.net.local_smp(dev, port, &req.mad)? {
                Some(resp) => {
                    let r = SimRequest {
                        dlid: if req.slid == 0 { own_lid } else { req.slid },
                        slid: req.dlid,
                        dqp: req.sqp,
                        sqp: req.dqp,
                        status: 0,
                        length: 256,
                        mad: resp,
                    };
                    self.send(i, &r);
                    Ok(())
                }
                None => self.not_delivered(i, req, is_request),
            };
        }
        let ah = if dr {
            AddressHandle::directed()
        } else {
            AddressHandle::lid_routed(req.dlid)
        };
        if let Err(e) = self.net.post_send(dev, &ah, &req.mad, 0) {
            slog!(self, "client {i}: {e:#}");
            return self.not_delivered(i, req, is_request);
        }
        self.sent(i, req, is_request);
        Ok(())
    }

    /// A GMP from client `i` on CA `dev`: through the CA's data TX stream
    /// into the RTL (QP1 only: umad2sim's `sim_request` carries no Q_Key,
    /// so a client's MAD to a QP > 1 cannot be addressed).
    fn data_gmp(
        &mut self,
        i: usize,
        dev: usize,
        mut req: SimRequest,
        is_request: bool,
    ) -> Result<()> {
        if req.dqp != QP1 {
            slog!(
                self,
                "client {i}: MAD class {:#04x} to QP {:#x} not delivered (sim_request carries no Q_Key; only QP0 and QP1 are addressed)",
                mad::class(&req.mad),
                req.dqp
            );
            return self.not_delivered(i, req, is_request);
        }
        if req.dlid == PERMISSIVE_LID {
            slog!(
                self,
                "client {i}: GMP to the permissive LID not delivered (GMPs are LID-routed)"
            );
            return self.not_delivered(i, req, is_request);
        }
        // The kernel's RMPP sender fills the RMPP header (one segment).
        rmpp_send_header(&mut req.mad, req.length);
        let port = self.net.sm_host_port(dev)?;
        if let Err(e) = self.gsi.send(
            &mut self.net,
            dev,
            port,
            &GmpDest::qp1(req.dlid),
            QP1,
            &req.mad,
        ) {
            slog!(self, "client {i}: {e:#}");
            return self.not_delivered(i, req, is_request);
        }
        self.sent(i, req, is_request);
        Ok(())
    }

    /// Hand the GMPs the CA hosts received (and no PMA consumed) to the
    /// clients: responses to the client named by TID bits 63:48 (it must be
    /// attached to the receiving CA); requests (SA and every other class)
    /// to the node's SM client, as ibsim does; a request with nobody to take
    /// it goes back to its requester with status 110.
    fn deliver_gmps(&mut self) -> Result<()> {
        self.gsi.poll(&mut self.net)?;
        while let Some(g) = self.gsi.inbox.pop_front() {
            self.deliver_gmp(g)?;
        }
        Ok(())
    }

    fn deliver_gmp(&mut self, g: GmpRecv) -> Result<()> {
        let tid = mad::tid(&g.mad);
        let r = SimRequest {
            dlid: g.dlid,
            slid: g.slid,
            dqp: g.dest_qp,
            sqp: g.src_qp,
            status: 0,
            length: received_mad_len(&g.mad),
            mad: g.mad,
        };
        let name = self.net.devs[g.dev].name.clone();
        if g.is_response() {
            self.inflight.remove(&tid);
            match self.requester(tid, g.dev) {
                Some(i) => {
                    self.send(i, &r);
                }
                None => {
                    self.stats.dropped += 1;
                    slog!(
                        self,
                        "{name}: dropped a GMP response (class {:#04x} TID {tid:#x}): no client {} on this node",
                        mad::class(&g.mad),
                        tid >> 48
                    );
                }
            }
            return Ok(());
        }
        // A request: its answer now depends on a client (see deliver).
        let asked = self.inflight.remove(&tid);
        let class = mad::class(&g.mad);
        let to: Vec<usize> = if g.dest_qp != QP1 {
            Vec::new()
        } else if class == CLASS_SA {
            self.issm_client(g.dev).into_iter().collect()
        } else {
            // (not the requester itself, named by TID bits 63:48: a
            // client waiting for an answer is not a server of its class)
            let requester = (tid >> 48) as usize;
            let mut v = self.class_clients(g.dev, class);
            v.retain(|&i| i != requester);
            v
        };
        let mut sent = false;
        for i in to.iter().copied() {
            sent |= self.send(i, &r);
        }
        if sent {
            return Ok(());
        }
        self.stats.dropped += 1;
        let method = mad::method(&g.mad);
        if to.is_empty()
            && g.dest_qp == QP1
            && class != CLASS_SA
            && matches!(method, METHOD_GET | METHOD_SET)
        {
            // No agent on the node takes it: its MAD layer answers a Get
            // or Set with "unsupported method/attribute" (Linux
            // generate_unmatched_resp), through the RTL like any answer.
            let mut resp = g.mad;
            resp[mad::off::METHOD] = METHOD_GET_RESP;
            resp[mad::off::STATUS..mad::off::STATUS + 2]
                .copy_from_slice(&STATUS_ATTR_UNSUPPORTED.to_be_bytes());
            slog!(
                self,
                "{name}: GMP Get/Set of class {class:#04x} attr {:#06x}: no client there takes the class, answered with status {STATUS_ATTR_UNSUPPORTED:#06x}",
                mad::attr_id(&g.mad)
            );
            let dest = GmpDest {
                qp: g.src_qp,
                ..GmpDest::qp1(g.slid)
            };
            if let Err(e) = self
                .gsi
                .send(&mut self.net, g.dev, g.port, &dest, QP1, &resp)
            {
                slog!(self, "{name}: {e:#}");
            }
            return Ok(());
        }
        slog!(
            self,
            "{name}: GMP request class {class:#04x} attr {:#06x} to QP {:#x} not delivered: no client here takes it",
            mad::attr_id(&g.mad),
            g.dest_qp
        );
        if let Some(f) = asked {
            self.not_delivered(f.client, f.req, true)?;
        }
        Ok(())
    }

    /// The clients on device `dev` known to have an agent for GMP class
    /// `class` (`agents/umad_classes.rs`).
    fn class_clients(&self, dev: usize, class: u8) -> Vec<usize> {
        self.clients
            .iter()
            .enumerate()
            .filter(|(_, c)| {
                c.as_ref()
                    .is_some_and(|c| c.dev == dev && c.classes.has(class))
            })
            .map(|(i, _)| i)
            .collect()
    }

    /// `req` from client `i` has entered the RTL: a request (not a trap)
    /// waits for its response until `timeout_cycles` from now.
    fn sent(&mut self, i: usize, req: SimRequest, is_request: bool) {
        self.stats.to_rtl += 1;
        if is_request && mad::method(&req.mad) != METHOD_TRAP {
            let deadline = self.net.cycle + self.opts.timeout_cycles;
            self.inflight.insert(
                mad::tid(&req.mad),
                InFlight {
                    client: i,
                    deadline,
                    req,
                },
            );
        }
    }

    /// Return `req` to client `i` with status 110, as ibsim does with what it
    /// cannot deliver (requests only; responses are dropped).
    fn not_delivered(&mut self, i: usize, mut req: SimRequest, is_request: bool) -> Result<()> {
        self.stats.not_delivered += 1;
        if is_request {
            req.status = SIM_STATUS_ETIMEDOUT;
            self.send(i, &req);
        }
        Ok(())
    }

    /// Send `r` to client `i`; false (and the slot freed) when it is gone,
    /// false (and `r` dropped) when it does not read: a blocking send would
    /// wait for a client whose data socket is full (about 200 unread
    /// datagrams fill the socket's send buffer) and stall every other
    /// client; a well-behaved client reads its socket all the time.
    fn send(&mut self, i: usize, r: &SimRequest) -> bool {
        use nix::sys::socket::{send, MsgFlags};
        use std::os::fd::AsRawFd;
        match send(
            self.outs[i].as_raw_fd(),
            &r.encode(),
            MsgFlags::MSG_DONTWAIT,
        ) {
            Ok(_) => {
                self.stats.to_clients += 1;
                true
            }
            Err(nix::errno::Errno::EAGAIN) => {
                self.stats.dropped += 1;
                slog!(
                    self,
                    "client {i}: its data socket is full (it does not read); a MAD for it dropped"
                );
                false
            }
            Err(e) => {
                self.stats.dropped += 1;
                self.disconnect(i, &format!("is gone ({e}); slot freed"));
                false
            }
        }
    }

    /// Hand what the RTL delivered to the attached CAs to their clients.
    fn deliver(&mut self) -> Result<()> {
        self.deliver_gmps()?;
        let devs: Vec<usize> = {
            let mut v: Vec<usize> = self.clients.iter().flatten().map(|c| c.dev).collect();
            v.sort_unstable();
            v.dedup();
            v
        };
        for d in devs {
            if !self.net.devs[d]
                .sm
                .as_ref()
                .is_some_and(|s| !s.cq.is_empty())
            {
                continue;
            }
            for wc in self.net.poll_cq(d, usize::MAX)? {
                let Some(m) = wc.mad else { continue };
                let r = SimRequest {
                    dlid: wc.meta.dlid,
                    slid: wc.meta.slid,
                    dqp: 0,
                    sqp: 0,
                    status: 0,
                    length: 256,
                    mad: *m,
                };
                let tid = mad::tid(&m);
                let mut asked = None;
                let to = if mad::method(&m) & METHOD_RESP_BIT != 0 {
                    self.inflight.remove(&tid);
                    self.requester(tid, d)
                } else {
                    // A request for the SM client (SMInfo, a trap): its
                    // answer now depends on that client, not on the fabric,
                    // so it leaves the server's cycle-deadline tracking (as
                    // ibsim forwards and forgets). If there is no SM client,
                    // or it is gone, a requester of ours gets status 110:
                    // umad2sim has no timer of its own.
                    asked = self.inflight.remove(&tid);
                    self.issm_client(d)
                };
                let sent = match to {
                    Some(i) => self.send(i, &r),
                    None => false,
                };
                if !sent {
                    if let Some(f) = asked {
                        self.not_delivered(f.client, f.req, true)?;
                    }
                }
                match to {
                    Some(_) => {}
                    None => {
                        self.stats.dropped += 1;
                        slog!(
                            self,
                            "{}: dropped a MAD from the fabric (method {:#04x} attr {:#06x} TID {tid:#x}): no client for it",
                            self.net.devs[d].name,
                            mad::method(&m),
                            mad::attr_id(&m)
                        );
                    }
                }
            }
        }
        Ok(())
    }

    /// Return requests past their deadline with status 110.
    fn expire(&mut self) {
        let now = self.net.cycle;
        let mut due = Vec::new();
        self.inflight.retain(|_, f| {
            let keep = f.deadline > now;
            if !keep {
                due.push((f.client, f.req));
            }
            keep
        });
        for (client, mut r) in due {
            r.status = SIM_STATUS_ETIMEDOUT;
            self.stats.not_delivered += 1;
            self.send(client, &r);
        }
    }
}

/// Send `b` to `to` without waiting. A blocking `sendto` on a datagram
/// socket waits while the receiver's queue is full (10 datagrams,
/// `net.unix.max_dgram_qlen`), so a client that sends control messages and
/// never reads the replies would stall the whole server; with
/// `MSG_DONTWAIT` that client loses its reply (EAGAIN) instead. (A
/// well-behaved client has at most one control request outstanding.)
fn send_nowait(sock: &UnixDatagram, b: &[u8], to: &SocketAddr) -> std::io::Result<()> {
    use nix::sys::socket::{sendto, MsgFlags, UnixAddr};
    use std::os::fd::AsRawFd;
    use std::os::linux::net::SocketAddrExt;
    let addr = match (to.as_abstract_name(), to.as_pathname()) {
        (Some(n), _) => UnixAddr::new_abstract(n),
        (None, Some(p)) => UnixAddr::new(p),
        (None, None) => {
            return Err(std::io::Error::new(
                ErrorKind::InvalidInput,
                "the sender is an unbound socket",
            ))
        }
    }?;
    sendto(sock.as_raw_fd(), b, &addr, MsgFlags::MSG_DONTWAIT)?;
    Ok(())
}

/// A thread that reads one socket (the control socket when `slot` is None,
/// else `out<slot>`) into the server's channel until `stop` is set.
fn spawn_reader(
    slot: Option<usize>,
    sock: UnixDatagram,
    tx: mpsc::Sender<Msg>,
    stop: Arc<AtomicBool>,
) -> Result<JoinHandle<()>> {
    let poll = Duration::from_millis(100);
    sock.set_read_timeout(Some(poll))
        .context("setting a socket read timeout")?;
    Ok(std::thread::spawn(move || {
        let mut buf = vec![0u8; 4096];
        while !stop.load(Ordering::Relaxed) {
            let msg = match slot {
                None => sock
                    .recv_from(&mut buf)
                    .map(|(n, from)| Msg::Ctl(buf[..n].to_vec(), from)),
                Some(i) => sock.recv(&mut buf).map(|n| Msg::Data(i, buf[..n].to_vec())),
            };
            match msg {
                Ok(m) => {
                    if tx.send(m).is_err() {
                        return;
                    }
                }
                Err(e) if matches!(e.kind(), ErrorKind::WouldBlock | ErrorKind::TimedOut) => {}
                // ECONNREFUSED of an earlier send to a vanished client is
                // reported on the next recv: nothing to read, go on.
                Err(_) => std::thread::sleep(Duration::from_millis(1)),
            }
        }
    }))
}

impl Drop for Server {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
        for t in self.readers.drain(..) {
            let _ = t.join();
        }
    }
}

/// This thread's kernel id (the last component of /proc/thread-self).
fn thread_id() -> Option<u32> {
    std::fs::read_link("/proc/thread-self")
        .ok()?
        .file_name()?
        .to_str()?
        .parse()
        .ok()
}

/// `vl15 serve` on a topology file in a thread of this process (tests and
/// benchmarks): the fabric is built and the sockets bound in that thread.
pub struct Background {
    pub sockname: String,
    /// Reads the fabric in the server's thread.
    pub prober: Prober,
    /// Runs console lines in the server's thread.
    pub console: ConsoleLink,
    /// The server thread's kernel id (for a profiler), if readable.
    pub tid: Option<u32>,
    stop: Arc<AtomicBool>,
    thread: Option<JoinHandle<Result<Finished>>>,
}

/// What a [`Background`] server did, read when it stopped.
#[derive(Debug, Clone, Copy)]
pub struct Finished {
    pub stats: ServeStats,
    /// Simulated cycles and device evaluations.
    pub cycles: u64,
    pub evals: u64,
    /// CPU time of the server thread over its life, if readable.
    pub cpu_s: Option<f64>,
}

impl Background {
    /// Load `topology`, build the fabric, bind the sockets (`opts.sockname`
    /// is replaced by a name unique to this process) and serve.
    pub fn start(topology: &std::path::Path, opts: ServeOptions) -> Result<Background> {
        Background::start_on(topology, crate::model::net::NetOptions::default(), opts)
    }

    /// [`Background::start`] on a fabric built with `net` (which devices
    /// run as twins, the data path width, ...), as [`serve_file`] takes it.
    pub fn start_on(
        topology: &std::path::Path,
        net: crate::model::net::NetOptions,
        opts: ServeOptions,
    ) -> Result<Background> {
        let topo = crate::proto::topology::Topology::load(topology)?;
        let sockname = crate::agents::ibsim::unique_sockname();
        let opts = ServeOptions {
            sockname: sockname.clone(),
            ..opts
        };
        let (tx, rx) = mpsc::channel();
        let thread = std::thread::spawn(move || -> Result<Finished> {
            let bound = Net::new(topo, net).and_then(|net| Server::bind(net, opts));
            let mut s = match bound {
                Ok(s) => s,
                Err(e) => {
                    let msg = format!("{e:#}");
                    let _ = tx.send(Err(e));
                    bail!("{msg}");
                }
            };
            let _ = tx.send(Ok((
                s.stop_flag(),
                s.prober(),
                s.console_link(),
                thread_id(),
            )));
            s.run()?;
            s.net.finish_record()?;
            Ok(Finished {
                stats: s.stats,
                cycles: s.net.cycle,
                evals: s.net.stats.ticks,
                cpu_s: crate::model::thread_cpu_s(),
            })
        });
        let (stop, prober, console, tid) = rx
            .recv()
            .map_err(|_| anyhow!("the server thread ended before binding"))??;
        Ok(Background {
            sockname,
            prober,
            console,
            tid,
            stop,
            thread: Some(thread),
        })
    }

    /// Stop serving; what the server did, or how it failed.
    pub fn stop(mut self) -> Result<Finished> {
        self.stop.store(true, Ordering::Relaxed);
        let t = self.thread.take().expect("joined only here or on drop");
        t.join()
            .map_err(|_| anyhow!("the server thread panicked"))?
    }
}

impl Drop for Background {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

/// Where `vl15 serve` reads ibsim's console language.
#[derive(Debug, Clone, Default)]
pub struct ConsoleOptions {
    /// Run this file's commands first (as `!file`).
    pub script: Option<std::path::PathBuf>,
    /// Then read standard input (when it is not a terminal this process
    /// does not own: a background job).
    pub stdin: bool,
    /// Seeds of `Error` without `seed=` derive from this one.
    pub seed: u64,
}

/// `vl15 serve`: load `topology`, build the RTL fabric, bind the sockets
/// (`sockname`, else $IBSIM_SOCKNAME, else "sim") and serve until killed or
/// until the console's `Quit`.
pub fn serve_file(
    topology: &std::path::Path,
    sockname: Option<String>,
    net_opts: crate::model::net::NetOptions,
    timeout_cycles: u64,
    console: ConsoleOptions,
) -> Result<Option<std::path::PathBuf>> {
    let topo = crate::proto::topology::Topology::load(topology)?;
    let pcap = net_opts.pcap.clone();
    let net = Net::new(topo, net_opts)?;
    let mut opts = ServeOptions {
        timeout_cycles,
        ..Default::default()
    };
    if let Some(s) = sockname {
        opts.sockname = s;
    }
    let mut server = Server::bind(net, opts)?;
    server.console = ConsoleState::new(console.seed);
    if let Some(w) = &server.net.waves {
        // FST files are complete once the server stops cleanly.
        eprintln!("vl15 serve: {}", w.summary());
    }
    eprintln!(
        "vl15 serve: {} on @{}:ctl ({} nodes); {}",
        topology.display(),
        server.opts.sockname,
        server.net.devs.len(),
        client_hint(&server.opts.sockname)
    );
    if let Some((path, lt)) = pcap {
        // Written as the run goes: readable whenever the server stops.
        eprintln!(
            "vl15 serve: every packet on every link goes to {}{}",
            path.display(),
            crate::proto::pcap::read_hint(&path, lt)
        );
    }
    let stdin = console.stdin && stdin_is_ours();
    if console.stdin && !stdin {
        eprintln!(
            "vl15 serve: standard input is a terminal this background job does not own: no console on it (use --script FILE)"
        );
    }
    if stdin || console.script.is_some() {
        let link = server.console_link();
        let script = console.script.clone();
        std::thread::Builder::new()
            .name("console".into())
            .spawn(move || {
                let mut f = Frontend::new(move |l: &str| link.run(l), std::io::stdout());
                if let Some(path) = script {
                    if f.run_file(&path, 0) == console::Flow::Quit || !stdin {
                        return;
                    }
                }
                f.run(std::io::stdin().lock());
            })
            .context("starting the console thread")?;
    }
    if server.net.opts.record.is_some() {
        // A recording is finished when the server stops: SIGINT and
        // SIGTERM stop it (a second one ends the process at once).
        let stop = server.stop_flag();
        for sig in [signal_hook::consts::SIGINT, signal_hook::consts::SIGTERM] {
            signal_hook::flag::register_conditional_shutdown(sig, 1, stop.clone())
                .and_then(|_| signal_hook::flag::register(sig, stop.clone()))
                .context("handling SIGINT and SIGTERM")?;
        }
    }
    server.run()?;
    server.net.finish_record()
}

/// Whether reading standard input is safe: not a terminal, or a terminal
/// whose foreground process group is ours (a background job that reads
/// its terminal is stopped by SIGTTIN).
fn stdin_is_ours() -> bool {
    use std::io::IsTerminal;
    let stdin = std::io::stdin();
    if !stdin.is_terminal() {
        return true;
    }
    match nix::unistd::tcgetpgrp(std::os::fd::AsRawFd::as_raw_fd(&stdin)) {
        Ok(fg) => fg == nix::unistd::getpgrp(),
        Err(_) => false,
    }
}

/// install it.
pub fn client_hint(sockname: &str) -> String {
    match crate::agents::ibsim::umad2sim_path() {
        Ok(lib) => format!(
            "clients: LD_PRELOAD={} IBSIM_SOCKNAME={sockname} SIM_HOST=<node>",
            lib.display()
        ),
        Err(e) => format!(
            "clients: LD_PRELOAD=<libumad2sim.so> IBSIM_SOCKNAME={sockname} SIM_HOST=<node> ({e:#})"
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::linux::net::SocketAddrExt;

    /// A flood of log lines prints LOG_LINES_PER_SECOND of them a second
    /// and counts the rest; the next second prints again.
    #[test]
    fn log_is_rate_limited() {
        let l = Log::new(LOG_LINES_PER_SECOND);
        let printed = (0..1000)
            .filter(|i| l.line("t", format_args!("line {i}")))
            .count();
        assert_eq!(printed, LOG_LINES_PER_SECOND as usize);
        assert_eq!(l.suppressed.get(), 1000 - u64::from(LOG_LINES_PER_SECOND));
        l.window.set(Instant::now() - Duration::from_secs(1));
        assert!(l.line("t", format_args!("after a second")));
        assert_eq!(l.suppressed.get(), 0);
    }

    #[test]
    fn abstract_name_has_trailing_nul() {
        let a = abstract_addr("sim:ctl").unwrap();
        assert_eq!(a.as_abstract_name(), Some(&b"sim:ctl\0"[..]));
    }
}
