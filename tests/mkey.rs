//! M_Key protection (IBA 14.2.4, as Linux qib check_mkey / qib_bad_mkey /
//! subn_get_portinfo implement it), checked by the RTL (`smi_mkey_chk`) and
//! acted on by the CA's SMA: an SM port and a CA port back to back
//! (`scenario::Run`). Expected values are the rules:
//! - key valid iff port M_Key = 0 or SMP M_Key = port M_Key;
//! - bad key: Get answered at protect 0 (M_Key shown) and 1 (M_Key 0), dropped
//!   at 2 and 3; Set and TrapRepress dropped at every level;
//! - a drop counts M_KeyViolations (RTL register, PortInfo, counter
//!   mkey_viol), sends Trap 256 (ibspec §8 layout) LID-routed to
//!   MasterSMLID, repeated until a TrapRepress with its TID, and starts the
//!   lease timer (period ≠ 0, not running); a valid Get/Set/TrapRepress stops
//!   it; expiry sets protect to 0;
//! - a valid Set(PortInfo) writes M_Key, protect and lease into the RTL.

use anyhow::{ensure, Context, Result};
use vl15::check::scenario::{Run, CA, CA_LID, SM_LID};
use vl15::model::device::AddressHandle;
use vl15::model::regmap::reg;
use vl15::proto::mad::{self, Mad};
use vl15::proto::packet::consts::*;
use vl15::proto::packet::{Packet, PortInfo};

const K: u64 = 0x0123_4567_89AB_CDEF;
const BAD: u64 = 0x0123_4567_89AB_CDEE;
const WIDTHS: [u32; 3] = [32, 64, 128];

/// Post `m` (M_Key `key`) from the SM, run until quiet, return the response.
fn ask(r: &mut Run, ah: AddressHandle, mut m: Mad, key: u64) -> Result<Option<Mad>> {
    let tid = r.sm().tid();
    mad::set_tid(&mut m, tid);
    mad::set_m_key(&mut m, key);
    r.post(ah, m);
    r.idle()?;
    Ok(r.sm().response(tid).copied())
}

fn get_pi(r: &mut Run, key: u64) -> Result<Option<Mad>> {
    let m = mad::request(CLASS_SUBN_LID, METHOD_GET, ATTR_PORT_INFO, 0, 0);
    ask(r, AddressHandle::lid_routed(CA_LID), m, key)
}

fn pi_of(m: &Mad) -> PortInfo {
    PortInfo::decode(mad::data(m)).expect("64 bytes decode")
}

fn regs_mkey(r: &mut Run) -> Result<(u64, u32, u32, u32)> {
    let lo = r.read_reg(CA, reg::MKEY_LO)?;
    let hi = r.read_reg(CA, reg::MKEY_HI)?;
    Ok((
        u64::from(hi) << 32 | u64::from(lo),
        r.read_reg(CA, reg::MKEY_PROT)?,
        r.read_reg(CA, reg::MKEY_LEASE)?,
        r.read_reg(CA, reg::MKEY_VIOLS)?,
    ))
}

/// SM and CA with LIDs; the SM gives the CA port M_Key K, `prot` and
/// `lease` by Set(PortInfo) (the port key is 0: any key is valid).
fn setup(width: u32, prot: u8, lease: u16) -> Result<Run> {
    let mut r = Run::new(width)?;
    r.assign_lids()?;
    let cur = get_pi(&mut r, 0)?.context("no PortInfo")?;
    let mut pi = pi_of(&cur);
    pi.m_key = K;
    pi.m_key_protect_bits = prot;
    pi.m_key_lease_period = lease;
    pi.port_state = PORT_STATE_NO_CHANGE;
    let mut m = mad::request(CLASS_SUBN_LID, METHOD_SET, ATTR_PORT_INFO, 0, 0);
    mad::data_mut(&mut m).copy_from_slice(&pi.encode());
    let resp =
        ask(&mut r, AddressHandle::lid_routed(CA_LID), m, 0)?.context("no response to the Set")?;
    ensure!(
        mad::status(&resp) == 0,
        "Set status {:#06x}",
        mad::status(&resp)
    );
    let got = pi_of(&resp);
    ensure!(
        got.m_key == K && got.m_key_protect_bits == prot && got.m_key_lease_period == lease,
        "Set response {got:?}"
    );
    // the valid Set wrote the RTL's M_Key registers
    let (key, p, l, v) = regs_mkey(&mut r)?;
    ensure!(
        (key, p, l, v) == (K, u32::from(prot), u32::from(lease), 0),
        "RTL M_Key registers {key:#x} {p} {l} {v}"
    );
    Ok(r)
}

