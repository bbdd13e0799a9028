//! A client for the real ibsim simulator (Debian `ibsim-utils`), speaking its
//! wire protocol directly (ibspec §10): two abstract-namespace AF_UNIX
//! datagram sockets per client, `struct sim_ctl` control messages and
//! `struct sim_request` data messages carrying one 256-byte MAD.
//!
//! * [`IbsimServer`] starts `ibsim -s -n <topology>` under a unique
//!   `IBSIM_SOCKNAME`, waits until its control socket answers, and kills it
//!   on drop. [`IbsimServer::umad2sim_command`] prepares a command (e.g.
//!   `ibnetdiscover`) that runs against it through `LD_PRELOAD=libumad2sim.so`.
//! * [`IbsimClient`] attaches to one node (`SIM_HOST` semantics) with the
//!   `sim_client.c` start-up sequence and sends SMPs with
//!   [`IbsimClient::smp`]. ibsim answers directed-route SMPs with its own
//!   semantics (HopPointer left at 0, ReturnPath\[0\] = attach port — ibspec
//!   §10); the response is returned exactly as received.
//!
//! Every malformed or unexpected message from the sockets is an error that
//! says what was wrong; nothing here panics on socket input.

use std::io::{ErrorKind, Read, Write};
use std::os::linux::net::SocketAddrExt;
use std::os::unix::net::{SocketAddr, UnixDatagram};
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::atomic::{AtomicU32, Ordering};
use std::time::{Duration, Instant};

use anyhow::{anyhow, bail, Context, Result};

use crate::proto::mad::{self, Mad};
use crate::proto::packet::attr::{NodeInfo, PortInfo};
use crate::proto::packet::consts::{METHOD_RESP_BIT, PERMISSIVE_LID};

/// `struct sim_ctl` magic.
pub const SIM_MAGIC: u32 = 0xDEAD_BEEF;
/// ibsim's client limit per server (`IBSIM_MAX_CLIENTS`).
pub const MAX_CLIENTS: u32 = 10;
/// Size of `struct sim_ctl` (4 × u32 + 64 data bytes).
pub const SIM_CTL_BYTES: usize = 80;
/// Size of `struct sim_request` on x86-64 (ibspec §10).
pub const SIM_REQUEST_BYTES: usize = 32 + 256;
/// Status ibsim puts in a `sim_request` it could not deliver (ETIMEDOUT).
pub const SIM_STATUS_ETIMEDOUT: u32 = 110;

/// `sim_ctl.type` values.
pub mod ctl {
    pub const ERROR: u32 = 0;
    pub const CONNECT: u32 = 1;
    pub const DISCONNECT: u32 = 2;
    pub const GET_PORT: u32 = 3;
    pub const GET_VENDOR: u32 = 4;
    pub const GET_GID: u32 = 5;
    pub const GET_GUID: u32 = 6;
    pub const GET_NODEINFO: u32 = 7;
    pub const GET_PORTINFO: u32 = 8;
    pub const SET_ISSM: u32 = 9;
    pub const GET_PKEYS: u32 = 10;
}

const INSTALL_HINT: &str =
    "run `make deps` (or `apt-get install -y ibsim-utils libumad2sim0 infiniband-diags`)";

/// Where Debian puts the umad2sim preload library (multiarch dirs).
const UMAD2SIM_CANDIDATES: &[&str] = &[
    "/usr/lib/x86_64-linux-gnu/umad2sim/libumad2sim.so",
    "/usr/lib/aarch64-linux-gnu/umad2sim/libumad2sim.so",
    "/usr/lib/umad2sim/libumad2sim.so",
    "/usr/local/lib/umad2sim/libumad2sim.so",
];

fn find_program(name: &str, extra_dirs: &[&str]) -> Option<PathBuf> {
    let path = std::env::var_os("PATH").unwrap_or_default();
    std::env::split_paths(&path)
        .chain(extra_dirs.iter().map(PathBuf::from))
        .map(|d| d.join(name))
        .find(|p| p.is_file())
}

