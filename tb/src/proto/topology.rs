//! Fabric topology files: the ibnetdiscover text format as ibsim reads it
//! (ibspec §10 "Topology file"; ibsim `sim_net.c` `parse_netconf`).
//!
//! A file is a sequence of lines:
//!
//! * node records — a header `Switch <nports> "<id>" [# "<desc>" [enhanced|base]
//!   port 0 [lid N] [lmc M]]`, `Hca|Ca <nports> "<id>" [# "<desc>"]` or
//!   `Rt <nports> "<id>"`, followed by up to `nports` port lines
//!   `[<port>][(<guid>)] "<remote id>"[<rport>][(<guid>)] [w=…] [s=…] [e=…]
//!   [# … lid N [lmc M] … lid N <w>x<SPEED>]` and `@[<port>] "<alias>"` alias
//!   lines. `#` lines inside a record are skipped; the record ends after
//!   `nports` port lines or at the first line not starting with `[` or `@`
//!   (that line is consumed, as in ibsim);
//! * global lines, recognised like ibsim by their leading characters:
//!   `switchguid=`, `caguid=`/`hcaguids=`, `rtguid=` (`=` absolute base, `+`
//!   offset from the last absolute base), `vendid=`, `devid=`, `sysimgguid=`,
//!   `width=`, `speed=`, `extspeed=`, `module="<prefix>"`, `include "<file>"`,
//!   `pdebug=` (ignored) and `do <console command>` (recorded in
//!   [`Topology::console`], not executed);
//! * `#` comments (also after blanks) and blank lines are ignored; any other
//!   line is an error at its line (ibsim ignores it: a line ibsim would
//!   skip is more likely a typo than a note, and ibsim's net-examples and
//!   ibnetdiscover's output have none).
//!
//! GUIDs default as in ibsim: switches take one GUID each from 0x200000
//! (PortGUID = NodeGUID), CAs take `nports + 1` GUIDs each from 0x100000
//! (PortGUID = NodeGUID + port), routers count from `rtguid` (ibsim's
//! default base is all ones). `vendid=` and `sysimgguid=` apply to the next
//! node only; `devid=`, `width=`, `speed=` and `extspeed=` stay in force.
//!
//! **Links.** ibsim (`connect_ports`) requires every link to be declared on
//! both ends, each end naming the other; a link declared on one end only is an
//! error there ("remote port … is not connected to …"), and so it is here. The
//! one exception is also ibsim's: a port line that names an alias
//! (`"@name"` or `"<module>@name"`) links to the port that defined the alias
//! with `@[port] "name"`, and that port must declare nothing else.
//!
//! **Where this parser is stricter than ibsim.** ibsim silently ignores or
//! misreads some lines; rather than build a different fabric than ibsim would
//! without saying so, these are errors here: a keyword line that ends a record
//! (ibsim discards it), a port line outside a record (ibsim ignores it),
//! an indented port or node line (ibsim ignores it), a duplicate port line,
//! a remote port number separated from the remote id by blanks (ibsim reads
//! it as port 1), a number field without digits (ibsim reads 0), values that
//! do not fit their field, and a port cabled to itself. Options (`w=`, `s=`,
//! `e=`) are read only before the `#` comment (ibsim scans the whole line).
//! A CA port's own `lid`/`lmc` are read only before the first `"` of its
//! comment (ibsim takes the first `lid` anywhere on the line). Unknown speed
//! names or widths in a comment are ignored with a note, as ibsim warns and
//! ignores them. `include` paths are resolved relative to the including file
//! (ibsim opens them relative to its working directory); nesting is limited to
//! ibsim's 9 levels and cycles are errors. ibsim's 255-byte line limit is not
//! imitated. The port option `s=0` means QDR as in ibsim v0.12 (`sim_net.c`
//! `parse_port_opt`); Debian's ibsim 0.10 rejects it.

use std::collections::{HashMap, HashSet};
use std::fmt::Write as _;
use std::path::{Path, PathBuf};

/// ibsim's default GUID bases (`sim_net.c` `absguids`), by node kind.
pub const SWITCH_GUID_BASE: u64 = 0x20_0000;
/// First CA NodeGUID when the file sets no `caguid=`.
pub const CA_GUID_BASE: u64 = 0x10_0000;
/// First router NodeGUID when the file sets no `rtguid=` (ibsim: `~0`).
pub const ROUTER_GUID_BASE: u64 = !0;

/// Include nesting limit (ibsim `MAX_INCLUDE`, counting the top file).
const MAX_INCLUDE: usize = 9;
/// Longest `module=` prefix ibsim accepts (`NODEPREFIX`).
const MAX_PREFIX: usize = 20;

/// PortInfo.LinkWidthEnabled/Active encodings (IBA; ibsim `sim.h`).
pub mod width {
    pub const W1X: u8 = 1;
    pub const W4X: u8 = 2;
    pub const W8X: u8 = 4;
    pub const W12X: u8 = 8;
    pub const W2X: u8 = 16;
    /// ibsim `DEFAULT_LINKWIDTH` (4x).
    pub const DEFAULT: u8 = W4X;
}

/// PortInfo.LinkSpeedEnabled/Active encodings (SDR 1, DDR 2, QDR 4).
pub mod speed {
    pub const SDR: u8 = 1;
    pub const DDR: u8 = 2;
    pub const QDR: u8 = 4;
    /// ibsim `DEFAULT_LINKSPEED` (SDR).
    pub const DEFAULT: u8 = SDR;
}

/// PortInfo.LinkSpeedExtEnabled/Active encodings (FDR 1, EDR 2, HDR 4, NDR 8).
pub mod speed_ext {
    pub const NONE: u8 = 0;
    pub const FDR: u8 = 1;
    pub const EDR: u8 = 2;
    pub const HDR: u8 = 4;
    pub const NDR: u8 = 8;
}

/// Node type, as in NodeInfo.NodeType; "switch", "ca" or "router" in
/// JSON.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum NodeKind {
    Switch,
    Ca,
    Router,
}

impl NodeKind {
    /// GUID-base slot (ibsim keeps one counter per kind).
    fn slot(self) -> usize {
        match self {
            NodeKind::Ca => 0,
            NodeKind::Switch => 1,
            NodeKind::Router => 2,
        }
    }
}

/// Where something was declared: `Topology::files[file]`, 1-based `line`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Origin {
    pub file: usize,
    pub line: usize,
}

/// Switch management port 0 settings from the `Switch` header line.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Port0 {
    /// `Some(true)` for "enhanced port 0", `Some(false)` for "base port 0",
    /// `None` when not stated (ibsim then leaves SwitchInfo.EnhancedPort0 = 0).
    pub enhanced: Option<bool>,
    pub lid: Option<u16>,
    pub lmc: Option<u8>,
}

/// One external port (1..=nports) of a node.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TPort {
    pub num: u8,
    /// The port's own LID/LMC, when the file gives them (CA port comments
    /// `# lid N lmc M …`).
    pub lid: Option<u16>,
    pub lmc: Option<u8>,
    /// PortInfo.LinkWidthEnabled: `width=` default, `w=` option, or the
    /// `<w>x` of the comment (1x→1, 2x→16, 4x→3, 8x→4, 12x→11 as ibsim).
    pub width_enabled: u8,
    /// PortInfo.LinkSpeedEnabled (`speed=`, `s=`, or from the comment speed).
    pub speed_enabled: u8,
    /// PortInfo.LinkSpeedExtEnabled (`extspeed=`, `e=`, or FDR/EDR/HDR/NDR).
    pub speed_ext_enabled: u8,
    /// Mellanox FDR10 enabled (FDR and faster names in the comment).
    pub fdr10_enabled: bool,
    /// The `(<guid>)` written after the local port number, if any (ibsim
    /// ignores it; the port's GUID is [`TNode::port_guid`]).
    pub declared_guid: Option<u64>,
    /// Alias defined on this port (`@[port] "name"`), fully qualified.
    pub alias: Option<String>,
    /// The other end, once linked: (node index, port number).
    pub remote: Option<(usize, u8)>,
    /// Index into [`Topology::links`].
    pub link: Option<usize>,
    /// The line that declared this port, if any.
    pub origin: Option<Origin>,
}

/// One node record.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TNode {
    pub kind: NodeKind,
    pub nports: u8,
    /// The quoted node id, with the `module=` prefix (`prefix#id`) if any.
    pub id: String,
    /// NodeDescription: the `# "<desc>"` text, or the id when none is given.
    pub description: String,
    pub node_guid: u64,
    /// Switch: `[node_guid]` (one GUID for the switch and port 0). CA and
    /// router: the PortGUIDs of ports 1..=nports (NodeGUID + port).
    pub port_guids: Vec<u64>,
    /// NodeInfo.SystemImageGUID as ibsim answers it: the `sysimgguid=` set
    /// just before this node, else the NodeGUID. (ibsim's console `Dump`
    /// always prints the NodeGUID here.)
    pub sys_image_guid: u64,
    /// 24-bit NodeInfo.VendorID (`vendid=`, else 0).
    pub vendor_id: u32,
    pub device_id: u16,
    /// Switches only.
    pub port0: Option<Port0>,
    /// Ports 1..=nports: `ports[p - 1]` is port `p`.
    pub ports: Vec<TPort>,
    /// The header line.
    pub origin: Origin,
}

impl TNode {
    /// Port `p` (1..=nports).
    pub fn port(&self, p: u8) -> Option<&TPort> {
        usize::from(p)
            .checked_sub(1)
            .and_then(|i| self.ports.get(i))
    }

    /// PortGUID of port `p`: switches 0..=nports → NodeGUID; CAs and routers
    /// 1..=nports → NodeGUID + p.
    pub fn port_guid(&self, p: u8) -> Option<u64> {
        match self.kind {
            NodeKind::Switch => (p <= self.nports).then_some(self.node_guid),
            _ => (p >= 1 && p <= self.nports).then(|| self.node_guid.wrapping_add(u64::from(p))),
        }
    }
}

/// A cable between two ports. `a` is the end ibsim links from (the first
/// declared port in file order), `b` the other. Width and speeds are the
/// active values ibsim computes (`get_active_link*`): the highest setting
/// both ends enable.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TLink {
    pub a: (usize, u8),
    pub b: (usize, u8),
    /// PortInfo.LinkWidthActive (see [`width`]).
    pub width: u8,
    /// PortInfo.LinkSpeedActive (see [`speed`]).
    pub speed: u8,
    /// PortInfo.LinkSpeedExtActive (see [`speed_ext`]; 0 = none).
    pub speed_ext: u8,
    pub fdr10: bool,
}

