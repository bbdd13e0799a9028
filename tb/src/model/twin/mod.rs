//! Back ends of a fabric's devices, and the choice between them.
//!
//! A device of a [`crate::model::net::Net`] is a [`Dut`]: its model steps
//! one cycle at a time from the same inputs and gives the same outputs
//! whatever is behind it. Behind it is one of:
//! - [`Fidelity::Rtl`]: the Verilated model, the truth;
//! - [`Fidelity::Twin`]: the device's twin, Rust that follows the RTL's
//!   timing per packet (what arrives, when each beat leaves, which counter
//!   moves) without evaluating any logic per cycle. A twin is cycle-exact
//!   against its RTL: the twin-against-RTL soaks
//!   ([`crate::model::lockstep::Lockstep`]) prove it.
//!
//! A [`Backend`] makes a device's model from its [`DeviceSpec`]; `Net`
//! asks the one chosen for each node and knows nothing else of it, so a
//! further back end (a user's own Verilated device) is one more
//! implementation of [`Backend`].

pub mod ca;
pub mod ca_mp;
mod gsi;
mod mkey;

use anyhow::{Context, Result};
use vl15_bindings::{Dev, DevKind};

use crate::model::dut::{CaTopDut, Dut};
use crate::model::lockstep::Lockstep;

pub mod switch;

/// What a device is, as a back end needs to know to build its model.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DeviceSpec {
    /// `ib_ca_top`: one CA port.
    CaTop { data_w: u32 },
    /// `ib_ca_mp_top` with `nports` ports (1 or 2).
    CaMp { nports: u8, data_w: u32 },
    /// `ib_switch_top` with `nports` external ports (1..=64).
    Switch { nports: u8, data_w: u32 },
}

impl DeviceSpec {
    pub fn data_w(self) -> u32 {
        match self {
            DeviceSpec::CaTop { data_w }
            | DeviceSpec::CaMp { data_w, .. }
            | DeviceSpec::Switch { data_w, .. } => data_w,
        }
    }
}

/// Makes the model of a device.
pub trait Backend: Send + Sync {
    /// A model of `spec`, not yet reset.
    fn build(&self, spec: DeviceSpec) -> Result<Box<dyn Dut>>;
}

/// The model a device runs as.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Fidelity {
    /// The Verilated RTL, evaluated in every cycle the device has work.
    #[default]
    Rtl,
    /// The Rust twin, cycle-exact against the RTL.
    Twin,
    /// Both, stepped side by side: the RTL's outputs drive the fabric and
    /// the first cycle in which the twin's differ fails the run.
    Lockstep,
}

impl Fidelity {
    pub fn name(self) -> &'static str {
        match self {
            Fidelity::Rtl => "rtl",
            Fidelity::Twin => "twin",
            Fidelity::Lockstep => "lockstep",
        }
    }
}

impl std::str::FromStr for Fidelity {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        match s {
            "rtl" => Ok(Fidelity::Rtl),
            "twin" => Ok(Fidelity::Twin),
            "lockstep" => Ok(Fidelity::Lockstep),
            _ => Err(format!(
                "fidelity {s:?}: one of rtl, twin, lockstep (both, compared every cycle)"
            )),
        }
    }
}

/// The Verilated models.
pub struct RtlBackend;

impl Backend for RtlBackend {
    fn build(&self, spec: DeviceSpec) -> Result<Box<dyn Dut>> {
        Ok(match spec {
            DeviceSpec::CaTop { data_w } => Box::new(CaTopDut::new(data_w)?),
            DeviceSpec::CaMp { nports, data_w } => {
                let kind = crate::model::dut::ca_mp_kind(nports).with_context(|| {
                    format!("the RTL multiport CA has 1 or 2 ports, not {nports}")
                })?;
                Box::new(Dev::new(kind, u32::from(nports), data_w)?)
            }
            DeviceSpec::Switch { nports, data_w } => {
                Box::new(Dev::new(DevKind::Switch, u32::from(nports), data_w)?)
            }
        })
    }
}

/// The twins.
pub struct TwinBackend;

impl Backend for TwinBackend {
    fn build(&self, spec: DeviceSpec) -> Result<Box<dyn Dut>> {
        twin_of(spec)
    }
}

/// The twin of `spec`.
fn twin_of(spec: DeviceSpec) -> Result<Box<dyn Dut>> {
    match spec {
        DeviceSpec::Switch { nports, data_w } => {
            Ok(Box::new(switch::SwitchTwin::new(nports, data_w)?))
        }
        DeviceSpec::CaTop { data_w } => Ok(Box::new(ca_mp::CaTwin::ca_top(data_w))),
        DeviceSpec::CaMp { nports, data_w } => Ok(Box::new(ca_mp::CaTwin::ca_mp(nports, data_w))),
    }
}

/// The RTL and the twin in lockstep.
pub struct LockstepBackend;

impl Backend for LockstepBackend {
    fn build(&self, spec: DeviceSpec) -> Result<Box<dyn Dut>> {
        Ok(Box::new(Lockstep::new(
            RtlBackend.build(spec)?,
            TwinBackend.build(spec)?,
        )?))
    }
}