/// The `ibsim` binary, or an error telling how to install it.
pub fn ibsim_path() -> Result<PathBuf> {
    find_program("ibsim", &["/usr/bin", "/usr/sbin", "/usr/local/bin"])
        .ok_or_else(|| anyhow!("ibsim not found (Debian package ibsim-utils): {INSTALL_HINT}"))
}

/// The `ibnetdiscover` binary (infiniband-diags; lives in /usr/sbin, which
/// may not be on PATH), or an error telling how to install it.
pub fn ibnetdiscover_path() -> Result<PathBuf> {
    find_program("ibnetdiscover", &["/usr/sbin", "/sbin", "/usr/local/sbin"]).ok_or_else(|| {
        anyhow!("ibnetdiscover not found (Debian package infiniband-diags): {INSTALL_HINT}")
    })
}

/// `libumad2sim.so` (Debian libumad2sim0), or an error telling how to
/// install it. `VL15_UMAD2SIM` overrides the search.
pub fn umad2sim_path() -> Result<PathBuf> {
    if let Some(p) = std::env::var_os("VL15_UMAD2SIM") {
        let p = PathBuf::from(p);
        if p.is_file() {
            return Ok(p);
        }
        bail!("VL15_UMAD2SIM={} is not a file", p.display());
    }
    UMAD2SIM_CANDIDATES
        .iter()
        .map(PathBuf::from)
        .find(|p| p.is_file())
        .ok_or_else(|| {
            anyhow!("libumad2sim.so not found (Debian package libumad2sim0): {INSTALL_HINT}")
        })
}

/// An abstract-namespace address as ibsim names them: `<name>` plus one
/// trailing NUL (ibspec §10: without it ibsim's sockets are not found).
pub fn abstract_addr(name: &str) -> Result<SocketAddr> {
    let mut bytes = name.as_bytes().to_vec();
    bytes.push(0);
    SocketAddr::from_abstract_name(&bytes)
        .with_context(|| format!("abstract socket name {name:?} is not valid"))
}

/// A unique `IBSIM_SOCKNAME` for this process.
pub fn unique_sockname() -> String {
    static N: AtomicU32 = AtomicU32::new(0);
    format!(
        "vl15-{}-{}",
        std::process::id(),
        N.fetch_add(1, Ordering::Relaxed)
    )
}

/// A unique client id for socket names `<base>:in<id>` / `<base>:ctl<id>`.
/// ibsim uses it only to name the client's data socket (it prints it as
/// an `int`), so pid and a per-process counter are packed into 31 bits.
fn unique_client_id() -> u32 {
    static N: AtomicU32 = AtomicU32::new(0);
    let n = N.fetch_add(1, Ordering::Relaxed) & 0x1FF;
    (std::process::id() & 0x3F_FFFF) | (n << 22)
}

// ----------------------------------------------------------------------------
// Server

/// A running `ibsim` process on one topology; killed on drop.
pub struct IbsimServer {
    child: Child,
    /// Held so that ibsim never sees EOF on its console; commands go here
    /// when the console is on.
    stdin: Option<ChildStdin>,
    console: bool,
    sockname: String,
    topology: PathBuf,
    log: LogFile,
}

/// ibsim's output file in the temp dir, removed on drop.
struct LogFile(PathBuf);

impl LogFile {
    fn path(&self) -> &Path {
        &self.0
    }
}

impl Drop for LogFile {
    fn drop(&mut self) {
        let _ = std::fs::remove_file(&self.0);
    }
}

impl IbsimServer {
    /// Start `ibsim -s -n <topology>` (network started, no console) with a
    /// fresh `IBSIM_SOCKNAME`, in the topology's directory (ibsim opens
    /// `include` files relative to its working directory), and wait until its
    /// control socket answers (5 s at most).
    pub fn start(topology: &Path) -> Result<IbsimServer> {
        Self::start_with_timeout(topology, Duration::from_secs(5))
    }

    /// [`IbsimServer::start`] with another start-up limit.
    pub fn start_with_timeout(topology: &Path, limit: Duration) -> Result<IbsimServer> {
        Self::spawn(topology, limit, false, &[])
    }

