//! The state file: what `vl15 sim --dump-state` writes (every node's
//! GUID, description, type and ports, every switch's LFT, as the RTL
//! registers hold them) and `vl15 routes` reads.
//!
//! ```json
//! {"nodes": [{"id": "Switch1", "guid": "0x0000000000200000",
//!             "description": "Switch1", "type": "switch",
//!             "ports": [{"port": 0, "guid": "0x0000000000200000", "lid": 2,
//!                        "lmc": 0, "master_sm_lid": 1, "state": "Active",
//!                        "neighbour": null}, ...],
//!             "linear_fdb_top": 6, "lft": [255, 1, 0, 3, 3, 2, 5]}, ...]}
//! ```
//!
//! `type` is "switch", "ca" or "router"; `state` is the PortState name of
//! IBA 14.2.5.6 (PortInfo): "NoChange", "Down", "Init", "Armed", "Active",
//! "ActDefer"; a reserved value (6..15) is written as its number. GUIDs
//! are 0x-hex strings (a JSON number cannot hold every 64-bit value).

use std::collections::HashMap;
use std::fmt;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Deserializer, Serialize, Serializer};
use thiserror::Error;

use crate::proto::topology::NodeKind;

/// PortInfo.PortState (IBA 14.2.5.6): 0 is "no state change" (a Set's
/// value, never read back), 1..5 the states, 6..15 reserved.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum PortState {
    NoChange,
    Down,
    Init,
    Armed,
    Active,
    ActDefer,
    Reserved(u8),
}

impl PortState {
    const NAMED: [(PortState, &'static str); 6] = [
        (PortState::NoChange, "NoChange"),
        (PortState::Down, "Down"),
        (PortState::Init, "Init"),
        (PortState::Armed, "Armed"),
        (PortState::Active, "Active"),
        (PortState::ActDefer, "ActDefer"),
    ];

    /// The PortState field's value.
    pub fn value(self) -> u8 {
        match self {
            PortState::Reserved(v) => v,
            s => Self::NAMED.iter().position(|&(n, _)| n == s).unwrap_or(0) as u8,
        }
    }

    /// IBA's name; `None` for a reserved value.
    pub fn name(self) -> Option<&'static str> {
        Self::NAMED
            .iter()
            .find(|&&(n, _)| n == self)
            .map(|&(_, s)| s)
    }

    fn from_name(s: &str) -> Option<PortState> {
        Self::NAMED.iter().find(|&&(_, n)| n == s).map(|&(v, _)| v)
    }
}

impl From<u8> for PortState {
    /// The 4-bit field's value (higher bits ignored).
    fn from(v: u8) -> PortState {
        let v = v & 0xf;
        Self::NAMED
            .get(usize::from(v))
            .map_or(PortState::Reserved(v), |&(s, _)| s)
    }
}

impl fmt::Display for PortState {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.name() {
            Some(n) => f.write_str(n),
            None => write!(f, "{}", self.value()),
        }
    }
}

impl Serialize for PortState {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match self.name() {
            Some(n) => s.serialize_str(n),
            None => s.serialize_u8(self.value()),
        }
    }
}

impl<'de> Deserialize<'de> for PortState {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<PortState, D::Error> {
        #[derive(Deserialize)]
        #[serde(untagged)]
        enum Raw {
            Name(String),
            Value(u8),
        }
        match Raw::deserialize(d)? {
            Raw::Name(n) => PortState::from_name(&n).ok_or_else(|| {
                serde::de::Error::custom(format!(
                    "unknown PortState {n:?} (want one of NoChange, Down, Init, Armed, Active, ActDefer or 0..15)"
                ))
            }),
            Raw::Value(v) if v <= 15 => Ok(PortState::from(v)),
            Raw::Value(v) => Err(serde::de::Error::custom(format!(
                "PortState {v} is not a 4-bit value"
            ))),
        }
    }
}

/// A GUID, written as a 0x-hex string of 16 digits.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Guid(pub u64);

impl fmt::Display for Guid {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{:#018x}", self.0)
    }
}

impl Serialize for Guid {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_str(self)
    }
}