/// A `do <command>` line: an ibsim console command ibsim would run while
/// reading the file. Recorded, not executed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ConsoleLine {
    pub origin: Origin,
    pub command: String,
}

/// Something accepted but ignored (unknown speed name, unknown option…).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Note {
    pub origin: Origin,
    pub text: String,
}

/// A parsed fabric.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Topology {
    pub nodes: Vec<TNode>,
    pub links: Vec<TLink>,
    /// Files read: `[0]` is the top file, then includes in reading order.
    pub files: Vec<PathBuf>,
    pub console: Vec<ConsoleLine>,
    pub notes: Vec<Note>,
    index: HashMap<String, usize>,
}

/// Why a topology file was refused. Every variant names the file; syntax and
/// link errors also name the line and what was expected there.
#[derive(Debug, thiserror::Error)]
pub enum TopologyError {
    /// The I/O error is part of the message, not a `source`, so `{:#}`
    /// names it once.
    #[error("{}: cannot read topology file: {err}", .file.display())]
    Io { file: PathBuf, err: std::io::Error },
    #[error("{}:{}: {}{}", .file.display(), .line, .msg, chain(.included_from))]
    Syntax {
        file: PathBuf,
        line: usize,
        msg: String,
        /// Include chain, innermost first: (including file, line of `include`).
        included_from: Vec<(PathBuf, usize)>,
    },
}

fn chain(from: &[(PathBuf, usize)]) -> String {
    let mut s = String::new();
    for (f, l) in from {
        let _ = write!(s, " (included from {}:{l})", f.display());
    }
    s
}

impl TopologyError {
    /// The line the error points at (0 for I/O errors on the top file).
    pub fn line(&self) -> usize {
        match self {
            TopologyError::Io { .. } => 0,
            TopologyError::Syntax { line, .. } => *line,
        }
    }
}

impl Topology {
    /// Read and parse a topology file (includes relative to its directory).
    pub fn load(path: impl AsRef<Path>) -> Result<Topology, TopologyError> {
        let path = path.as_ref();
        let text = read_text(path).map_err(|err| TopologyError::Io {
            file: path.to_path_buf(),
            err,
        })?;
        Topology::parse(&text, path)
    }

    /// Parse `text`; `origin` names it in errors and anchors `include` paths.
    pub fn parse(text: &str, origin: &Path) -> Result<Topology, TopologyError> {
        let mut p = Parser::new();
        p.files.push(origin.to_path_buf());
        p.stack.push(Frame {
            file: 0,
            line: 0,
            key: key_of(origin),
        });
        p.parse_text(text)?;
        p.stack.pop();
        p.connect()
    }

    /// Node index by (prefixed) id.
    pub fn node_index(&self, id: &str) -> Option<usize> {
        self.index.get(id).copied()
    }

    /// Node by (prefixed) id.
    pub fn node(&self, id: &str) -> Option<&TNode> {
        self.node_index(id).map(|i| &self.nodes[i])
    }

    /// The port ibsim attaches a client to when `SIM_HOST` is unset: the first
    /// port of the first node (switch port 0, CA port 1).
    pub fn default_port(&self) -> Option<(usize, u8)> {
        self.nodes.first().map(|n| match n.kind {
            NodeKind::Switch => (0, 0),
            _ => (0, 1),
        })
    }

    /// The port at the other end of (node, port), if linked.
    pub fn remote(&self, node: usize, port: u8) -> Option<(usize, u8)> {
        self.nodes.get(node)?.port(port)?.remote
    }

    /// An error about what was declared at `o` (a line the file had no
    /// syntax error in, refused by what reads the topology).
    pub fn error_at(&self, o: Origin, msg: impl Into<String>) -> TopologyError {
        TopologyError::Syntax {
            file: self.files.get(o.file).cloned().unwrap_or_default(),
            line: o.line,
            msg: msg.into(),
            included_from: Vec::new(),
        }
    }

    /// `file:line` of an origin, for messages.
    pub fn at(&self, o: Origin) -> String {
        match self.files.get(o.file) {
            Some(f) => format!("{}:{}", f.display(), o.line),
            None => format!("?:{}", o.line),
        }
    }
}

fn read_text(path: &Path) -> std::io::Result<String> {
    let meta = std::fs::metadata(path)?;
    if !meta.is_file() {
        return Err(std::io::Error::new(
            std::io::ErrorKind::InvalidInput,
            "not a regular file",
        ));
    }
    let bytes = std::fs::read(path)?;
    Ok(String::from_utf8_lossy(&bytes).into_owned())
}

fn key_of(path: &Path) -> PathBuf {
    std::fs::canonicalize(path).unwrap_or_else(|_| path.to_path_buf())
}

// ---------------------------------------------------------------------------
// Parser

struct Frame {
    file: usize,
    /// Line currently being read in this file.
    line: usize,
    key: PathBuf,
}

/// The remote end a port line declares.
#[derive(Clone)]
struct Decl {
    remote_id: String,
    remote_port: u8,
    /// The alias key, when the remote was named through an alias.
    via_alias: Option<String>,
    origin: Origin,
}

struct Parser {
    files: Vec<PathBuf>,
    stack: Vec<Frame>,
    absguids: [u64; 3],
    guids: [u64; 3],
    prefix: String,
    vendid: u32,
    devid: u16,
    sysimgguid: u64,
    width: u8,
    speed: u8,
    speed_ext: u8,
    nodes: Vec<TNode>,
    decls: Vec<Vec<Option<Decl>>>,
    index: HashMap<String, usize>,
    node_guids: HashSet<u64>,
    aliases: HashMap<String, (String, u8)>,
    console: Vec<ConsoleLine>,
    notes: Vec<Note>,
}

/// How ibsim classifies a line, by its leading characters (`parse_netconf`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum LineKind {
    Node(NodeKind, usize),
    GuidBase(NodeKind),
    VendId,
    DevId,
    SysImgGuid,
    Width,
    Speed,
    ExtSpeed,
    Module,
    Include,
    Pdebug,
    Do,
    Port,
    Comment,
    Blank,
    Other,
}

fn classify(line: &str) -> LineKind {
    // Order and prefixes as ibsim's strncmp chain.
    const TABLE: &[(&str, LineKind)] = &[
        ("Switch", LineKind::Node(NodeKind::Switch, 6)),
        ("Hca", LineKind::Node(NodeKind::Ca, 3)),
        ("Ca", LineKind::Node(NodeKind::Ca, 2)),
        ("Rt", LineKind::Node(NodeKind::Router, 2)),
        ("switchguid", LineKind::GuidBase(NodeKind::Switch)),
        ("hcaguids", LineKind::GuidBase(NodeKind::Ca)),
        ("caguid", LineKind::GuidBase(NodeKind::Ca)),
        ("rtguid", LineKind::GuidBase(NodeKind::Router)),
        ("vendid", LineKind::VendId),
        ("devid", LineKind::DevId),
        ("sysimgguid", LineKind::SysImgGuid),
        ("width", LineKind::Width),
        ("speed", LineKind::Speed),
        ("extspeed", LineKind::ExtSpeed),
        ("module", LineKind::Module),
        ("include", LineKind::Include),
        ("pdebug", LineKind::Pdebug),
        ("do", LineKind::Do),
    ];
    for (prefix, kind) in TABLE {
        if line.starts_with(prefix) {
            return *kind;
        }
    }
    if line.starts_with('[') || line.starts_with('@') {
        LineKind::Port
    } else if line.starts_with('#') {
        LineKind::Comment
    } else if line.trim().is_empty() {
        LineKind::Blank
    } else {
        LineKind::Other
    }
}

/// A `#` comment after blanks (ibsim ignores it as any unknown line).
fn is_indented_comment(line: &str) -> bool {
    line.trim_start().starts_with('#')
}

/// An indented line ibsim would ignore but that looks meant as a port or node
/// line.
fn looks_indented_record(line: &str) -> bool {
    if !line.starts_with([' ', '\t']) {
        return false;
    }
    let t = line.trim_start();
    if t.starts_with('[') || t.starts_with('@') {
        return true;
    }
    let word = t.split_whitespace().next().unwrap_or("");
    matches!(word, "Switch" | "Hca" | "Ca" | "Rt")
}

impl Parser {
    fn new() -> Parser {
        Parser {
            files: Vec::new(),
            stack: Vec::new(),
            absguids: [CA_GUID_BASE, SWITCH_GUID_BASE, ROUTER_GUID_BASE],
            guids: [CA_GUID_BASE, SWITCH_GUID_BASE, ROUTER_GUID_BASE],
            prefix: String::new(),
            vendid: 0,
            devid: 0,
            sysimgguid: 0,
            width: width::DEFAULT,
            speed: speed::DEFAULT,
            speed_ext: speed_ext::NONE,
            nodes: Vec::new(),
            decls: Vec::new(),
            index: HashMap::new(),
            node_guids: HashSet::new(),
            aliases: HashMap::new(),
            console: Vec::new(),
            notes: Vec::new(),
        }
    }

    fn origin(&self) -> Origin {
        let f = self.stack.last().map_or((0, 0), |f| (f.file, f.line));
        Origin {
            file: f.0,
            line: f.1,
        }
    }

    /// Error at the current line of the current file.
    fn err(&self, msg: impl Into<String>) -> TopologyError {
        let o = self.origin();
        let included_from = self
            .stack
            .iter()
            .rev()
            .skip(1)
            .map(|f| (self.files[f.file].clone(), f.line))
            .collect();
        TopologyError::Syntax {
            file: self.files.get(o.file).cloned().unwrap_or_default(),
            line: o.line,
            msg: msg.into(),
            included_from,
        }
    }

    fn set_line(&mut self, line: usize) {
        if let Some(f) = self.stack.last_mut() {
            f.line = line;
        }
    }

    fn note(&mut self, text: impl Into<String>) {
        let origin = self.origin();
        self.notes.push(Note {
            origin,
            text: text.into(),
        });
    }