    /// [`IbsimServer::start_with_timeout`] with more ibsim arguments (before
    /// the topology file), such as `-N 4096` for more than 2,048 nodes.
    pub fn start_with_args(
        topology: &Path,
        limit: Duration,
        args: &[String],
    ) -> Result<IbsimServer> {
        Self::spawn(topology, limit, false, args)
    }

    /// [`IbsimServer::start`] with ibsim's console on, for
    /// [`IbsimServer::console`].
    pub fn start_with_console(topology: &Path) -> Result<IbsimServer> {
        Self::spawn(topology, Duration::from_secs(5), true, &[])
    }

    fn spawn(
        topology: &Path,
        limit: Duration,
        console: bool,
        args: &[String],
    ) -> Result<IbsimServer> {
        let exe = ibsim_path()?;
        let topology = topology
            .canonicalize()
            .with_context(|| format!("topology file {}", topology.display()))?;
        let sockname = unique_sockname();
        let log = LogFile(std::env::temp_dir().join(format!("{sockname}-ibsim.log")));
        let out = std::fs::File::create(log.path())
            .with_context(|| format!("creating ibsim log {}", log.path().display()))?;
        let err = out
            .try_clone()
            .context("duplicating the ibsim log handle")?;
        let mut cmd = Command::new(&exe);
        cmd.arg("-s");
        if !console {
            cmd.arg("-n");
        }
        cmd.args(args)
            .arg(&topology)
            .env("IBSIM_SOCKNAME", &sockname)
            .stdin(Stdio::piped())
            .stdout(out)
            .stderr(err);
        if let Some(dir) = topology.parent() {
            cmd.current_dir(dir);
        }
        let mut child = cmd
            .spawn()
            .with_context(|| format!("starting {} ({INSTALL_HINT})", exe.display()))?;
        let stdin = child.stdin.take();
        let mut server = IbsimServer {
            child,
            stdin,
            console,
            sockname,
            topology,
            log,
        };
        server.wait_ready(limit)?;
        Ok(server)
    }

    fn wait_ready(&mut self, limit: Duration) -> Result<()> {
        let deadline = Instant::now() + limit;
        let probe = CtlSocket::bind(&self.sockname, unique_client_id())?;
        loop {
            if let Some(status) = self
                .child
                .try_wait()
                .context("checking the ibsim process")?
            {
                bail!(
                    "ibsim exited ({status}) on {}: {}",
                    self.topology.display(),
                    self.log_text().trim()
                );
            }
            // An ERROR-type control message is answered with a copy of
            // itself ("bad ctl pkt type") and changes nothing in ibsim.
            match probe.request(ctl::ERROR, 0, &[], Duration::from_millis(50)) {
                Ok(_) => return Ok(()),
                Err(e) if Instant::now() >= deadline => {
                    return Err(e).context(format!(
                        "ibsim on {} did not answer on {}:ctl within {limit:?}; log: {}",
                        self.topology.display(),
                        self.sockname,
                        self.log_text().trim()
                    ));
                }
                Err(_) => std::thread::sleep(Duration::from_millis(10)),
            }
        }
    }

    /// Run one console command (e.g. `Unlink "sw"[3]`) and return what ibsim
    /// printed for it. ibsim prints its prompt `sim> ` (and flushes) when a
    /// command is done; this waits for the next prompt, 5 s at most.
    pub fn console(&mut self, line: &str) -> Result<String> {
        if !self.console {
            bail!("ibsim was started without its console (use start_with_console)");
        }
        if line.contains('\n') {
            bail!("ibsim console: one command per call, got {line:?}");
        }
        const PROMPT: &str = "sim> ";
        let before = self.log_text();
        let n = before.matches(PROMPT).count();
        let stdin = self
            .stdin
            .as_mut()
            .ok_or_else(|| anyhow!("ibsim console closed"))?;
        writeln!(stdin, "{line}")
            .and_then(|_| stdin.flush())
            .context("writing to the ibsim console")?;
        let deadline = Instant::now() + Duration::from_secs(5);
        loop {
            let text = self.log_text();
            if text.matches(PROMPT).count() > n {
                let start = before.rfind(PROMPT).map_or(0, |i| i + PROMPT.len());
                let out = text.get(start..).unwrap_or("");
                let end = out.find(PROMPT).unwrap_or(out.len());
                return Ok(out[..end].to_string());
            }
            if let Some(status) = self.child.try_wait().context("checking ibsim")? {
                bail!("ibsim exited ({status}) on console command {line:?}");
            }
            if Instant::now() >= deadline {
                bail!("ibsim did not finish console command {line:?} within 5 s");
            }
            std::thread::sleep(Duration::from_millis(5));
        }
    }