/// Traps that reached the SM so far.
fn traps(r: &mut Run) -> Vec<Mad> {
    r.sm()
        .unsolicited
        .iter()
        .filter(|(m, _)| mad::method(m) == METHOD_TRAP)
        .map(|(m, _)| *m)
        .collect()
}

fn counter(r: &mut Run, name: &str) -> Result<u32> {
    Ok(r.counters(CA)?.get(name))
}

/// Trap 256 fields of ibspec §8 for a LID-routed request (`method`, `attr`,
/// `modifier`, `key`) from the CA at CA_LID.
fn check_trap256_lid(t: &Mad, method: u8, attr: u16, modifier: u32, key: u64) -> Result<()> {
    ensure!(
        mad::class(t) == CLASS_SUBN_LID && mad::attr_id(t) == ATTR_NOTICE,
        "not a SubnTrap(Notice)"
    );
    let d = mad::data(t);
    ensure!(
        d[0] == 0x82,
        "IsGeneric/Type {:#04x}, want generic security",
        d[0]
    );
    ensure!(d[1..4] == [0, 0, 1], "ProducerType {:?}, want CA", &d[1..4]);
    ensure!(d[4..6] == 256u16.to_be_bytes(), "TrapNumber {:?}", &d[4..6]);
    ensure!(d[6..8] == CA_LID.to_be_bytes(), "IssuerLID");
    ensure!(d[12..14] == CA_LID.to_be_bytes(), "LID");
    ensure!(d[16] == method, "Method {:#04x}", d[16]);
    ensure!(d[18..20] == attr.to_be_bytes(), "AttrID");
    ensure!(d[20..24] == modifier.to_be_bytes(), "AttrMod");
    ensure!(d[24..32] == key.to_be_bytes(), "M_Key");
    Ok(())
}

#[test]
fn gets_succeed_are_masked_or_dropped_per_protect_level() -> Result<()> {
    for width in WIDTHS {
        for prot in 0u8..4 {
            let mut r = setup(width, prot, 0)?;
            // valid key: always answered, the M_Key shown
            let ok = get_pi(&mut r, K)?.context("valid Get not answered")?;
            ensure!(
                pi_of(&ok).m_key == K && pi_of(&ok).m_key_protect_bits == prot,
                "valid Get at protect {prot}: {:?}",
                pi_of(&ok)
            );
            // bad key
            let resp = get_pi(&mut r, BAD)?;
            let viols = u32::from(prot >= 2);
            match prot {
                0 => {
                    let pi = pi_of(&resp.context("protect 0: Get dropped")?);
                    ensure!(pi.m_key == K, "protect 0: M_Key {:#x}", pi.m_key);
                }
                1 => {
                    let pi = pi_of(&resp.context("protect 1: Get dropped")?);
                    ensure!(pi.m_key == 0, "protect 1: M_Key {:#x}, want 0", pi.m_key);
                    ensure!(pi.lid == CA_LID, "protect 1: the rest of PortInfo");
                }
                _ => ensure!(resp.is_none(), "protect {prot}: bad-key Get answered"),
            }
            // a bad-key Get of another attribute is never masked, and is
            // dropped from protect 2
            let ni = mad::request(CLASS_SUBN_LID, METHOD_GET, ATTR_NODE_INFO, 0, 0);
            let resp = ask(&mut r, AddressHandle::lid_routed(CA_LID), ni, BAD)?;
            ensure!(
                resp.is_some() == (prot < 2),
                "protect {prot}: NodeInfo Get answered = {}",
                resp.is_some()
            );
            let viols = viols * 2;
            ensure!(
                counter(&mut r, "mkey_viol")? == viols,
                "width {width} protect {prot}: mkey_viol counter"
            );
            ensure!(
                r.read_reg(CA, reg::MKEY_VIOLS)? == viols,
                "M_KeyViolations register"
            );
            let pi = pi_of(&get_pi(&mut r, K)?.context("Get")?);
            ensure!(
                u32::from(pi.m_key_violations) == viols,
                "PortInfo M_KeyViolations {} want {viols}",
                pi.m_key_violations
            );
            // the SMA saw every request and answered exactly the passed ones
            ensure!(
                r.sma(CA).mkey_violations == u64::from(viols),
                "SMA violations {}",
                r.sma(CA).mkey_violations
            );
        }
    }
    Ok(())
}