impl<'de> Deserialize<'de> for Guid {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Guid, D::Error> {
        let s = String::deserialize(d)?;
        s.strip_prefix("0x")
            .and_then(|h| u64::from_str_radix(h, 16).ok())
            .map(Guid)
            .ok_or_else(|| serde::de::Error::custom(format!("GUID {s:?} is not 0x-hex")))
    }
}

/// One port in the state file.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct PortDump {
    pub port: u8,
    pub guid: Guid,
    /// Base LID and LMC (switch port 0 and CA ports; external switch ports
    /// have none).
    pub lid: Option<u16>,
    pub lmc: Option<u8>,
    /// MasterSMLID (the same ports as `lid`).
    pub master_sm_lid: Option<u16>,
    /// PortState as the RTL shows it.
    pub state: PortState,
    /// The port at the other end of an up cable.
    pub neighbour: Option<Neighbour>,
}

/// The other end of a cable: its PortGUID and port number.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Neighbour {
    pub guid: Guid,
    pub port: u8,
}

/// One node in the state file.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct NodeDump {
    /// The node's id in the topology file.
    pub id: String,
    pub guid: Guid,
    pub description: String,
    #[serde(rename = "type")]
    pub kind: NodeKind,
    /// Switches: port 0..=NumPorts; CAs: 1..=NumPorts.
    pub ports: Vec<PortDump>,
    /// Switches: LinearFDBTop and the LFT entries 0..=LinearFDBTop
    /// (255 = no route).
    pub linear_fdb_top: Option<u16>,
    pub lft: Option<Vec<u8>>,
}

impl NodeDump {
    /// NumPorts: the highest port number.
    pub fn nports(&self) -> u8 {
        self.ports.iter().map(|p| p.port).max().unwrap_or(0)
    }

    pub fn port(&self, p: u8) -> Option<&PortDump> {
        self.ports.iter().find(|x| x.port == p)
    }

    /// NodeInfo.PortGUID as seen through port `p`: a switch answers with
    /// port 0's GUID whatever port the SMP entered by.
    pub fn port_guid(&self, p: u8) -> Option<Guid> {
        let p = if self.kind == NodeKind::Switch { 0 } else { p };
        self.port(p).map(|x| x.guid)
    }
}

/// The whole state file.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct StateDump {
    pub nodes: Vec<NodeDump>,
}

/// A state file that cannot be used.
#[derive(Debug, Error)]
pub enum StateError {
    #[error("{}: cannot read state file: {source}", .file.display())]
    Io {
        file: PathBuf,
        #[source]
        source: std::io::Error,
    },
    #[error("{}: not a state file: {source}", .file.display())]
    Json {
        file: PathBuf,
        #[source]
        source: serde_json::Error,
    },
    #[error("{}: {msg}", .file.display())]
    Invalid { file: PathBuf, msg: String },
    /// A name that is no switch of the file.
    #[error("{}: {msg}", .file.display())]
    NoSuchNode { file: PathBuf, msg: String },
}

impl StateDump {
    /// Read, parse and check a state file.
    pub fn load(path: impl AsRef<Path>) -> Result<StateDump, StateError> {
        let file = path.as_ref().to_path_buf();
        let text = std::fs::read_to_string(&file).map_err(|source| StateError::Io {
            file: file.clone(),
            source,
        })?;
        let d: StateDump = serde_json::from_str(&text).map_err(|source| StateError::Json {
            file: file.clone(),
            source,
        })?;
        d.check().map_err(|msg| StateError::Invalid { file, msg })?;
        Ok(d)
    }