    /// The `IBSIM_SOCKNAME` this server runs under.
    pub fn sockname(&self) -> &str {
        &self.sockname
    }

    /// The topology file (canonical path).
    pub fn topology(&self) -> &Path {
        &self.topology
    }

    /// What ibsim printed so far (stdout and stderr).
    pub fn log_text(&self) -> String {
        let mut s = String::new();
        if let Ok(mut f) = std::fs::File::open(self.log.path()) {
            let _ = f.read_to_string(&mut s);
        }
        s
    }

    /// Attach a client (see [`IbsimClient::connect`]).
    pub fn connect(&self, node: Option<&str>) -> Result<IbsimClient> {
        IbsimClient::connect(&self.sockname, node)
    }

    /// A command for `program` (a libibumad tool such as `ibnetdiscover`)
    /// running against this server: `LD_PRELOAD` = libumad2sim,
    /// `IBSIM_SOCKNAME`, and `SIM_HOST` = `node` when given. umad2sim
    /// creates `./sys-<pid>` in the working directory, so callers should set
    /// `current_dir` to a scratch directory.
    pub fn umad2sim_command(&self, program: &Path, node: Option<&str>) -> Result<Command> {
        umad2sim_command(&self.sockname, program, node)
    }
}

/// A command for `program` (a libibumad tool) talking to the ibsim-protocol
/// server `sockname` (the real ibsim or `vl15 serve`) through
/// `LD_PRELOAD=libumad2sim.so`; see [`IbsimServer::umad2sim_command`].
pub fn umad2sim_command(sockname: &str, program: &Path, node: Option<&str>) -> Result<Command> {
    let lib = umad2sim_path()?;
    let mut cmd = Command::new(program);
    cmd.env("LD_PRELOAD", lib)
        .env("IBSIM_SOCKNAME", sockname)
        .env_remove("IBSIM_SERVER_NAME")
        .env_remove("SIM_SET_ISSM")
        .stdin(Stdio::null());
    match node {
        Some(n) => cmd.env("SIM_HOST", n),
        None => cmd.env_remove("SIM_HOST"),
    };
    Ok(cmd)
}

impl Drop for IbsimServer {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

// ----------------------------------------------------------------------------
// Control channel

/// One `struct sim_ctl` (native byte order, ibsim runs on this host).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SimCtl {
    pub magic: u32,
    pub clientid: u32,
    pub kind: u32,
    pub len: u32,
    pub data: [u8; 64],
}

impl SimCtl {
    pub fn new(kind: u32, clientid: u32, data: &[u8]) -> Result<SimCtl> {
        if data.len() > 64 {
            bail!("sim_ctl payload of {} bytes exceeds 64", data.len());
        }
        let mut d = [0u8; 64];
        d[..data.len()].copy_from_slice(data);
        Ok(SimCtl {
            magic: SIM_MAGIC,
            clientid,
            kind,
            len: data.len() as u32,
            data: d,
        })
    }

    pub fn encode(&self) -> [u8; SIM_CTL_BYTES] {
        let mut b = [0u8; SIM_CTL_BYTES];
        b[0..4].copy_from_slice(&self.magic.to_ne_bytes());
        b[4..8].copy_from_slice(&self.clientid.to_ne_bytes());
        b[8..12].copy_from_slice(&self.kind.to_ne_bytes());
        b[12..16].copy_from_slice(&self.len.to_ne_bytes());
        b[16..].copy_from_slice(&self.data);
        b
    }