#[test]
fn set_and_trap_repress_with_a_wrong_key_are_dropped_at_every_level() -> Result<()> {
    for prot in 0u8..4 {
        let mut r = setup(64, prot, 0)?;
        let before = r.sma(CA).stored_port_info(1)?;
        let mut pi = before;
        pi.lid = 77;
        pi.m_key = 0;
        pi.m_key_protect_bits = 0;
        pi.master_sm_lid = 9;
        pi.port_state = PORT_STATE_NO_CHANGE;
        let mut m = mad::request(CLASS_SUBN_LID, METHOD_SET, ATTR_PORT_INFO, 1, 0);
        mad::data_mut(&mut m).copy_from_slice(&pi.encode());
        let resp = ask(&mut r, AddressHandle::lid_routed(CA_LID), m, BAD)?;
        ensure!(resp.is_none(), "protect {prot}: bad-key Set answered");
        // nothing changed: RTL registers and the SMA's state
        ensure!(
            r.read_reg(CA, reg::PORT_LID)? == u32::from(CA_LID),
            "LID register changed"
        );
        ensure!(
            r.read_reg(CA, reg::MASTER_SM_LID)? == u32::from(SM_LID),
            "MasterSMLID changed"
        );
        let (key, p, _, v) = regs_mkey(&mut r)?;
        ensure!(
            key == K && p == u32::from(prot) && v == 1,
            "M_Key registers {key:#x} {p} {v}"
        );
        ensure!(
            r.sma(CA).stored_port_info(1)? == before,
            "SMA PortInfo changed"
        );
        // Trap 256 to the MasterSMLID
        let t = traps(&mut r);
        ensure!(t.len() == 1, "protect {prot}: {} traps at the SM", t.len());
        check_trap256_lid(&t[0], METHOD_SET, ATTR_PORT_INFO, 1, BAD)?;
        let wire = r.wire("ca>sm");
        let p = Packet::parse(&wire.last().context("no trap on the wire")?.bytes)?;
        ensure!(
            p.lrh.dlid == SM_LID && p.lrh.slid == CA_LID && p.lrh.vl == 15,
            "trap LRH {:?}",
            p.lrh
        );
        // TrapRepress with a wrong key: itself a violation, the trap stays
        let tid = mad::tid(&t[0]);
        let rep = mad::request(CLASS_SUBN_LID, METHOD_TRAP_REPRESS, ATTR_NOTICE, 0, 0);
        let mut rep_bad = rep;
        mad::set_m_key(&mut rep_bad, BAD);
        mad::set_tid(&mut rep_bad, tid);
        r.post(AddressHandle::lid_routed(CA_LID), rep_bad);
        r.idle()?;
        ensure!(
            r.read_reg(CA, reg::MKEY_VIOLS)? == 2,
            "bad TrapRepress not counted"
        );
        ensure!(
            r.sma(CA).trap_pending().is_some(),
            "bad-key TrapRepress repressed the trap"
        );
        let t = traps(&mut r);
        check_trap256_lid(
            t.last().expect("trap"),
            METHOD_TRAP_REPRESS,
            ATTR_NOTICE,
            0,
            BAD,
        )?;
        // the trap is repeated until repressed with the right key and TID
        let n = t.len();
        let interval = r.sma(CA).cfg.trap_interval;
        r.net.run(interval + 2000)?;
        ensure!(traps(&mut r).len() > n, "trap not repeated");
        let tid = mad::tid(r.sma(CA).trap_pending().expect("pending"));
        let mut rep_ok = rep;
        mad::set_m_key(&mut rep_ok, K);
        mad::set_tid(&mut rep_ok, tid);
        r.post(AddressHandle::lid_routed(CA_LID), rep_ok);
        r.idle()?;
        ensure!(
            r.sma(CA).trap_pending().is_none(),
            "valid TrapRepress did not repress"
        );
        let n = traps(&mut r).len();
        r.net.run(2 * interval + 2000)?;
        ensure!(traps(&mut r).len() == n, "trap repeated after TrapRepress");
        ensure!(counter(&mut r, "mkey_viol")? == 2, "mkey_viol counter");
    }
    Ok(())
}