    fn parse_text(&mut self, text: &str) -> Result<(), TopologyError> {
        let lines: Vec<&str> = text.lines().collect();
        let mut i = 0;
        while i < lines.len() {
            let line = lines[i];
            i += 1;
            self.set_line(i);
            match classify(line) {
                LineKind::Node(kind, kwlen) => {
                    let node = self.parse_header(kind, line, kwlen)?;
                    i = self.parse_record(node, &lines, i)?;
                }
                LineKind::GuidBase(kind) => self.parse_guidbase(kind, line)?,
                LineKind::VendId => {
                    let v = self.assignment(line, "vendid")?;
                    self.vendid = u32::try_from(v)
                        .ok()
                        .filter(|v| *v <= 0xFF_FFFF)
                        .ok_or_else(|| self.err(format!("vendid {v:#x} does not fit 24 bits")))?;
                }
                LineKind::DevId => {
                    let v = self.assignment(line, "devid")?;
                    self.devid = u16::try_from(v)
                        .map_err(|_| self.err(format!("devid {v:#x} does not fit 16 bits")))?;
                }
                LineKind::SysImgGuid => self.sysimgguid = self.assignment(line, "sysimgguid")?,
                LineKind::Width => {
                    let v = self.assignment(line, "width")?;
                    self.width = self.check_width(v)?;
                }
                LineKind::Speed => {
                    let v = self.assignment(line, "speed")?;
                    if !(1..=7).contains(&v) {
                        return Err(self.err(format!("speed={v}: expected 1..7")));
                    }
                    self.speed = v as u8;
                }
                LineKind::ExtSpeed => {
                    let v = self.assignment(line, "extspeed")?;
                    if v > 15 {
                        return Err(self.err(format!("extspeed={v}: expected 0..15")));
                    }
                    self.speed_ext = v as u8;
                }
                LineKind::Module => self.parse_module(line)?,
                LineKind::Include => self.parse_include(line)?,
                LineKind::Pdebug => {}
                LineKind::Do => {
                    let origin = self.origin();
                    self.console.push(ConsoleLine {
                        origin,
                        command: line[2..].trim().to_string(),
                    });
                }
                LineKind::Port => {
                    return Err(self.err(
                        "port line outside a node record: a record ends after <nports> port \
                         lines or at the first line not starting with '[' or '@'",
                    ))
                }
                LineKind::Comment | LineKind::Blank => {}
                LineKind::Other if is_indented_comment(line) => {}
                LineKind::Other => return Err(self.other_line(line)),
            }
        }
        Ok(())
    }

    /// The error for a line that is no node header, port line, keyword,
    /// comment or blank line. ibsim ignores such lines; a line that means
    /// nothing to it is more likely a typo than a note, so it is refused
    /// (ibsim's net-examples and ibnetdiscover's output have none).
    fn other_line(&self, line: &str) -> TopologyError {
        if looks_indented_record(line) {
            return self.err(
                "indented node or port line: it must start in column 1 \
                 (ibsim ignores indented lines)",
            );
        }
        let word: String = line.trim().chars().take(24).collect();
        self.err(format!(
            "{word:?} is not a topology line: expected a node header (Switch, Hca, Ca, Rt), \
             a port line ([N] or @[N]), a keyword (switchguid=, caguid=, vendid=, devid=, \
             sysimgguid=, width=, speed=, extspeed=, module=, include, do) or a # comment"
        ))
    }

    fn check_width(&self, v: u64) -> Result<u8, TopologyError> {
        if (1..=31).contains(&v) {
            Ok(v as u8)
        } else {
            Err(self.err(format!("link width mask {v}: expected 1..31")))
        }
    }

    /// `name=<number>`: the number after the first '='.
    fn assignment(&self, line: &str, name: &str) -> Result<u64, TopologyError> {
        let Some(eq) = line.find('=') else {
            return Err(self.err(format!("{name}: expected '=' and a number")));
        };
        c_number(&line[eq + 1..])
            .map(|(v, _)| v)
            .map_err(|e| self.err(format!("{name}=: {e}")))
    }

    fn parse_guidbase(&mut self, kind: NodeKind, line: &str) -> Result<(), TopologyError> {
        let (pos, relative) = match line.find('=') {
            Some(p) => (p, false),
            None => match line.find('+') {
                Some(p) => (p, true),
                None => {
                    return Err(self
                        .err("GUID base: expected '=' (absolute) or '+' (relative) and a number"))
                }
            },
        };
        let (v, _) = c_number(&line[pos + 1..]).map_err(|e| self.err(format!("GUID base: {e}")))?;
        let slot = kind.slot();
        if relative {
            self.guids[slot] = self.absguids[slot].wrapping_add(v);
        } else {
            self.absguids[slot] = v;
            self.guids[slot] = v;
        }
        Ok(())
    }

    fn parse_module(&mut self, line: &str) -> Result<(), TopologyError> {
        let Some(eq) = line.find('=') else {
            return Err(self.err("module: expected '=\"<prefix>\"'"));
        };
        let (name, _) = quoted(&line[eq + 1..])
            .ok_or_else(|| self.err("module: expected a quoted prefix after '='"))?;
        if name.len() > MAX_PREFIX {
            return Err(self.err(format!(
                "module prefix \"{name}\" is longer than {MAX_PREFIX} characters"
            )));
        }
        if name.contains(['#', '@']) {
            return Err(self.err("module prefix: '#' and '@' are reserved"));
        }
        self.prefix = name.to_string();
        Ok(())
    }

    fn parse_include(&mut self, line: &str) -> Result<(), TopologyError> {
        let (name, _) = quoted(&line["include".len()..])
            .ok_or_else(|| self.err("include: expected a quoted file name"))?;
        if self.stack.len() >= MAX_INCLUDE {
            return Err(self.err(format!(
                "include \"{name}\": nested deeper than {MAX_INCLUDE} files"
            )));
        }
        let cur = &self.files[self.origin().file];
        let path = if Path::new(name).is_absolute() {
            PathBuf::from(name)
        } else {
            cur.parent().unwrap_or(Path::new("")).join(name)
        };
        let key = key_of(&path);
        if self.stack.iter().any(|f| f.key == key) {
            return Err(self.err(format!(
                "include \"{name}\": include cycle ({} is already being read)",
                path.display()
            )));
        }
        let text = read_text(&path)
            .map_err(|e| self.err(format!("include: cannot read \"{}\": {e}", path.display())))?;
        self.files.push(path);
        self.stack.push(Frame {
            file: self.files.len() - 1,
            line: 0,
            key,
        });
        self.parse_text(&text)?;
        self.stack.pop();
        Ok(())
    }

    /// Node header → a new node (index).
    fn parse_header(
        &mut self,
        kind: NodeKind,
        line: &str,
        kwlen: usize,
    ) -> Result<usize, TopologyError> {
        let kw = &line[..kwlen];
        let rest = &line[kwlen..];
        if !rest.starts_with([' ', '\t']) {
            return Err(self.err(format!(
                "{kw}: expected blanks, the port count and the quoted node id after '{kw}'"
            )));
        }
        let (n, rest) = c_number(rest).map_err(|e| self.err(format!("{kw}: port count: {e}")))?;
        if !(1..=255).contains(&n) {
            return Err(self.err(format!("{kw}: port count {n}: expected 1..255")));
        }
        let nports = n as u8;
        let rest = rest.trim_start();
        let (id, rest) = quoted(rest)
            .ok_or_else(|| self.err(format!("{kw} {n}: expected the quoted node id")))?;
        if id.is_empty() {
            return Err(self.err("node id is empty"));
        }
        if id.contains(['#', '@']) {
            return Err(self.err(format!("node id \"{id}\": '#' and '@' are reserved")));
        }
        let full_id = if self.prefix.is_empty() {
            id.to_string()
        } else {
            format!("{}#{id}", self.prefix)
        };
        if let Some(&other) = self.index.get(&full_id) {
            let at = self.at(self.nodes[other].origin);
            return Err(self.err(format!("node id \"{full_id}\" already defined at {at}")));
        }

        // Description: after '#', quoted, or bare up to a keyword.
        let (desc, tail) = self.parse_desc(rest)?;

        let slot = kind.slot();
        let node_guid = self.guids[slot];
        if !self.node_guids.insert(node_guid) {
            return Err(self.err(format!(
                "NodeGUID {node_guid:#x} of \"{full_id}\" is already used by another node"
            )));
        }
        self.guids[slot] = match kind {
            NodeKind::Switch => node_guid.wrapping_add(1),
            _ => node_guid.wrapping_add(u64::from(nports) + 1),
        };

        let port0 = if kind == NodeKind::Switch {
            let mut p0 = Port0::default();
            if tail.contains("enhanced port 0") {
                p0.enhanced = Some(true);
            } else if tail.contains("base port 0") {
                p0.enhanced = Some(false);
            }
            p0.lid = self.lid_after(tail, "lid")?;
            p0.lmc = self.lmc_after(tail)?;
            Some(p0)
        } else {
            None
        };

        let port_guids = match kind {
            NodeKind::Switch => vec![node_guid],
            _ => (1..=u64::from(nports))
                .map(|p| node_guid.wrapping_add(p))
                .collect(),
        };
        let origin = self.origin();
        let ports = (1..=nports)
            .map(|num| TPort {
                num,
                lid: None,
                lmc: None,
                width_enabled: self.width,
                speed_enabled: self.speed,
                speed_ext_enabled: self.speed_ext,
                fdr10_enabled: false,
                declared_guid: None,
                alias: None,
                remote: None,
                link: None,
                origin: None,
            })
            .collect();
        let node = TNode {
            kind,
            nports,
            description: desc.unwrap_or_else(|| full_id.clone()),
            id: full_id.clone(),
            node_guid,
            port_guids,
            sys_image_guid: if self.sysimgguid != 0 {
                self.sysimgguid
            } else {
                node_guid
            },
            vendor_id: self.vendid,
            device_id: self.devid,
            port0,
            ports,
            origin,
        };
        // ibsim: vendid and sysimgguid apply to one node only.
        self.vendid = 0;
        self.sysimgguid = 0;
        self.index.insert(full_id, self.nodes.len());
        self.nodes.push(node);
        self.decls.push(vec![None; usize::from(nports)]);
        Ok(self.nodes.len() - 1)
    }

    fn at(&self, o: Origin) -> String {
        format!("{}:{}", self.files[o.file].display(), o.line)
    }