    pub fn decode(b: &[u8]) -> Result<SimCtl> {
        if b.len() != SIM_CTL_BYTES {
            bail!(
                "sim_ctl reply of {} bytes (expected {SIM_CTL_BYTES})",
                b.len()
            );
        }
        let u = |o: usize| u32::from_ne_bytes([b[o], b[o + 1], b[o + 2], b[o + 3]]);
        let mut data = [0u8; 64];
        data.copy_from_slice(&b[16..]);
        let c = SimCtl {
            magic: u(0),
            clientid: u(4),
            kind: u(8),
            len: u(12),
            data,
        };
        if c.magic != SIM_MAGIC {
            bail!(
                "sim_ctl reply with magic {:#010x} (expected {SIM_MAGIC:#010x})",
                c.magic
            );
        }
        Ok(c)
    }
}

struct CtlSocket {
    sock: UnixDatagram,
    server: SocketAddr,
    base: String,
}

impl CtlSocket {
    fn bind(base: &str, id: u32) -> Result<CtlSocket> {
        let name = format!("{base}:ctl{id}");
        let sock = UnixDatagram::bind_addr(&abstract_addr(&name)?)
            .with_context(|| format!("binding control socket @{name}"))?;
        Ok(CtlSocket {
            sock,
            server: abstract_addr(&format!("{base}:ctl"))?,
            base: base.to_string(),
        })
    }

    /// Send one control message and wait for the reply (same type unless
    /// ibsim refused it with type ERROR; that is returned, not an error).
    fn request(&self, kind: u32, clientid: u32, data: &[u8], timeout: Duration) -> Result<SimCtl> {
        let msg = SimCtl::new(kind, clientid, data)?;
        self.sock
            .send_to_addr(&msg.encode(), &self.server)
            .with_context(|| format!("sending sim_ctl type {kind} to @{}:ctl", self.base))?;
        self.sock
            .set_read_timeout(Some(timeout))
            .context("setting the control socket timeout")?;
        let mut buf = [0u8; 512];
        let n = match self.sock.recv(&mut buf) {
            Ok(n) => n,
            Err(e) if matches!(e.kind(), ErrorKind::WouldBlock | ErrorKind::TimedOut) => {
                bail!(
                    "no reply from @{}:ctl to sim_ctl type {kind} within {timeout:?}",
                    self.base
                )
            }
            Err(e) => {
                return Err(e).context(format!("receiving from @{}:ctl", self.base));
            }
        };
        SimCtl::decode(&buf[..n])
            .with_context(|| format!("reply from @{}:ctl to sim_ctl type {kind}", self.base))
    }
}

// ----------------------------------------------------------------------------
// Client

/// One `struct sim_request` (ibspec §10).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SimRequest {
    pub dlid: u16,
    pub slid: u16,
    pub dqp: u32,
    pub sqp: u32,
    pub status: u32,
    /// MAD length (256 for every SM MAD).
    pub length: u64,
    pub mad: Mad,
}

impl SimRequest {
    pub fn encode(&self) -> [u8; SIM_REQUEST_BYTES] {
        let mut b = [0u8; SIM_REQUEST_BYTES];
        // LIDs: htons() value in a host u32, i.e. big-endian in bytes 0..2.
        b[0..2].copy_from_slice(&self.dlid.to_be_bytes());
        b[4..6].copy_from_slice(&self.slid.to_be_bytes());
        b[8..12].copy_from_slice(&self.dqp.to_be_bytes());
        b[12..16].copy_from_slice(&self.sqp.to_be_bytes());
        b[16..20].copy_from_slice(&self.status.to_be_bytes());
        b[24..32].copy_from_slice(&self.length.to_be_bytes());
        b[32..].copy_from_slice(&self.mad);
        b
    }