/// A DR Get(PortInfo) injected at the CA (D = 0, hop pointer = hop count
/// `hc`, DrSLID = DrDLID = permissive, ReturnPath[i] = 100 + i) with the
/// wrong key at protect 2: Trap 256 carries DrSLID, DRNotice, the hop count
/// (at most 30, DRPathTruncated beyond) and the ReturnPath bytes.
#[test]
fn trap256_carries_the_directed_route_fields() -> Result<()> {
    for hc in [1u8, 3, 30, 40] {
        let mut r = setup(64, 2, 0)?;
        let mut m = mad::request(CLASS_SUBN_DR, METHOD_GET, ATTR_PORT_INFO, 0, 0x4242);
        mad::set_m_key(&mut m, BAD);
        m[mad::off::HOP_PTR] = hc;
        m[mad::off::HOP_CNT] = hc;
        m[mad::off::DR_SLID..mad::off::DR_SLID + 4].copy_from_slice(&[0xFF; 4]);
        for i in 0..64 {
            m[mad::off::RETURN_PATH + i] = 100 + i as u8;
        }
        let n0 = r.wire("ca>sm").len();
        r.inject(&Packet::smp_bytes(
            15,
            0,
            PERMISSIVE_LID,
            PERMISSIVE_LID,
            9,
            m,
        ));
        r.idle()?;
        ensure!(
            r.wire("ca>sm")[n0..].iter().all(|p| {
                Packet::parse(&p.bytes).is_ok_and(|p| mad::method(&p.mad) == METHOD_TRAP)
            }),
            "hc {hc}: the bad-key DR Get was answered"
        );
        let t = traps(&mut r);
        ensure!(t.len() == 1, "hc {hc}: {} traps", t.len());
        let d = mad::data(&t[0]);
        ensure!(d[14..16] == [0xFF, 0xFF], "DRSLID {:?}", &d[14..16]);
        let n = usize::from(hc).min(30);
        let trunc = if hc > 30 { 0x40 } else { 0 };
        ensure!(
            d[33] == 0x80 | trunc | n as u8,
            "hc {hc}: byte 33 {:#04x}",
            d[33]
        );
        // the SMP's ReturnPath as the CA received it (RP[hc] := port 1)
        let mut rp = [0u8; 64];
        for (i, b) in rp.iter_mut().enumerate() {
            *b = if i == usize::from(hc) {
                1
            } else {
                100 + i as u8
            };
        }
        ensure!(
            d[34..34 + n] == rp[..n],
            "hc {hc}: DRReturnPath {:?}",
            &d[34..34 + n]
        );
        ensure!(
            d[34 + n..].iter().all(|b| *b == 0),
            "hc {hc}: bytes after the path"
        );
        ensure!(
            d[16] == METHOD_GET && d[24..32] == BAD.to_be_bytes(),
            "Method / M_Key"
        );
    }
    Ok(())
}