    /// `rest` after the node id → (description, text after it).
    fn parse_desc<'t>(&self, rest: &'t str) -> Result<(Option<String>, &'t str), TopologyError> {
        let Some(hash) = rest.find('#') else {
            return Ok((None, rest));
        };
        let s = rest[hash + 1..].trim_start();
        if s.starts_with('"') {
            let (d, tail) =
                quoted(s).ok_or_else(|| self.err("node description: missing closing '\"'"))?;
            return Ok((Some(d.to_string()), tail));
        }
        let cut = [" enhanced port ", " base port ", " lid ", " lmc "]
            .iter()
            .filter_map(|k| s.find(k))
            .min()
            .unwrap_or(s.len());
        let d = s[..cut].trim_end();
        Ok(((!d.is_empty()).then(|| d.to_string()), &s[cut..]))
    }

    /// The number after the first word `kw` in `s`, as a LID.
    fn lid_after(&self, s: &str, kw: &str) -> Result<Option<u16>, TopologyError> {
        match word_number(s, kw).map_err(|e| self.err(e))? {
            None => Ok(None),
            Some(v) => u16::try_from(v)
                .map(Some)
                .map_err(|_| self.err(format!("{kw} {v}: a LID is 16 bits"))),
        }
    }

    fn lmc_after(&self, s: &str) -> Result<Option<u8>, TopologyError> {
        match word_number(s, "lmc").map_err(|e| self.err(e))? {
            None => Ok(None),
            Some(v) if v <= 7 => Ok(Some(v as u8)),
            Some(v) => Err(self.err(format!("lmc {v}: expected 0..7"))),
        }
    }

    /// Port lines after a header; returns the index of the next line to read.
    fn parse_record(
        &mut self,
        node: usize,
        lines: &[&str],
        mut i: usize,
    ) -> Result<usize, TopologyError> {
        let nports = self.nodes[node].nports;
        let mut count = 0u32;
        while count < u32::from(nports) && i < lines.len() {
            let line = lines[i];
            i += 1;
            self.set_line(i);
            if line.starts_with('#') {
                continue;
            }
            if line.starts_with('[') || line.starts_with('@') {
                self.parse_port(node, line)?;
                count += 1;
                continue;
            }
            // End of record: ibsim consumes (discards) this line.
            match classify(line) {
                LineKind::Blank | LineKind::Comment => {}
                LineKind::Other if is_indented_comment(line) => {}
                LineKind::Other => return Err(self.other_line(line)),
                _ => {
                    return Err(self.err(format!(
                        "this line ends the record of \"{}\" (records end at the first line \
                         not starting with '[' or '@') and ibsim would discard it: \
                         expected a blank line before it",
                        self.nodes[node].id
                    )))
                }
            }
            break;
        }
        Ok(i)
    }

    fn parse_port(&mut self, node: usize, line: &str) -> Result<(), TopologyError> {
        let kind = self.nodes[node].kind;
        let nports = self.nodes[node].nports;
        let is_alias = line.starts_with('@');
        let s = if is_alias { &line[1..] } else { line };
        let (num, s) = bracket_number(s)
            .ok_or_else(|| self.err("port line: expected '[<port number>]' at the start"))?;
        if num == 0 {
            return Err(self.err(
                "port 0 cannot have a port line (a switch's port 0 is its management port; \
                 give its lid/lmc on the Switch line)",
            ));
        }
        if num > u64::from(nports) {
            return Err(self.err(format!(
                "port {num}: \"{}\" has ports 1..{nports}",
                self.nodes[node].id
            )));
        }
        let num = num as u8;
        let idx = usize::from(num) - 1;
        if let Some(o) = self.nodes[node].ports[idx].origin {
            let at = self.at(o);
            return Err(self.err(format!(
                "port {num} of \"{}\" already declared at {at}",
                self.nodes[node].id
            )));
        }
        let s = skip_ext(s);
        let (declared_guid, s) = self.paren_guid(s)?;
        let s = s.trim_start();
        let (name, mut s) = quoted(s).ok_or_else(|| {
            self.err(if is_alias {
                "alias line: expected '@[<port>] \"<alias name>\"'"
            } else {
                "port line: expected the quoted remote node id after the port number"
            })
        })?;
        let origin = self.origin();
        self.nodes[node].ports[idx].origin = Some(origin);
        self.nodes[node].ports[idx].declared_guid = declared_guid;

        if is_alias {
            if name.is_empty() || name.contains(['#', '@']) {
                return Err(self.err(format!(
                    "alias \"{name}\": expected a non-empty name without '#' or '@'"
                )));
            }
            let key = format!("{}@{name}", self.prefix);
            if let Some((n, p)) = self.aliases.get(&key) {
                return Err(self.err(format!(
                    "alias \"{key}\" is already mapped to \"{n}\" port {p}"
                )));
            }
            let id = self.nodes[node].id.clone();
            self.aliases.insert(key.clone(), (id, num));
            self.nodes[node].ports[idx].alias = Some(key);
        } else if name.contains('@') {
            // Alias reference: the remote end is the aliased port.
            let key = if name.starts_with('@') {
                format!("{}{name}", self.prefix)
            } else {
                name.to_string()
            };
            let Some((rid, rport)) = self.aliases.get(&key).cloned() else {
                return Err(self.err(format!(
                    "unknown alias \"{key}\" (define it first with '@[<port>] \"<name>\"')"
                )));
            };
            if let Some((p, rest)) = bracket_number(s) {
                if p != u64::from(rport) {
                    return Err(self.err(format!(
                        "alias \"{key}\" is port {rport} of \"{rid}\", not port {p}"
                    )));
                }
                s = rest;
            }
            s = skip_ext(s);
            s = self.paren_guid(s)?.1;
            self.decls[node][idx] = Some(Decl {
                remote_id: rid,
                remote_port: rport,
                via_alias: Some(key),
                origin,
            });
        } else {
            if name.is_empty() {
                return Err(self.err("port line: empty remote node id"));
            }
            let remote_id = if !self.prefix.is_empty() && !name.contains('#') {
                format!("{}#{name}", self.prefix)
            } else {
                name.to_string()
            };
            let remote_port = if s.starts_with('[') {
                let (p, rest) = bracket_number(s).ok_or_else(|| {
                    self.err("port line: expected '[<remote port>]' after the remote id")
                })?;
                if !(1..=255).contains(&p) {
                    return Err(self.err(format!("remote port {p}: expected 1..255")));
                }
                s = rest;
                p as u8
            } else if s.trim_start().starts_with('[') {
                return Err(self.err(
                    "port line: the remote port must follow the closing '\"' directly \
                     (ibsim reads '\"id\" [n]' as port 1)",
                ));
            } else {
                1
            };
            s = skip_ext(s);
            s = self.paren_guid(s)?.1;
            self.decls[node][idx] = Some(Decl {
                remote_id,
                remote_port,
                via_alias: None,
                origin,
            });
        }

        // Options before the comment, then the comment.
        let (opts, comment) = match s.find('#') {
            Some(h) => (&s[..h], Some(&s[h + 1..])),
            None => (s, None),
        };
        for tok in opts.split_whitespace() {
            self.parse_option(node, idx, tok)?;
        }
        if let Some(c) = comment {
            if kind == NodeKind::Ca {
                let own = c.split('"').next().unwrap_or("");
                let lid = self.lid_after(own, "lid")?;
                let lmc = self.lmc_after(own)?;
                let p = &mut self.nodes[node].ports[idx];
                p.lid = lid;
                p.lmc = lmc;
            }
            if kind != NodeKind::Router {
                let conn = c.rsplit('"').next().unwrap_or("");
                self.parse_connection(node, idx, conn);
            }
        }
        Ok(())
    }

    fn parse_option(&mut self, node: usize, idx: usize, tok: &str) -> Result<(), TopologyError> {
        let Some((k, v)) = tok.split_once('=') else {
            return Err(self.err(format!(
                "port line: unexpected \"{tok}\": expected w=, s=, e= options or a '#' comment"
            )));
        };
        let (v, _) = c_number(v).map_err(|e| self.err(format!("option {k}=: {e}")))?;
        match k {
            "w" => {
                let w = self.check_width(v)?;
                self.nodes[node].ports[idx].width_enabled = w;
            }
            "s" => {
                if v > 7 {
                    return Err(self.err(format!("s={v}: expected 0..7 (0 = QDR)")));
                }
                self.nodes[node].ports[idx].speed_enabled =
                    if v == 0 { speed::QDR } else { v as u8 };
            }
            "e" => {
                if v > 15 {
                    return Err(self.err(format!("e={v}: expected 0..15")));
                }
                self.nodes[node].ports[idx].speed_ext_enabled = v as u8;
            }
            _ => self.note(format!("unknown port option \"{k}=\" ignored")),
        }
        Ok(())
    }

    /// `lid N <w>x<SPEED>` (ibnetdiscover's remote LID, width and speed):
    /// sets the enabled width and speeds as ibsim does.
    fn parse_connection(&mut self, node: usize, idx: usize, s: &str) {
        let words: Vec<&str> = s.split_whitespace().collect();
        let Some(pos) = words.iter().position(|w| *w == "lid") else {
            return;
        };
        let (Some(lid), Some(ws)) = (words.get(pos + 1), words.get(pos + 2)) else {
            return;
        };
        if c_number(lid).is_err() {
            return;
        }
        let Some((w, sp)) = ws.split_once('x') else {
            return;
        };
        let Ok(w) = w.parse::<u32>() else {
            return;
        };
        let mask = match w {
            1 => Some(width::W1X),
            2 => Some(width::W2X),
            4 => Some(width::W1X | width::W4X),
            8 => Some(width::W8X),
            12 => Some(width::W1X | width::W4X | width::W12X),
            _ => None,
        };
        const ALL: u8 = speed::SDR | speed::DDR | speed::QDR;
        // (speed, ext (None = unchanged), fdr10)
        let spd: Option<(u8, Option<u8>, bool)> = match sp {
            "SDR" => Some((speed::SDR, None, false)),
            "DDR" => Some((speed::SDR | speed::DDR, None, false)),
            "QDR" => Some((ALL, None, false)),
            "FDR" => Some((ALL, Some(speed_ext::FDR), true)),
            "EDR" => Some((ALL, Some(speed_ext::FDR | speed_ext::EDR), true)),
            "HDR" => Some((
                ALL,
                Some(speed_ext::FDR | speed_ext::EDR | speed_ext::HDR),
                true,
            )),
            "NDR" => Some((
                ALL,
                Some(speed_ext::FDR | speed_ext::EDR | speed_ext::HDR | speed_ext::NDR),
                true,
            )),
            "FDR10" => Some((ALL, None, true)),
            _ => None,
        };
        match mask {
            Some(m) => self.nodes[node].ports[idx].width_enabled = m,
            None => self.note(format!("link width \"{w}x\" unknown, ignored")),
        }
        match spd {
            Some((s, e, f)) => {
                let p = &mut self.nodes[node].ports[idx];
                p.speed_enabled = s;
                if let Some(e) = e {
                    p.speed_ext_enabled = e;
                }
                if f {
                    p.fdr10_enabled = true;
                }
            }
            None => self.note(format!("link speed \"{sp}\" unknown, ignored")),
        }
    }

    fn paren_guid<'t>(&self, s: &'t str) -> Result<(Option<u64>, &'t str), TopologyError> {
        let Some(inner) = s.strip_prefix('(') else {
            return Ok((None, s));
        };
        let Some(close) = inner.find(')') else {
            return Err(self.err("GUID: missing ')'"));
        };
        let hex = inner[..close].trim();
        let hex = hex
            .strip_prefix("0x")
            .or_else(|| hex.strip_prefix("0X"))
            .unwrap_or(hex);
        let g = u64::from_str_radix(hex, 16).map_err(|_| {
            self.err(format!(
                "GUID \"{}\": expected up to 16 hex digits",
                &inner[..close]
            ))
        })?;
        Ok((Some(g), &inner[close + 1..]))
    }

    /// Resolve the declared ports into links (ibsim `connect_ports`).
    fn connect(mut self) -> Result<Topology, TopologyError> {
        let mut links = Vec::new();
        for ni in 0..self.nodes.len() {
            for idx in 0..self.decls[ni].len() {
                let Some(d) = self.decls[ni][idx].clone() else {
                    continue;
                };
                if self.nodes[ni].ports[idx].link.is_some() {
                    continue;
                }
                let pnum = (idx + 1) as u8;
                let here = self.nodes[ni].id.clone();
                let fail = |p: &Parser, msg: String| TopologyError::Syntax {
                    file: p.files[d.origin.file].clone(),
                    line: d.origin.line,
                    msg,
                    included_from: Vec::new(),
                };
                let Some(&ri) = self.index.get(&d.remote_id) else {
                    return Err(fail(
                        &self,
                        format!(
                            "\"{here}\" port {pnum}: remote node \"{}\" is not defined",
                            d.remote_id
                        ),
                    ));
                };
                let rn = &self.nodes[ri];
                if d.remote_port > rn.nports {
                    return Err(fail(
                        &self,
                        format!(
                            "\"{here}\" port {pnum}: remote port {} of \"{}\" does not exist \
                             (it has ports 1..{})",
                            d.remote_port, rn.id, rn.nports
                        ),
                    ));
                }
                if ri == ni && d.remote_port == pnum {
                    return Err(fail(
                        &self,
                        format!("\"{here}\" port {pnum} is connected to itself"),
                    ));
                }
                let ridx = usize::from(d.remote_port) - 1;
                let rport = &rn.ports[ridx];
                if let Some((on, op)) = rport.remote {
                    return Err(fail(
                        &self,
                        format!(
                            "\"{here}\" port {pnum}: \"{}\" port {} is already linked to \
                             \"{}\" port {op}",
                            rn.id, d.remote_port, self.nodes[on].id
                        ),
                    ));
                }
                let back = self.decls[ri][ridx].as_ref();
                match &d.via_alias {
                    Some(alias) => {
                        if let Some(b) = back {
                            return Err(fail(
                                &self,
                                format!(
                                    "\"{here}\" port {pnum}: alias \"{alias}\" names \"{}\" port \
                                     {}, which declares its own link at {} (an aliased port \
                                     must declare none)",
                                    rn.id,
                                    d.remote_port,
                                    self.at(b.origin)
                                ),
                            ));
                        }
                    }
                    None => match back {
                        None => {
                            return Err(fail(
                                &self,
                                format!(
                                    "\"{here}\" port {pnum} connects to \"{}\" port {}, but \
                                     that port declares no link (ibsim requires both ends to \
                                     name each other; use an @alias for a one-sided link)",
                                    rn.id, d.remote_port
                                ),
                            ))
                        }
                        Some(b) if b.remote_id != here || b.remote_port != pnum => {
                            return Err(fail(
                                &self,
                                format!(
                                    "\"{here}\" port {pnum} connects to \"{}\" port {}, but \
                                     {} declares that port connected to \"{}\" port {}",
                                    rn.id,
                                    d.remote_port,
                                    self.at(b.origin),
                                    b.remote_id,
                                    b.remote_port
                                ),
                            ))
                        }
                        Some(_) => {}
                    },
                }
                let a = &self.nodes[ni].ports[idx];
                let b = &self.nodes[ri].ports[ridx];
                let common_w = a.width_enabled & b.width_enabled;
                let Some(w) = [width::W12X, width::W8X, width::W4X, width::W2X, width::W1X]
                    .into_iter()
                    .find(|bit| common_w & bit != 0)
                else {
                    return Err(fail(
                        &self,
                        format!(
                            "\"{here}\" port {pnum} (width mask {}) and \"{}\" port {} (width \
                             mask {}) enable no common link width",
                            a.width_enabled, self.nodes[ri].id, d.remote_port, b.width_enabled
                        ),
                    ));
                };
                let common_s = a.speed_enabled & b.speed_enabled;
                let Some(s) = [speed::QDR, speed::DDR, speed::SDR]
                    .into_iter()
                    .find(|bit| common_s & bit != 0)
                else {
                    return Err(fail(
                        &self,
                        format!(
                            "\"{here}\" port {pnum} (speed mask {}) and \"{}\" port {} (speed \
                             mask {}) enable no common link speed",
                            a.speed_enabled, self.nodes[ri].id, d.remote_port, b.speed_enabled
                        ),
                    ));
                };
                let common_e = a.speed_ext_enabled & b.speed_ext_enabled;
                let e = [
                    speed_ext::NDR,
                    speed_ext::HDR,
                    speed_ext::EDR,
                    speed_ext::FDR,
                ]
                .into_iter()
                .find(|bit| common_e & bit != 0)
                .unwrap_or(speed_ext::NONE);
                let fdr10 = a.fdr10_enabled && b.fdr10_enabled;
                let li = links.len();
                links.push(TLink {
                    a: (ni, pnum),
                    b: (ri, d.remote_port),
                    width: w,
                    speed: s,
                    speed_ext: e,
                    fdr10,
                });
                let pa = &mut self.nodes[ni].ports[idx];
                pa.remote = Some((ri, d.remote_port));
                pa.link = Some(li);
                let pb = &mut self.nodes[ri].ports[ridx];
                pb.remote = Some((ni, pnum));
                pb.link = Some(li);
            }
        }
        Ok(Topology {
            nodes: self.nodes,
            links,
            files: self.files,
            console: self.console,
            notes: self.notes,
            index: self.index,
        })
    }
}