    pub fn decode(b: &[u8]) -> Result<SimRequest> {
        if b.len() != SIM_REQUEST_BYTES {
            bail!(
                "sim_request of {} bytes (expected {SIM_REQUEST_BYTES})",
                b.len()
            );
        }
        let u32be = |o: usize| u32::from_be_bytes([b[o], b[o + 1], b[o + 2], b[o + 3]]);
        let mut len = [0u8; 8];
        len.copy_from_slice(&b[24..32]);
        let mut mad = [0u8; 256];
        mad.copy_from_slice(&b[32..]);
        Ok(SimRequest {
            dlid: u16::from_be_bytes([b[0], b[1]]),
            slid: u16::from_be_bytes([b[4], b[5]]),
            dqp: u32be(8),
            sqp: u32be(12),
            status: u32be(16),
            length: u64::from_be_bytes(len),
            mad,
        })
    }
}

/// A client attached to one ibsim node port.
pub struct IbsimClient {
    ctl: CtlSocket,
    data: UnixDatagram,
    sockname: String,
    index: u32,
    node_id: String,
    node_info: [u8; 64],
    port_info: [u8; 64],
    vendor: [u8; 24],
    pkeys: Vec<u16>,
    timeout: Duration,
}

/// Length of `sim_client_info.nodeid`.
const NODEID_BYTES: usize = 32;

impl IbsimClient {
    /// Attach to the ibsim server named `sockname` (its `IBSIM_SOCKNAME`),
    /// at `node` (a topology node id or NodeDescription, as `SIM_HOST`), or
    /// at ibsim's default port when `None`. Runs sim_client.c's start-up:
    /// CONNECT, connect the data socket to `out<i>`, GET_VENDOR,
    /// GET_NODEINFO, GET_PORTINFO(0), GET_PKEYS.
    pub fn connect(sockname: &str, node: Option<&str>) -> Result<IbsimClient> {
        let id = unique_client_id();
        let ctl = CtlSocket::bind(sockname, id)?;
        let in_name = format!("{sockname}:in{id}");
        let data = UnixDatagram::bind_addr(&abstract_addr(&in_name)?)
            .with_context(|| format!("binding data socket @{in_name}"))?;
        let t = Duration::from_secs(2);

        // struct sim_client_info { u32 id; u32 qp; u32 issm; char nodeid[32]; }
        let mut info = [0u8; 12 + NODEID_BYTES];
        info[0..4].copy_from_slice(&id.to_ne_bytes());
        if let Some(n) = node {
            if n.len() >= NODEID_BYTES || n.as_bytes().contains(&0) {
                bail!("node id {n:?} does not fit ibsim's nodeid[{NODEID_BYTES}] (NUL-terminated)");
            }
            info[12..12 + n.len()].copy_from_slice(n.as_bytes());
        }
        let r = ctl
            .request(ctl::CONNECT, 0, &info, t)
            .with_context(|| format!("connecting to ibsim @{sockname}"))?;
        if r.kind != ctl::CONNECT {
            bail!(
                "ibsim @{sockname} refused the connection (sim_ctl type {}){}",
                r.kind,
                match node {
                    Some(n) =>
                        format!(": unknown node {n:?}, or all {MAX_CLIENTS} client slots in use"),
                    None => format!(": all {MAX_CLIENTS} client slots in use"),
                }
            );
        }
        let index = u32::from_ne_bytes([r.data[0], r.data[1], r.data[2], r.data[3]]);
        if index >= MAX_CLIENTS {
            bail!("ibsim @{sockname} gave client index {index} (max {MAX_CLIENTS})");
        }
        let nid = &r.data[12..12 + NODEID_BYTES];
        let end = nid.iter().position(|&c| c == 0).unwrap_or(NODEID_BYTES);
        let node_id = String::from_utf8_lossy(&nid[..end]).into_owned();
        let out_name = format!("{sockname}:out{index}");
        data.connect_addr(&abstract_addr(&out_name)?)
            .with_context(|| format!("connecting data socket to @{out_name}"))?;

        let mut client = IbsimClient {
            ctl,
            data,
            sockname: sockname.to_string(),
            index,
            node_id,
            node_info: [0; 64],
            port_info: [0; 64],
            vendor: [0; 24],
            pkeys: Vec::new(),
            timeout: Duration::from_secs(1),
        };
        let v = client.ctl_checked(ctl::GET_VENDOR, &[])?;
        client.vendor.copy_from_slice(&v.data[..24]);
        client.node_info = client.ctl_checked(ctl::GET_NODEINFO, &[])?.data;
        client.port_info = client.ctl_checked(ctl::GET_PORTINFO, &[0])?.data;
        let pk = client.ctl_checked(ctl::GET_PKEYS, &[])?;
        client.pkeys = pk
            .data
            .chunks_exact(2)
            .map(|c| u16::from_be_bytes([c[0], c[1]]))
            .collect();
        Ok(client)
    }