#[test]
fn lease_expiry_drops_protection_and_a_valid_smp_stops_the_lease() -> Result<()> {
    const TICK: u32 = 1000; // cycles per lease second
    const LEASE: u16 = 3;
    let mut r = setup(64, 3, LEASE)?;
    r.port(CA).write_reg(reg::MKEY_TICK, TICK);
    // a violation starts the lease
    ensure!(
        get_pi(&mut r, BAD)?.is_none(),
        "bad Get answered at protect 3"
    );
    let st = r.read_reg(CA, reg::MKEY_LEASE_ST)?;
    ensure!(
        st >> 16 & 1 == 1,
        "lease not running after a violation ({st:#x})"
    );
    // a valid Get stops it: protection stays long after the period
    ensure!(get_pi(&mut r, K)?.is_some(), "valid Get not answered");
    ensure!(
        r.read_reg(CA, reg::MKEY_LEASE_ST)? >> 16 & 1 == 0,
        "valid Get did not stop the lease"
    );
    r.net.run(u64::from(TICK) * u64::from(LEASE) * 2)?;
    ensure!(
        r.read_reg(CA, reg::MKEY_PROT)? == 3,
        "protection dropped with the lease stopped"
    );
    // a violation again, then nothing valid: after the period protect = 0
    ensure!(get_pi(&mut r, BAD)?.is_none(), "bad Get answered");
    r.net.run(u64::from(TICK) * u64::from(LEASE) + 100)?;
    ensure!(
        r.read_reg(CA, reg::MKEY_PROT)? == 0,
        "lease expired, protect not 0"
    );
    // protect 0: a bad-key Get is answered and shows the key
    let pi = pi_of(&get_pi(&mut r, BAD)?.context("bad Get not answered after the lease")?);
    ensure!(
        pi.m_key == K && pi.m_key_protect_bits == 0,
        "PortInfo after the lease {pi:?}"
    );
    // the key itself still guards Sets
    let mut m = mad::request(CLASS_SUBN_LID, METHOD_SET, ATTR_PORT_INFO, 0, 0);
    mad::data_mut(&mut m).copy_from_slice(&pi.encode());
    ensure!(
        ask(&mut r, AddressHandle::lid_routed(CA_LID), m, BAD)?.is_none(),
        "bad Set answered after the lease"
    );
    Ok(())
}

#[test]
fn set_writing_zero_clears_violations_and_dr_smps_are_checked() -> Result<()> {
    let mut r = setup(64, 2, 0)?;
    let dr = mad::dr_request(METHOD_GET, ATTR_PORT_INFO, 0, 0, &[1]);
    ensure!(
        ask(&mut r, AddressHandle::directed(), dr, BAD)?.is_none(),
        "bad DR Get answered at protect 2"
    );
    let resp = ask(&mut r, AddressHandle::directed(), dr, K)?.context("valid DR Get")?;
    let mut pi = pi_of(&resp);
    ensure!(
        pi.m_key_violations == 1,
        "M_KeyViolations {}",
        pi.m_key_violations
    );
    // a valid Set with M_KeyViolations 0 clears it (Linux qib)
    pi.m_key_violations = 0;
    pi.port_state = PORT_STATE_NO_CHANGE;
    let mut m = mad::dr_request(METHOD_SET, ATTR_PORT_INFO, 0, 0, &[1]);
    mad::data_mut(&mut m).copy_from_slice(&pi.encode());
    let resp = ask(&mut r, AddressHandle::directed(), m, K)?.context("valid Set")?;
    ensure!(
        pi_of(&resp).m_key_violations == 0,
        "Set response violations"
    );
    ensure!(
        r.read_reg(CA, reg::MKEY_VIOLS)? == 0,
        "register not cleared"
    );
    Ok(())
}

// ---------------------------------------------------------------------------
// The built-in SM with keys, on an RTL fabric (net.2sw2path4hca)
// ---------------------------------------------------------------------------

mod common;

use vl15::agents::node_sma::Net;
use vl15::agents::simrun::{bring_up_sms, dump_state, start_sm, SimOptions, SmSpec};
use vl15::agents::subnet_sm::{run_for, SmState, SubnetManager};
use vl15::model::regmap::{mpreg, swreg};

fn spec(node: &str, priority: u8) -> SmSpec {
    SmSpec {
        node: Some(node.into()),
        port: 1,
        priority,
        ..SmSpec::default()
    }
}