/// The back end of a fidelity.
pub fn backend(f: Fidelity) -> &'static dyn Backend {
    match f {
        Fidelity::Rtl => &RtlBackend,
        Fidelity::Twin => &TwinBackend,
        Fidelity::Lockstep => &LockstepBackend,
    }
}

/// Which model each device of a fabric runs as: `default` for all, but a
/// device that a pattern of `rtl` names runs as RTL and one that a pattern
/// of `twin` names as its twin. A pattern is a node id or a
/// NodeDescription, whole, where `*` stands for any run of characters.
#[derive(Debug, Clone, Default)]
pub struct FidelityChoice {
    pub default: Fidelity,
    pub rtl: Vec<String>,
    pub twin: Vec<String>,
}

/// Whether `pattern` (`*`: any run of characters, itself included none)
/// matches all of `s`. Only `*` is special: node ids and descriptions hold
/// brackets and question marks, which a shell-style glob would read as
/// classes.
pub fn glob_match(pattern: &str, s: &str) -> bool {
    let mut parts = pattern.split('*');
    let first = parts.next().unwrap_or("");
    let Some(mut rest) = s.strip_prefix(first) else {
        return false;
    };
    let parts: Vec<&str> = parts.collect();
    let Some((last, middle)) = parts.split_last() else {
        return rest.is_empty();
    };
    for p in middle {
        match rest.find(p) {
            Some(i) => rest = &rest[i + p.len()..],
            None => return false,
        }
    }
    rest.len() >= last.len() && rest.ends_with(last)
}

impl FidelityChoice {
    /// Everything as `f`.
    pub fn all(f: Fidelity) -> Self {
        FidelityChoice {
            default: f,
            ..FidelityChoice::default()
        }
    }

    /// As a command line would say it: "--fidelity twin --rtl leaf-2".
    pub fn describe(&self) -> String {
        let mut s = format!("--fidelity {}", self.default.name());
        for (flag, v) in [("--rtl", &self.rtl), ("--twin", &self.twin)] {
            if !v.is_empty() {
                s += &format!(" {flag} {}", v.join(","));
            }
        }
        s
    }

    /// The fidelity of each node, given as (id, NodeDescription). A
    /// pattern that names no node, or a node named both by an `rtl` and by
    /// a `twin` pattern, is an error that names the pattern.
    pub fn resolve(
        &self,
        nodes: &[(&str, &str)],
    ) -> Result<Vec<Fidelity>, crate::proto::InputError> {
        use crate::proto::InputError;
        let hits = |pat: &str| -> Vec<usize> {
            nodes
                .iter()
                .enumerate()
                .filter(|(_, (id, desc))| glob_match(pat, id) || glob_match(pat, desc))
                .map(|(i, _)| i)
                .collect()
        };
        let mut out = vec![self.default; nodes.len()];
        let mut by: Vec<Option<(&str, &str)>> = vec![None; nodes.len()];
        for (flag, pats, f) in [
            ("--rtl", &self.rtl, Fidelity::Rtl),
            ("--twin", &self.twin, Fidelity::Twin),
        ] {
            for pat in pats {
                let pat = pat.trim();
                if pat.is_empty() {
                    return Err(InputError(format!(
                        "{flag}: an empty pattern names no device"
                    )));
                }
                let h = hits(pat);
                if h.is_empty() {
                    return Err(InputError(format!(
                        "{flag} {pat:?}: no device has that node id or NodeDescription"
                    )));
                }
                for i in h {
                    if let Some((other_flag, other)) = by[i] {
                        if other_flag != flag {
                            return Err(InputError(format!(
                                "{flag} {pat:?} and {other_flag} {other:?} both name {:?}",
                                nodes[i].0
                            )));
                        }
                    }
                    by[i] = Some((flag, pat));
                    out[i] = f;
                }
            }
        }
        Ok(out)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn glob_stars_match_any_run() {
        assert!(glob_match("sw*", "sw1"));
        assert!(glob_match("sw*", "sw"));
        assert!(glob_match("*", ""));
        assert!(glob_match("*leaf*3", "fat leaf 13"));
        assert!(!glob_match("*leaf*3", "fat leaf 13 "));
        assert!(glob_match("H[1]", "H[1]"));
        assert!(!glob_match("H?", "H1"));
        assert!(!glob_match("a*a", "a"));
        assert!(glob_match("a*a", "aa"));
    }

    #[test]
    fn choice_resolves_and_refuses_what_names_nothing_or_twice() {
        let nodes = [("sw1", "leaf one"), ("sw2", "leaf two"), ("H1", "host")];
        let c = FidelityChoice {
            default: Fidelity::Twin,
            rtl: vec!["leaf*".into()],
            twin: vec!["sw2".into()],
        };
        let e = c.resolve(&nodes).unwrap_err().0;
        assert!(e.contains("\"sw2\"") && e.contains("\"leaf*\""), "{e}");
        let c = FidelityChoice {
            default: Fidelity::Twin,
            rtl: vec!["*one".into()],
            twin: vec![],
        };
        assert_eq!(
            c.resolve(&nodes).unwrap(),
            vec![Fidelity::Rtl, Fidelity::Twin, Fidelity::Twin]
        );
        let c = FidelityChoice {
            rtl: vec!["nobody".into()],
            ..FidelityChoice::default()
        };
        assert!(c.resolve(&nodes).unwrap_err().0.contains("\"nobody\""));
    }
}