    fn ctl_checked(&self, kind: u32, data: &[u8]) -> Result<SimCtl> {
        let r = self
            .ctl
            .request(kind, self.index, data, Duration::from_secs(2))?;
        if r.kind != kind {
            bail!(
                "ibsim @{} answered sim_ctl type {kind} with type {}",
                self.sockname,
                r.kind
            );
        }
        Ok(r)
    }

    /// How long [`IbsimClient::smp`] waits for the response (default 1 s).
    pub fn set_timeout(&mut self, t: Duration) {
        self.timeout = t;
    }

    /// The client index ibsim assigned (0..10).
    pub fn index(&self) -> u32 {
        self.index
    }

    /// The node id ibsim attached this client to.
    pub fn node_id(&self) -> &str {
        &self.node_id
    }

    /// NodeInfo of the attached node, as GET_NODEINFO returned it.
    pub fn node_info(&self) -> Result<NodeInfo> {
        NodeInfo::decode(&self.node_info).context("GET_NODEINFO payload")
    }

    /// PortInfo of the attached port, as GET_PORTINFO(0) returned it.
    pub fn port_info(&self) -> Result<PortInfo> {
        PortInfo::decode(&self.port_info).context("GET_PORTINFO payload")
    }

    /// The raw 24-byte GET_VENDOR payload.
    pub fn vendor_raw(&self) -> &[u8; 24] {
        &self.vendor
    }

    /// The first 32 P_Keys of the attached port (GET_PKEYS).
    pub fn pkeys(&self) -> &[u16] {
        &self.pkeys
    }