fn sm_opts(protect: u8, sm_key: u64) -> SimOptions {
    let mut o = SimOptions::default();
    o.sm.tx.m_key = K;
    o.sm.m_key_protect = protect;
    o.sm.sm_key = sm_key;
    o.sm.poll_interval = 200_000;
    o
}

fn logs(sms: &[SubnetManager]) -> String {
    sms.iter()
        .map(|s| format!("== {} {:?}\n{}", s.name, s.state, s.log.join("\n")))
        .collect::<Vec<_>>()
        .join("\n")
}

/// (M_Key, protect, violations) of every cabled CA port and every switch
/// port 0, read from the RTL registers: (device, port, state).
/// (device, port, (M_Key, protect, violations)).
type PortKeys = (String, u8, (u64, u32, u32));

fn fabric_keys(net: &mut Net) -> Result<Vec<PortKeys>> {
    let dump = dump_state(net)?;
    let mut out = Vec::new();
    for d in 0..net.devs.len() {
        let (sw, name) = (net.devs[d].is_switch, net.devs[d].name.clone());
        let node = dump
            .nodes
            .iter()
            .find(|n| n.id == name)
            .context("node in the dump")?;
        let ports: Vec<u8> = if sw {
            vec![0]
        } else {
            node.ports
                .iter()
                .filter(|p| p.neighbour.is_some())
                .map(|p| p.port)
                .collect()
        };
        for p in ports {
            let a = |r: u8| {
                if sw {
                    swreg::mkey(r)
                } else {
                    mpreg::port(p, r)
                }
            };
            let lo = net.read_reg(d, a(reg::MKEY_LO))?;
            let hi = net.read_reg(d, a(reg::MKEY_HI))?;
            let prot = net.read_reg(d, a(reg::MKEY_PROT))?;
            let viols = net.read_reg(d, a(reg::MKEY_VIOLS))?;
            out.push((
                name.clone(),
                p,
                (u64::from(hi) << 32 | u64::from(lo), prot, viols),
            ));
        }
    }
    Ok(out)
}

#[test]
fn the_sm_brings_the_fabric_up_with_its_key_on_every_port() -> Result<()> {
    let o = sm_opts(2, 0);
    let (mut net, sms, summary) =
        bring_up_sms(&common::topo("net.2sw2path4hca"), &o, &[spec("Hca1", 0)])?;
    ensure!(
        summary.active_ports == summary.linked_ports,
        "not all Active\n{}",
        logs(&sms)
    );
    for (dev, p, (key, prot, viols)) in fabric_keys(&mut net)? {
        ensure!(
            key == K && prot == 2,
            "{dev}[{p}]: M_Key {key:#x} protect {prot}"
        );
        // the SM used its key in every SMP after setting it
        ensure!(viols == 0, "{dev}[{p}]: {viols} violations\n{}", logs(&sms));
    }
    ensure!(
        sms[0].stats.mkey_traps == 0,
        "Trap 256 during bring-up\n{}",
        logs(&sms)
    );
    Ok(())
}