    /// What a reader relies on: port numbers unique and in range, every
    /// switch with port 0 and an LFT of LinearFDBTop + 1 entries, every
    /// neighbour a port of the file that names this port back.
    pub fn check(&self) -> Result<(), String> {
        for n in &self.nodes {
            let first = u8::from(n.kind != NodeKind::Switch);
            let mut seen = std::collections::HashSet::new();
            for p in &n.ports {
                if p.port < first || !seen.insert(p.port) {
                    return Err(format!(
                        "node {:?}: port {} twice or out of range",
                        n.id, p.port
                    ));
                }
            }
            if n.kind == NodeKind::Switch {
                if n.port(0).is_none() {
                    return Err(format!("switch {:?} has no port 0", n.id));
                }
                let (Some(top), Some(lft)) = (n.linear_fdb_top, &n.lft) else {
                    return Err(format!("switch {:?} has no linear_fdb_top and lft", n.id));
                };
                if lft.len() != usize::from(top) + 1 {
                    return Err(format!(
                        "switch {:?}: lft has {} entries, linear_fdb_top {top} wants {}",
                        n.id,
                        lft.len(),
                        usize::from(top) + 1
                    ));
                }
            }
        }
        let idx = self.port_index();
        for n in &self.nodes {
            for p in &n.ports {
                let Some(nb) = &p.neighbour else { continue };
                let back = idx
                    .get(&(nb.guid, nb.port))
                    .and_then(|&(j, q)| self.nodes[j].port(q))
                    .and_then(|q| q.neighbour.as_ref());
                if back.map(|b| (b.guid, b.port)) != Some((p.guid, p.port)) {
                    return Err(format!(
                        "node {:?} port {}: neighbour {}[{}] is no port that names it back",
                        n.id, p.port, nb.guid, nb.port
                    ));
                }
            }
        }
        Ok(())
    }

    /// (PortGUID, port number) -> (node index, port number).
    pub fn port_index(&self) -> HashMap<(Guid, u8), (usize, u8)> {
        let mut m = HashMap::new();
        for (i, n) in self.nodes.iter().enumerate() {
            for p in &n.ports {
                m.insert((p.guid, p.port), (i, p.port));
            }
        }
        m
    }

    /// The port LID `lid` addresses: the one whose range base ..= base +
    /// 2^LMC - 1 holds it, as (node index, port). LID 0 is nobody's.
    pub fn port_of_lid(&self, lid: u16) -> Option<(usize, u8)> {
        if lid == 0 {
            return None;
        }
        self.nodes.iter().enumerate().find_map(|(i, n)| {
            n.ports.iter().find_map(|p| {
                let base = p.lid.filter(|&b| b != 0)?;
                let span = 1u32 << p.lmc.unwrap_or(0).min(7);
                (u32::from(lid) >= u32::from(base) && u32::from(lid) < u32::from(base) + span)
                    .then_some((i, p.port))
            })
        })
    }

    /// The switch named `name`: its node id or its description.
    pub fn switch(&self, file: &Path, name: &str) -> Result<usize, StateError> {
        let no = |msg: String| StateError::NoSuchNode {
            file: file.to_path_buf(),
            msg,
        };
        let i = self
            .nodes
            .iter()
            .position(|n| n.id == name)
            .or_else(|| self.nodes.iter().position(|n| n.description == name))
            .ok_or_else(|| no(format!("no node with id or description {name:?}")))?;
        if self.nodes[i].kind != NodeKind::Switch {
            return Err(no(format!("{name:?} is not a switch")));
        }
        Ok(i)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn port_states_are_written_by_name_and_read_by_name_or_value() {
        let names: Vec<String> = (0..=6u8)
            .map(|v| serde_json::to_string(&PortState::from(v)).unwrap())
            .collect();
        assert_eq!(
            names,
            [
                "\"NoChange\"",
                "\"Down\"",
                "\"Init\"",
                "\"Armed\"",
                "\"Active\"",
                "\"ActDefer\"",
                "6"
            ]
        );
        for v in 0..=15u8 {
            let s = PortState::from(v);
            assert_eq!(s.value(), v);
            let back: PortState =
                serde_json::from_str(&serde_json::to_string(&s).unwrap()).unwrap();
            assert_eq!(back, s);
            assert_eq!(
                serde_json::from_str::<PortState>(&v.to_string()).unwrap(),
                s
            );
        }
        assert!(serde_json::from_str::<PortState>("\"Up\"").is_err());
        assert!(serde_json::from_str::<PortState>("16").is_err());
    }

    #[test]
    fn guids_are_hex_strings() {
        let g = Guid(0x200000);
        assert_eq!(serde_json::to_string(&g).unwrap(), "\"0x0000000000200000\"");
        assert_eq!(
            serde_json::from_str::<Guid>("\"0x10000a\"").unwrap(),
            Guid(0x10000a)
        );
        assert!(serde_json::from_str::<Guid>("\"10000a\"").is_err());
        assert!(serde_json::from_str::<Guid>("1").is_err());
    }
}