    /// Send one SMP to `dlid` (0xFFFF = directed route; DR requests must
    /// then have HopPointer 0 and permissive DrSLID/DrDLID — ibspec §10) and
    /// return ibsim's response as received. Errors: send failure, timeout,
    /// ibsim's "not delivered" status (110), or a malformed reply.
    pub fn smp(&mut self, req: &Mad, dlid: u16) -> Result<Mad> {
        if dlid == 0 {
            bail!("DLID 0 is reserved (ibsim rejects it)");
        }
        let msg = SimRequest {
            dlid,
            slid: if dlid == PERMISSIVE_LID {
                PERMISSIVE_LID
            } else {
                0
            },
            dqp: 0,
            sqp: 0,
            status: 0,
            length: 256,
            mad: *req,
        };
        // ibsim overwrites TID bits 63:48 with our client index.
        let tid = mad::tid(req) & 0xFFFF_FFFF_FFFF;
        self.data
            .send(&msg.encode())
            .with_context(|| format!("sending an SMP to ibsim @{}", self.sockname))?;
        let deadline = Instant::now() + self.timeout;
        let mut buf = [0u8; 1024];
        loop {
            let left = deadline.saturating_duration_since(Instant::now());
            if left.is_zero() {
                bail!(
                    "no response from ibsim @{} within {:?} to {} (attr {:#06x} mod {})",
                    self.sockname,
                    self.timeout,
                    describe_route(req, dlid),
                    mad::attr_id(req),
                    mad::attr_mod(req)
                );
            }
            self.data
                .set_read_timeout(Some(left))
                .context("setting the data socket timeout")?;
            let n = match self.data.recv(&mut buf) {
                Ok(n) => n,
                Err(e) if matches!(e.kind(), ErrorKind::WouldBlock | ErrorKind::TimedOut) => {
                    continue
                }
                Err(e) => {
                    return Err(e).context(format!("receiving from ibsim @{}", self.sockname))
                }
            };
            let r = SimRequest::decode(&buf[..n])
                .with_context(|| format!("message from ibsim @{}", self.sockname))?;
            let rtid = mad::tid(&r.mad) & 0xFFFF_FFFF_FFFF;
            if rtid != tid {
                // A late answer to an earlier, timed-out request, or a MAD
                // forwarded to us: not ours, keep waiting.
                continue;
            }
            if r.status != 0 {
                bail!(
                    "ibsim @{} did not deliver {} (attr {:#06x} mod {}): status {}{}",
                    self.sockname,
                    describe_route(req, dlid),
                    mad::attr_id(req),
                    mad::attr_mod(req),
                    r.status,
                    if r.status == SIM_STATUS_ETIMEDOUT {
                        " (ETIMEDOUT: dropped, unroutable or no handler)"
                    } else {
                        ""
                    }
                );
            }
            if r.length != 256 {
                bail!(
                    "ibsim @{} replied with MAD length {} (expected 256)",
                    self.sockname,
                    r.length
                );
            }
            if r.mad[mad::off::METHOD] & METHOD_RESP_BIT == 0 {
                // Same TID but a request: a loop-back of our own MAD.
                bail!(
                    "ibsim @{} returned a request (method {:#04x}) instead of a response",
                    self.sockname,
                    r.mad[mad::off::METHOD]
                );
            }
            return Ok(r.mad);
        }
    }
}

/// Directed-route SMPs for [`crate::agents::discover::discover`].
impl crate::agents::discover::SmpTransport for IbsimClient {
    fn query(&mut self, req: &Mad) -> Result<Mad> {
        self.smp(req, PERMISSIVE_LID)
    }
}

fn describe_route(req: &Mad, dlid: u16) -> String {
    if dlid == PERMISSIVE_LID {
        let hc = usize::from(req[mad::off::HOP_CNT]).min(63);
        let path: Vec<String> = req[mad::off::INITIAL_PATH + 1..mad::off::INITIAL_PATH + 1 + hc]
            .iter()
            .map(|p| p.to_string())
            .collect();
        format!("DR path [{}]", path.join(","))
    } else {
        format!("LID {dlid}")
    }
}

impl Drop for IbsimClient {
    fn drop(&mut self) {
        // Free the client slot (ibsim has only 10); best effort.
        let _ = self
            .ctl
            .request(ctl::DISCONNECT, self.index, &[], Duration::from_millis(200));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sim_request_layout() {
        // ibspec §10 observed DR request header.
        let mut mad = [0u8; 256];
        mad[0] = 1;
        let r = SimRequest {
            dlid: 0xFFFF,
            slid: 0xFFFF,
            dqp: 0,
            sqp: 0,
            status: 0,
            length: 256,
            mad,
        };
        let b = r.encode();
        let want: [u8; 32] = [
            0xff, 0xff, 0, 0, 0xff, 0xff, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
            0, 0, 0, 0, 0, 1, 0,
        ];
        assert_eq!(&b[..32], &want);
        assert_eq!(SimRequest::decode(&b).unwrap(), r);
        assert!(SimRequest::decode(&b[..100]).is_err());
    }

    #[test]
    fn sim_ctl_roundtrip_and_errors() {
        let c = SimCtl::new(ctl::GET_PORTINFO, 3, &[1]).unwrap();
        let b = c.encode();
        assert_eq!(SimCtl::decode(&b).unwrap(), c);
        let mut bad = b;
        bad[0] ^= 1;
        assert!(SimCtl::decode(&bad).is_err());
        assert!(SimCtl::decode(&b[..79]).is_err());
        assert!(SimCtl::new(0, 0, &[0; 65]).is_err());
    }
}