#[test]
fn a_second_sm_with_the_wrong_key_changes_nothing() -> Result<()> {
    let o = sm_opts(2, 0);
    let path = common::topo("net.2sw2path4hca");
    let (mut net, mut sms, _) = bring_up_sms(&path, &o, &[spec("Hca1", 0)])?;
    let before = dump_state(&mut net)?;
    let keys_before = fabric_keys(&mut net)?;
    // a higher-priority SM on Hca2 that does not know the M_Key
    let mut rogue = spec("Hca2", 9);
    rogue.m_key = Some(BAD);
    let sm = start_sm(&mut net, &path, &o, &rogue, 1)?;
    sms.push(sm);
    run_for(&mut net, &mut sms, 3_000_000)?;
    let after = dump_state(&mut net)?;
    // nothing changed outside the rogue's own node: LIDs, MasterSMLID,
    // PortStates and the M_Keys in the RTL (the LFTs may change: the master
    // routes around Hca2 once the rogue has rekeyed its own port, which it
    // reaches locally, hop count 0)
    for (b, a) in before.nodes.iter().zip(&after.nodes) {
        if b.id == "Hca2" {
            continue;
        }
        for (pb, pa) in b.ports.iter().zip(&a.ports) {
            ensure!(
                (pb.lid, pb.master_sm_lid, pb.state) == (pa.lid, pa.master_sm_lid, pa.state),
                "{}[{}] changed: {pb:?} -> {pa:?}\n{}",
                b.id,
                pb.port,
                logs(&sms)
            );
        }
    }
    let keys_after = fabric_keys(&mut net)?;
    let mut viols = 0;
    for (b, a) in keys_before.iter().zip(&keys_after) {
        if b.0 == "Hca2" {
            continue;
        }
        ensure!(
            a.2 .0 == K && a.2 .1 == 2,
            "{}[{}]: M_Key state {:?}",
            a.0,
            a.1,
            a.2
        );
        viols += a.2 .2;
    }
    // the rogue's SMPs were dropped and counted, and reported to the master
    ensure!(viols > 0, "no violations counted\n{}", logs(&sms));
    ensure!(
        sms[0].stats.mkey_traps > 0,
        "the master got no Trap 256\n{}",
        logs(&sms)
    );
    ensure!(sms[0].state == SmState::Master, "{}", logs(&sms));
    // protect 2: the master does not answer the rogue's SMInfo Gets
    Ok(())
}

#[test]
fn sm_key_in_sminfo_as_ibspec_9_says() -> Result<()> {
    const S: u64 = 0x005E_C2E7;
    let path = common::topo("net.2sw2path4hca");
    // both SMs share the M_Key and the SM_Key: the Standby sees the
    // master's SM_Key in every poll answer
    let o = sm_opts(1, S);
    let (mut net, mut sms, _) = bring_up_sms(&path, &o, &[spec("Hca1", 0), spec("Hca2", 5)])?;
    ensure!(
        sms[1].state == SmState::Master && sms[0].state == SmState::Standby,
        "{}",
        logs(&sms)
    );
    run_for(&mut net, &mut sms, 1_000_000)?;
    let f = sms[0]
        .following
        .clone()
        .context("the Standby follows nobody")?;
    ensure!(
        f.info.sm_key == S,
        "SM_Key in the poll answer {:#x}",
        f.info.sm_key
    );
    ensure!(
        sms[0].stats.polls_answered > 0 && sms[0].stats.sm_key_ignored == 0,
        "{}",
        logs(&sms)
    );

    // an SM with another SM_Key ignores the master's SMInfo answers (it
    // joins after the bring-up: it never settles, finding no master)
    let o2 = sm_opts(1, S);
    let (mut net, mut sms, _) = bring_up_sms(&path, &o2, &[spec("Hca2", 5)])?;
    let mut other = spec("Hca1", 0);
    other.sm_key = Some(S + 1);
    sms.push(start_sm(&mut net, &path, &o2, &other, 1)?);
    run_for(&mut net, &mut sms, 1_000_000)?;
    ensure!(
        sms[1].stats.sm_key_ignored > 0,
        "wrong SM_Key not ignored\n{}",
        logs(&sms)
    );
    ensure!(
        sms[1].following.is_none(),
        "it follows a master whose SM_Key is not its own"
    );

    // protect 1, wrong M_Key: the master answers with SM_Key 0, which an SM
    // without an SM_Key of its own takes (its Gets pass at protect 1)
    let (mut net, mut sms, _) = bring_up_sms(&path, &o2, &[spec("Hca2", 5)])?;
    let mut nokey = spec("Hca1", 0);
    nokey.sm_key = Some(0);
    nokey.m_key = Some(BAD);
    sms.push(start_sm(&mut net, &path, &o2, &nokey, 1)?);
    run_for(&mut net, &mut sms, 1_000_000)?;
    let f = sms[1].following.clone().context("no master followed")?;
    ensure!(
        f.info.sm_key == 0,
        "protect 1, wrong M_Key: SM_Key {:#x}, want 0",
        f.info.sm_key
    );
    ensure!(
        sms[0].stats.sm_info_refused == 0,
        "protect 1: a Get refused"
    );
    Ok(())
}