// ---------------------------------------------------------------------------
// Lexical helpers

/// A C `strtoul(s, _, 0)` number after optional blanks: `0x` hex, leading `0`
/// octal, else decimal. Unlike C, no digits or overflow is an error.
fn c_number(s: &str) -> Result<(u64, &str), String> {
    let s = s.trim_start();
    let (radix, body) = if let Some(h) = s.strip_prefix("0x").or_else(|| s.strip_prefix("0X")) {
        if h.starts_with(|c: char| c.is_ascii_hexdigit()) {
            (16, h)
        } else {
            (10, s)
        }
    } else if s.starts_with('0') {
        (8, s)
    } else {
        (10, s)
    };
    let end = body
        .find(|c: char| !c.is_digit(radix))
        .unwrap_or(body.len());
    if end == 0 {
        let shown: String = s.chars().take(12).collect();
        return Err(format!("expected a number, found \"{shown}\""));
    }
    let v = u64::from_str_radix(&body[..end], radix)
        .map_err(|_| format!("number \"{}\" is too large", &body[..end]))?;
    Ok((v, &body[end..]))
}

/// `"text"` at the start of `s` (after blanks) → (text, rest after the quote).
fn quoted(s: &str) -> Option<(&str, &str)> {
    let s = s.trim_start().strip_prefix('"')?;
    let end = s.find('"')?;
    Some((&s[..end], &s[end + 1..]))
}

/// `[<decimal>]` at the start of `s`.
fn bracket_number(s: &str) -> Option<(u64, &str)> {
    let s = s.strip_prefix('[')?;
    let end = s.find(|c: char| !c.is_ascii_digit()).unwrap_or(s.len());
    if end == 0 || !s[end..].starts_with(']') {
        return None;
    }
    let v = s[..end].parse::<u64>().ok()?;
    Some((v, &s[end + 1..]))
}

/// Skip ibnetdiscover's `[ext N]` chassis port mapping.
fn skip_ext(s: &str) -> &str {
    if let Some(r) = s.strip_prefix("[ext ") {
        if let Some(close) = r.find(']') {
            return &r[close + 1..];
        }
    }
    s
}

/// The number after the first whole word `kw` in `s`, if `kw` occurs.
fn word_number(s: &str, kw: &str) -> Result<Option<u64>, String> {
    let mut from = 0;
    while let Some(pos) = s[from..].find(kw) {
        let start = from + pos;
        let end = start + kw.len();
        let before_ok = s[..start]
            .chars()
            .next_back()
            .map_or(true, |c| !c.is_alphanumeric());
        let after_ok = s[end..].starts_with([' ', '\t']);
        if before_ok && after_ok {
            return c_number(&s[end..])
                .map(|(v, _)| Some(v))
                .map_err(|e| format!("{kw}: {e}"));
        }
        from = end;
    }
    Ok(None)
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn dir() -> PathBuf {
        PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../tests/topologies")
    }

    fn load(name: &str) -> Topology {
        match Topology::load(dir().join(name)) {
            Ok(t) => t,
            Err(e) => panic!("{name}: {e}"),
        }
    }

    fn parse(text: &str) -> Result<Topology, TopologyError> {
        Topology::parse(text, Path::new("t.net"))
    }

    fn msg(text: &str) -> String {
        match parse(text) {
            Ok(_) => panic!("expected an error for:\n{text}"),
            Err(e) => e.to_string(),
        }
    }

    /// `text` must fail to parse with a message starting with `prefix`
    /// (which names the file and line).
    fn expect_err(text: &str, prefix: &str) -> String {
        let e = msg(text);
        assert!(e.starts_with(prefix), "expected {prefix:?}…, got: {e}");
        e
    }

    /// Links as ((id, port), (id, port)) with the ends in a canonical order.
    fn link_set(t: &Topology) -> Vec<((String, u8), (String, u8))> {
        let mut v: Vec<_> = t
            .links
            .iter()
            .map(|l| {
                let a = (t.nodes[l.a.0].id.clone(), l.a.1);
                let b = (t.nodes[l.b.0].id.clone(), l.b.1);
                if a <= b {
                    (a, b)
                } else {
                    (b, a)
                }
            })
            .collect();
        v.sort();
        v
    }

    fn l(a: &str, ap: u8, b: &str, bp: u8) -> ((String, u8), (String, u8)) {
        ((a.to_string(), ap), (b.to_string(), bp))
    }

    /// Counts per example, obtained independently with the shell in
    /// tests/topologies: `grep -c '^Switch' F` (switches), `grep -c '^Hca' F`
    /// (CAs), `grep -c '^\[' F` (port lines; every link is written on both
    /// ends, so links = port lines / 2), and the link list read off the
    /// switch records by eye.
    #[test]
    fn ibsim_examples_load_unchanged() {
        // (file, switches, CAs, port lines, links)
        let counts = [
            (
                "net",
                2,
                2,
                8,
                vec![
                    l("Hca1", 1, "Switch1", 1),
                    l("Hca2", 2, "Switch1", 2),
                    l("Switch1", 3, "Switch2", 3),
                    l("Switch1", 4, "Switch2", 4),
                ],
            ),
            (
                "net.1",
                1,
                2,
                4,
                vec![l("Hca1", 1, "Switch1", 1), l("Hca2", 1, "Switch1", 4)],
            ),
            (
                "net.2sw2path",
                2,
                2,
                8,
                vec![
                    l("Hca1", 1, "Switch1", 1),
                    l("Hca2", 1, "Switch2", 1),
                    l("Switch1", 3, "Switch2", 3),
                    l("Switch1", 5, "Switch2", 5),
                ],
            ),
            (
                "net.2sw2path4hca",
                2,
                4,
                12,
                vec![
                    l("Hca1", 1, "Switch1", 1),
                    l("Hca2", 1, "Switch2", 1),
                    l("Hca3", 1, "Switch1", 2),
                    l("Hca4", 1, "Switch2", 2),
                    l("Switch1", 3, "Switch2", 3),
                    l("Switch1", 5, "Switch2", 5),
                ],
            ),
            (
                "net.2sw2path4hca2port",
                2,
                2,
                12,
                vec![
                    l("Hca1", 1, "Switch1", 1),
                    l("Hca1", 2, "Switch1", 2),
                    l("Hca2", 1, "Switch2", 1),
                    l("Hca2", 2, "Switch2", 2),
                    l("Switch1", 3, "Switch2", 3),
                    l("Switch1", 5, "Switch2", 5),
                ],
            ),
        ];
        for (name, sw, ca, port_lines, links) in counts {
            let t = load(name);
            let nsw = t
                .nodes
                .iter()
                .filter(|n| n.kind == NodeKind::Switch)
                .count();
            let nca = t.nodes.iter().filter(|n| n.kind == NodeKind::Ca).count();
            assert_eq!((nsw, nca), (sw, ca), "{name}: node counts");
            let declared = t
                .nodes
                .iter()
                .flat_map(|n| &n.ports)
                .filter(|p| p.origin.is_some())
                .count();
            assert_eq!(declared, port_lines, "{name}: port lines");
            assert_eq!(t.links.len(), port_lines / 2, "{name}: links");
            assert_eq!(link_set(&t), links, "{name}: link list");
            // Every switch in the examples is "Switch 8", every CA "Hca 2".
            for n in &t.nodes {
                let want = if n.kind == NodeKind::Switch { 8 } else { 2 };
                assert_eq!(n.nports, want, "{name}: {}", n.id);
                assert_eq!(n.description, n.id, "{name}: no desc → id");
            }
            assert!(t.console.is_empty() && t.notes.is_empty());
            // The first node in each example is Switch1: ibsim's default port.
            assert_eq!(t.default_port(), Some((0, 0)));
            assert_eq!(t.nodes[0].id, "Switch1");
            // Both ends see each other.
            for (i, lk) in t.links.iter().enumerate() {
                assert_eq!(t.remote(lk.a.0, lk.a.1), Some(lk.b));
                assert_eq!(t.remote(lk.b.0, lk.b.1), Some(lk.a));
                assert_eq!(t.nodes[lk.a.0].port(lk.a.1).unwrap().link, Some(i));
                // ibsim defaults: 4x enabled on both ends, SDR → 4x SDR.
                assert_eq!(
                    (lk.width, lk.speed, lk.speed_ext),
                    (width::W4X, speed::SDR, 0)
                );
            }
        }
    }

    /// ibspec §10: switches from 0x200000 one GUID each (PortGUID =
    /// NodeGUID); CAs from 0x100000 taking nports+1 GUIDs (PortGUID =
    /// NodeGUID + port). `net` declares Switch1, Switch2, Hca1, Hca2 (2 ports
    /// each) in that order.
    #[test]
    fn guid_defaults_follow_ibsim() {
        let t = load("net");
        let g = |id: &str| t.node(id).unwrap();
        assert_eq!(g("Switch1").node_guid, 0x200000);
        assert_eq!(g("Switch2").node_guid, 0x200001);
        assert_eq!(g("Hca1").node_guid, 0x100000);
        assert_eq!(g("Hca1").port_guids, vec![0x100001, 0x100002]);
        assert_eq!(g("Hca2").node_guid, 0x100003);
        assert_eq!(g("Hca2").port_guid(2), Some(0x100005));
        assert_eq!(g("Hca2").port_guid(0), None);
        assert_eq!(g("Switch2").port_guids, vec![0x200001]);
        assert_eq!(g("Switch2").port_guid(0), Some(0x200001));
        assert_eq!(g("Switch2").port_guid(8), Some(0x200001));
        assert_eq!(g("Switch2").port_guid(9), None);
        for n in &t.nodes {
            assert_eq!(n.sys_image_guid, n.node_guid);
            assert_eq!((n.vendor_id, n.device_id), (0, 0));
        }
    }

    #[test]
    fn guid_bases_absolute_and_relative() {
        let t = parse(concat!(
            "switchguid=0x1000\n",
            "Switch 4 \"A\"\n\n",
            "switchguid+0x10\n",
            "Switch 4 \"B\"\n\n",
            "caguid=0x500\n",
            "Ca 3 \"C\"\n\n",
            "hcaguids+8\n",
            "Hca 1 \"D\"\n\n",
            "Ca 1 \"E\"\n\n",
            "rtguid=0x900\n",
            "Rt 2 \"R\"\n",
        ))
        .unwrap();
        let g: Vec<u64> = t.nodes.iter().map(|n| n.node_guid).collect();
        // B: relative to the last absolute base 0x1000; E: D took 1+1 GUIDs.
        assert_eq!(g, vec![0x1000, 0x1010, 0x500, 0x508, 0x50a, 0x900]);
        assert_eq!(t.nodes[5].kind, NodeKind::Router);
        assert_eq!(t.nodes[5].port_guids, vec![0x901, 0x902]);
    }

    #[test]
    fn ibnetdiscover_style_records() {
        let text = concat!(
            "#\n# Topology file: generated on Tue Jan 1 00:00:00 2030\n#\n",
            "vendid=0x2c9\n",
            "devid=0xc738\n",
            "sysimgguid=0x7cfe900300a5a2c0\n",
            "switchguid=0x7cfe900300a5a2c0(7cfe900300a5a2c0)\n",
            "Switch\t36 \"S-7cfe900300a5a2c0\"\t\t# \"MF0;sw1:MSB7700/U1\" enhanced port 0 lid 3 lmc 0\n",
            "[1]\t\"H-248a070300f0f0b0\"[1](248a070300f0f0b1) \t\t# \"node1 HCA-1\" lid 5 4xEDR\n",
            "\n",
            "vendid=0x2c9\n",
            "devid=0x1013\n",
            "sysimgguid=0x248a070300f0f0b0\n",
            "caguid=0x248a070300f0f0b0\n",
            "Ca\t1 \"H-248a070300f0f0b0\"\t\t# \"node1 HCA-1\"\n",
            "[1](248a070300f0f0b1) \t\"S-7cfe900300a5a2c0\"[1]\t\t# lid 5 lmc 1 \"MF0;sw1:MSB7700/U1\" lid 3 4xEDR\n",
        );
        let t = parse(text).unwrap();
        let sw = t.node("S-7cfe900300a5a2c0").unwrap();
        assert_eq!(sw.node_guid, 0x7cfe900300a5a2c0);
        assert_eq!((sw.vendor_id, sw.device_id), (0x2c9, 0xc738));
        assert_eq!(sw.description, "MF0;sw1:MSB7700/U1");
        assert_eq!(
            sw.port0,
            Some(Port0 {
                enhanced: Some(true),
                lid: Some(3),
                lmc: Some(0)
            })
        );
        let ca = t.node("H-248a070300f0f0b0").unwrap();
        assert_eq!(ca.node_guid, 0x248a070300f0f0b0);
        assert_eq!(ca.port_guid(1), Some(0x248a070300f0f0b1));
        assert_eq!(ca.description, "node1 HCA-1");
        let p = ca.port(1).unwrap();
        assert_eq!((p.lid, p.lmc), (Some(5), Some(1)));
        assert_eq!(p.declared_guid, Some(0x248a070300f0f0b1));
        // 4xEDR: width 1x|4x, speeds SDR|DDR|QDR, ext FDR|EDR, FDR10.
        assert_eq!(p.width_enabled, width::W1X | width::W4X);
        assert_eq!(p.speed_ext_enabled, speed_ext::FDR | speed_ext::EDR);
        assert_eq!(t.links.len(), 1);
        let lk = t.links[0];
        assert_eq!(
            (lk.width, lk.speed, lk.speed_ext, lk.fdr10),
            (width::W4X, speed::QDR, speed_ext::EDR, true)
        );
        // Switch port lines carry no own LID.
        assert_eq!(sw.port(1).unwrap().lid, None);
    }

    #[test]
    fn vendid_and_sysimgguid_apply_to_one_node_devid_stays() {
        let t = parse(concat!(
            "vendid=0x2c9\ndevid=7\nsysimgguid=0xabc\n",
            "Switch 1 \"A\"\n\n",
            "Switch 1 \"B\"\n",
        ))
        .unwrap();
        assert_eq!(
            (t.nodes[0].vendor_id, t.nodes[0].sys_image_guid),
            (0x2c9, 0xabc)
        );
        assert_eq!(
            (t.nodes[1].vendor_id, t.nodes[1].sys_image_guid),
            (0, 0x200001)
        );
        assert_eq!((t.nodes[0].device_id, t.nodes[1].device_id), (7, 7));
    }

    #[test]
    fn options_aliases_modules_console() {
        let t = parse(concat!(
            "width=3\n",
            "do Link \"S\" 1\n",
            "Switch 4 \"S\"\n",
            "@[2] \"up\"\n",
            "[1] \"C\"[1] w=1 s=0\n",
            "\n",
            "Ca 2 \"C\"\n",
            "[1] \"S\"[1] w=1 s=5\n",
            "[2] \"@up\"\n",
            "\n",
            "module=\"m\"\n",
            "Switch 2 \"S\"\n",
            "[1] \"S\"[2]\n",
            "[2] \"S\"[1]\n",
        ))
        .unwrap();
        assert_eq!(t.console.len(), 1);
        assert_eq!(t.console[0].command, "Link \"S\" 1");
        assert_eq!(t.console[0].origin.line, 2);
        let s = t.node("S").unwrap();
        assert_eq!(s.port(1).unwrap().speed_enabled, speed::QDR);
        assert_eq!(s.port(2).unwrap().alias.as_deref(), Some("@up"));
        let c = t.node("C").unwrap();
        assert_eq!(c.port(2).unwrap().width_enabled, 3, "width= default");
        // C port 2 reaches S port 2 through the alias, declared on one side.
        assert_eq!(t.remote(1, 2), Some((0, 2)));
        assert_eq!(t.remote(0, 2), Some((1, 2)));
        // S1–C1: w=1 both ends; S enables QDR only (s=0), C SDR|QDR (s=5).
        let lk = t.links[t.node("S").unwrap().port(1).unwrap().link.unwrap()];
        assert_eq!((lk.width, lk.speed), (width::W1X, speed::QDR));
        let m = t.node("m#S").unwrap();
        assert_eq!(m.node_guid, 0x200001);
        assert_eq!(t.remote(2, 1), Some((2, 2)));
        assert_eq!(t.links.len(), 3);
    }

    #[test]
    fn error_one_sided_link_names_the_line() {
        let e = expect_err(
            "Switch 2 \"S\"\n[1] \"C\"[1]\n\nCa 1 \"C\"\n",
            "t.net:2: \"S\" port 1 connects to \"C\" port 1",
        );
        assert!(e.contains("declares no link"), "{e}");
    }

    #[test]
    fn error_inconsistent_ends_name_both_lines() {
        let e = expect_err(
            "Switch 2 \"S\"\n[1] \"C\"[1]\n\nCa 2 \"C\"\n[1] \"S\"[2]\n",
            "t.net:2: ",
        );
        assert!(
            e.contains("t.net:5 declares that port connected to \"S\" port 2"),
            "{e}"
        );
    }

    #[test]
    fn error_header_and_port_syntax() {
        expect_err(
            "# c\nSwitch x \"S\"\n",
            "t.net:2: Switch: port count: expected a number",
        );
        expect_err(
            "Switch 8 \"S\"\n[9] \"C\"[1]\n",
            "t.net:2: port 9: \"S\" has ports 1..8",
        );
        expect_err(
            "Switch 8 \"S\"\n[0] \"C\"[1]\n",
            "t.net:2: port 0 cannot have a port line",
        );
        expect_err(
            "Switch 8 S\n",
            "t.net:1: Switch 8: expected the quoted node id",
        );
        expect_err(
            "Switch 8 \"S\"\n[1] \"C\" [2]\n",
            "t.net:2: port line: the remote port must follow",
        );
        expect_err(
            "Switch 8 \"S\"\n[1] \"C\"[1] w=99\n",
            "t.net:2: link width mask 99: expected 1..31",
        );
        expect_err(
            "Switch 8 \"S\"\n[1] \"C\"[1] 4x\n",
            "t.net:2: port line: unexpected \"4x\"",
        );
        expect_err(
            "Switch 8 \"S\" # \"d\" lid 70000\n",
            "t.net:1: lid 70000: a LID is 16 bits",
        );
        expect_err("speed=9\n", "t.net:1: speed=9: expected 1..7");
        expect_err("vendid=\n", "t.net:1: vendid=: expected a number");
        expect_err(
            "Hca 1 \"a#b\"\n",
            "t.net:1: node id \"a#b\": '#' and '@' are reserved",
        );
    }

    #[test]
    fn error_record_boundaries() {
        // A node line right after a record: ibsim would swallow it.
        expect_err(
            "Switch 2 \"S\"\nCa 1 \"C\"\n",
            "t.net:2: this line ends the record of \"S\"",
        );
        // More port lines than ports: the extra one is outside any record.
        expect_err(
            "Ca 1 \"C\"\n[1] \"S\"[1]\n[1] \"S\"[2]\n",
            "t.net:3: port line outside a node record",
        );
        expect_err(
            "Switch 2 \"S\"\n[1] \"C\"[1]\n[1] \"C\"[2]\n",
            "t.net:3: port 1 of \"S\" already declared at t.net:2",
        );
        expect_err(
            "\n  Switch 2 \"S\"\n",
            "t.net:2: indented node or port line",
        );
        // A line that is nothing ibsim knows, at the top or ending a record.
        expect_err("foo bar\n", "t.net:1: \"foo bar\" is not a topology line");
        expect_err(
            "Ca 1 \"C\"\nfoo\n",
            "t.net:2: \"foo\" is not a topology line",
        );
        // Comments after blanks are comments.
        parse("  # note\nCa 1 \"C\"\n\t# note\n").unwrap();
        expect_err(
            "Ca 1 \"C\"\n\nCa 1 \"C\"\n",
            "t.net:3: node id \"C\" already defined at t.net:1",
        );
    }

    #[test]
    fn error_links() {
        expect_err(
            "Ca 1 \"C\"\n[1] \"X\"[1]\n",
            "t.net:2: \"C\" port 1: remote node \"X\" is not defined",
        );
        expect_err(
            "Ca 1 \"C\"\n[1] \"D\"[3]\n\nCa 2 \"D\"\n",
            "t.net:2: \"C\" port 1: remote port 3 of \"D\" does not exist",
        );
        expect_err(
            "Switch 2 \"S\"\n[1] \"S\"[1]\n",
            "t.net:2: \"S\" port 1 is connected to itself",
        );
        expect_err(
            "Ca 1 \"C\"\n[1] \"@nope\"\n",
            "t.net:2: unknown alias \"@nope\"",
        );
        // C enables SDR only (default), S QDR only (s=0): no common speed.
        expect_err(
            "Switch 2 \"S\"\n[1] \"C\"[1] s=0\n\nCa 1 \"C\"\n[1] \"S\"[1]\n",
            "t.net:2: \"S\" port 1 (speed mask 4)",
        );
        // A one-sided alias port may not also declare a link.
        expect_err(
            "Switch 2 \"S\"\n@[1] \"a\"\n[1] \"C\"[1]\n\nCa 1 \"C\"\n[1] \"@a\"\n",
            "t.net:3: port 1 of \"S\" already declared at t.net:2",
        );
    }

    #[test]
    fn includes_resolve_relative_and_report_chains() {
        let d = tempfile::tempdir().unwrap();
        let sub = d.path().join("sub");
        std::fs::create_dir(&sub).unwrap();
        std::fs::write(sub.join("cas.net"), "Ca 1 \"C\"\n[1] \"S\"[1]\n").unwrap();
        std::fs::write(
            d.path().join("top.net"),
            "Switch 2 \"S\"\n[1] \"C\"[1]\n\ninclude \"sub/cas.net\"\n",
        )
        .unwrap();
        let t = Topology::load(d.path().join("top.net")).unwrap();
        assert_eq!(t.files.len(), 2);
        assert_eq!(t.links.len(), 1);
        let c = t.node("C").unwrap();
        assert_eq!(
            t.at(c.origin),
            format!("{}:1", sub.join("cas.net").display())
        );

        // An error inside the included file names it and the include line.
        std::fs::write(sub.join("bad.net"), "# x\nCa 0 \"C\"\n").unwrap();
        std::fs::write(d.path().join("top2.net"), "\n\ninclude \"sub/bad.net\"\n").unwrap();
        let e = Topology::load(d.path().join("top2.net"))
            .unwrap_err()
            .to_string();
        let want = format!(
            "{}:2: Ca: port count 0: expected 1..255 (included from {}:3)",
            sub.join("bad.net").display(),
            d.path().join("top2.net").display()
        );
        assert_eq!(e, want);

        // Cycles and missing files.
        std::fs::write(d.path().join("loop.net"), "include \"loop.net\"\n").unwrap();
        let e = Topology::load(d.path().join("loop.net"))
            .unwrap_err()
            .to_string();
        assert!(e.contains(":1: include \"loop.net\": include cycle"), "{e}");
        let e = Topology::load(d.path().join("none.net")).unwrap_err();
        assert!(matches!(e, TopologyError::Io { .. }), "{e}");
        expect_err(
            "include \"does/not/exist\"\n",
            "t.net:1: include: cannot read",
        );
    }

    /// Run the real ibsim (Debian `ibsim-utils`) on `file` and return its
    /// console `Dump`; `None` when ibsim is not installed.
    fn ibsim_dump(file: &Path) -> Option<String> {
        use std::io::Write;
        use std::process::{Command, Stdio};
        use std::sync::atomic::{AtomicU32, Ordering};
        static N: AtomicU32 = AtomicU32::new(0);
        let sock = format!(
            "vl15topo{}_{}",
            std::process::id(),
            N.fetch_add(1, Ordering::Relaxed)
        );
        let mut child = Command::new("timeout")
            .args(["30", "ibsim", "-s"])
            .arg(file.file_name()?)
            .current_dir(file.parent()?)
            .env("IBSIM_SOCKNAME", sock)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .ok()?;
        child.stdin.take()?.write_all(b"Dump\nquit\n").ok()?;
        let out = child.wait_with_output().ok()?;
        if out.status.code() == Some(127) {
            return None; // ibsim not installed
        }
        Some(String::from_utf8_lossy(&out.stdout).into_owned())
    }

    /// Compare a parsed topology with ibsim's own `Dump` of the same file:
    /// node kinds, port counts, NodeGUIDs, SystemImageGUIDs, PortGUIDs, the
    /// remote end of every port, active width/speed of every link, CA port
    /// LID/LMC and switch port-0 LID/LMC.
    fn compare_with_ibsim(t: &Topology, dump: &str) -> Result<usize, String> {
        let mut node: Option<&TNode> = None;
        let mut seen_nodes = 0;
        for line in dump.lines() {
            let line = line.trim_start_matches("sim> ");
            let head = line.split_whitespace().next().unwrap_or("");
            if matches!(head, "Switch" | "Ca" | "Router") && line.contains("nodeguid") {
                let q = line.find('"').unwrap_or(0);
                let (id, _) = quoted(&line[q..]).ok_or(format!("no id: {line}"))?;
                let n = t
                    .node(id)
                    .ok_or(format!("ibsim has node {id}, we do not"))?;
                let words: Vec<&str> = line.split_whitespace().collect();
                let num = |key: &str| {
                    let i = words.iter().position(|w| *w == key).unwrap_or(0);
                    u64::from_str_radix(words.get(i + 1).unwrap_or(&""), 16).unwrap_or(!0)
                };
                let kind = match head {
                    "Switch" => NodeKind::Switch,
                    "Ca" => NodeKind::Ca,
                    _ => NodeKind::Router,
                };
                // ibsim's Dump prints `node->sysguid`, which is always the
                // NodeGUID; the SystemImageGUID it answers in NodeInfo (ours) is
                // the `sysimgguid=` value (sim_net.c new_node, sim_mad.c
                // do_nodeinfo).
                if (
                    n.kind,
                    n.nports.to_string().as_str(),
                    n.node_guid,
                    n.node_guid,
                ) != (kind, words[1], num("nodeguid"), num("sysimgguid"))
                {
                    return Err(format!("node line differs: {line} vs {n:?}"));
                }
                node = Some(n);
                seen_nodes += 1;
                continue;
            }
            let Some(n) = node else { continue };
            let cols: Vec<&str> = line.split('\t').collect();
            if cols.len() < 4 || !cols[1].starts_with('[') {
                continue;
            }
            let guid = u64::from_str_radix(cols[0], 16).map_err(|_| format!("guid: {line}"))?;
            let (p, _) = bracket_number(cols[1]).ok_or(format!("port: {line}"))?;
            let p = p as u8;
            if n.port_guid(p) != Some(guid) {
                return Err(format!(
                    "{} port {p}: PortGUID {guid:#x} vs ours {:?}",
                    n.id,
                    n.port_guid(p)
                ));
            }
            let stats: Vec<&str> = cols[cols.len() - 1].split_whitespace().collect();
            let after = |k: &str| {
                stats
                    .iter()
                    .position(|w| *w == k)
                    .and_then(|i| stats.get(i + 1))
                    .and_then(|v| v.parse::<u64>().ok())
            };
            if p == 0 {
                let p0 = n.port0.unwrap_or_default();
                let ours = (
                    u64::from(p0.lid.unwrap_or(0)),
                    u64::from(p0.lmc.unwrap_or(0)),
                );
                if (after("lid"), after("lmc")) != (Some(ours.0), Some(ours.1)) {
                    return Err(format!("{} port 0 lid/lmc: {line} vs {p0:?}", n.id));
                }
                continue;
            }
            let port = n.port(p).ok_or(format!("{} has no port {p}", n.id))?;
            if n.kind == NodeKind::Ca {
                let ours = (
                    u64::from(port.lid.unwrap_or(0)),
                    u64::from(port.lmc.unwrap_or(0)),
                );
                if (after("lid"), after("lmc")) != (Some(ours.0), Some(ours.1)) {
                    return Err(format!("{} port {p} lid/lmc: {line} vs {port:?}", n.id));
                }
            }
            let theirs = quoted(cols[2]).and_then(|(id, rest)| {
                bracket_number(rest).map(|(rp, _)| (id.to_string(), rp as u8))
            });
            let ours = port.remote.map(|(ri, rp)| (t.nodes[ri].id.clone(), rp));
            if theirs != ours {
                return Err(format!(
                    "{} port {p}: ibsim {theirs:?}, ours {ours:?}",
                    n.id
                ));
            }
            if let Some(li) = port.link {
                let lk = t.links[li];
                let w = match lk.width {
                    width::W1X => "1x",
                    width::W2X => "2x",
                    width::W4X => "4x",
                    width::W8X => "8x",
                    _ => "12x",
                };
                let sp = match lk.speed {
                    speed::SDR => "2.5G",
                    speed::DDR => "5.0G",
                    _ => "10.0G",
                };
                let theirs: Vec<&str> = stats.iter().rev().skip(1).take(2).rev().copied().collect();
                if lk.speed_ext == 0 && !lk.fdr10 && theirs != [w, sp] {
                    return Err(format!(
                        "{} port {p}: ibsim {theirs:?}, ours {w} {sp}",
                        n.id
                    ));
                }
            }
        }
        if seen_nodes != t.nodes.len() {
            return Err(format!(
                "ibsim dumped {seen_nodes} nodes, we have {}",
                t.nodes.len()
            ));
        }
        Ok(seen_nodes)
    }

    /// Side by side with the real ibsim, when installed (Debian
    /// `ibsim-utils`): every example plus hand-written files exercising GUID
    /// bases, ibnetdiscover records, aliases, modules, options and includes.
    #[test]
    fn matches_real_ibsim() {
        let d = tempfile::tempdir().unwrap();
        let mut files: Vec<PathBuf> = [
            "net",
            "net.1",
            "net.2sw2path",
            "net.2sw2path4hca",
            "net.2sw2path4hca2port",
        ]
        .iter()
        .map(|n| dir().join(n))
        .collect();
        let extra: &[(&str, &str)] = &[
            (
                "guids.net",
                concat!(
                "switchguid=0x1000\nSwitch 4 \"A\"\n[1] \"C\"[2]\n\n",
                "switchguid+0x10\nvendid=0x2c9\nsysimgguid=0x77\nSwitch 4 \"B\"\n[1] \"D\"[1]\n\n",
                "caguid=0x500\nCa 3 \"C\"\n[2] \"A\"[1]\n\n",
                "hcaguids+8\nHca 1 \"D\"\n[1] \"B\"[1]\n\n",
                "Ca 1 \"E\"\n\nrtguid=0x900\nRt 2 \"R\"\n",
            ),
            ),
            (
                "idisc.net",
                concat!(
                    "module=\"m\"\n",
                    "switchguid=0x7cfe900300a5a2c0(7cfe900300a5a2c0)\n",
                    "Switch\t36 \"S-1\"\t\t# \"MF0;sw1\" enhanced port 0 lid 3 lmc 0\n",
                    "[1]\t\"H-1\"[1](248a070300f0f0b1) \t\t# \"node1 HCA-1\" lid 5 4xQDR\n",
                    "[2]\t\"H-1\"[2](248a070300f0f0b2) \t\t# \"node1 HCA-1\" lid 5 1xDDR\n",
                    "\ncaguid=0x248a070300f0f0b0\n",
                    "Ca\t2 \"H-1\"\t\t# \"node1 HCA-1\"\n",
                    "[1](248a070300f0f0b1) \t\"S-1\"[1]\t\t# lid 5 lmc 1 \"MF0;sw1\" lid 3 4xQDR\n",
                    "[2](248a070300f0f0b2) \t\"S-1\"[2]\t\t# lid 6 lmc 0 \"MF0;sw1\" lid 3 1xDDR\n",
                ),
            ),
            (
                "alias.net",
                concat!(
                    "width=3\nSwitch 4 \"S\"\n@[2] \"up\"\n[1] \"C\"[1] w=1 s=4\n\n",
                    "Ca 2 \"C\"\n[1] \"S\"[1] w=1 s=5\n[2] \"@up\"\n\n",
                    "include \"inc.net\"\n",
                ),
            ),
            ("inc.net", "Switch 2 \"T\"\n[1] \"T\"[2]\n[2] \"T\"[1]\n"),
        ];
        for (name, text) in extra {
            std::fs::write(d.path().join(name), text).unwrap();
            if *name != "inc.net" {
                files.push(d.path().join(name));
            }
        }
        for f in files {
            let t = Topology::load(&f).unwrap_or_else(|e| panic!("{e}"));
            let dump = ibsim_dump(&f).expect(
                "ibsim is not installed: run `make deps` (it installs ibsim-utils; CI does)",
            );
            match compare_with_ibsim(&t, &dump) {
                Ok(n) => assert_eq!(n, t.nodes.len()),
                Err(e) => panic!("{}: {e}\n--- ibsim dump ---\n{dump}", f.display()),
            }
        }
    }

    fn example_texts() -> Vec<String> {
        [
            "net",
            "net.1",
            "net.2sw2path",
            "net.2sw2path4hca",
            "net.2sw2path4hca2port",
        ]
        .iter()
        .map(|n| std::fs::read_to_string(dir().join(n)).unwrap())
        .collect()
    }

    /// Pieces of the grammar, for token soups that reach deep into the parser.
    const VOCAB: &[&str] = &[
        "Switch",
        "Hca",
        "Ca",
        "Rt",
        " ",
        "\t",
        "\n",
        "\n\n",
        "\"",
        "\"S\"",
        "\"C\"",
        "[",
        "]",
        "[1]",
        "[2]",
        "[0]",
        "(",
        ")",
        "(1a2b)",
        "#",
        "@",
        "@[1]",
        "\"@a\"",
        "\"a\"",
        "lid",
        "lmc",
        " 3",
        " 0x10",
        "4xQDR",
        "12xEDR",
        "2xNDR",
        "w=",
        "s=",
        "e=",
        "=",
        "+",
        "switchguid",
        "caguid",
        "rtguid",
        "vendid",
        "devid",
        "sysimgguid",
        "width",
        "speed",
        "extspeed",
        "module",
        "include",
        "do",
        "enhanced port 0",
        "base port 0",
        "0",
        "1",
        "8",
        "255",
        "256",
        "99999999999999999999999",
        "[ext 3]",
        "é",
        "\r",
        "\"m#S\"",
        "m@a",
    ];

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(512))]

        #[test]
        fn arbitrary_text_never_panics(text in any::<String>()) {
            let _ = parse(&text);
        }

        #[test]
        fn token_soup_never_panics(toks in proptest::collection::vec(0..VOCAB.len(), 0..80)) {
            let text: String = toks.iter().map(|&i| VOCAB[i]).collect();
            let _ = parse(&text);
        }

        #[test]
        fn mutated_examples_never_panic(
            which in 0usize..5,
            edits in proptest::collection::vec((0u8..4, any::<prop::sample::Index>(), 0..VOCAB.len(), any::<char>()), 1..6),
        ) {
            let mut chars: Vec<char> = example_texts()[which].chars().collect();
            for (op, at, tok, c) in edits {
                let i = at.index(chars.len() + 1);
                match op {
                    0 => { chars.insert(i, c); }
                    1 => { if i < chars.len() { chars.remove(i); } }
                    2 => { for (k, t) in VOCAB[tok].chars().enumerate() { chars.insert(i + k, t); } }
                    _ => { if i < chars.len() { chars[i] = c; } }
                }
            }
            let text: String = chars.into_iter().collect();
            if let Err(e) = parse(&text) {
                // Every error names the file and a line.
                prop_assert!(e.to_string().starts_with("t.net:"), "{}", e);
            }
        }
    }
}
