//! Several SMs on one RTL fabric (ibspec §9): election by
//! priority then lower GUID, Standby polling, a dead master replaced, a
//! higher SM that joins getting the HANDOVER, the SMInfo control codes.
//!
//! Expectations come from ibspec §9 (who must win, which control codes are
//! legal from which state) and from the RTL registers (MasterSMLID of every
//! port read back from the devices), not from the SMs' own notes.

mod common;
use common::*;

use vl15::agents::node_sma::Net;
use vl15::agents::simrun::{bring_up_sms, dump_state, start_sm, SimOptions, SmSpec, Summary};
use vl15::agents::subnet_sm::{control, run_for, run_until_settled, SmState, SubnetManager};
use vl15::proto::state::PortState;

const POLL: u64 = 200_000;

fn opts() -> SimOptions {
    let mut o = SimOptions::default();
    o.sm.poll_interval = POLL;
    o.sm.poll_retries = 4;
    o
}

fn spec(node: &str, priority: u8) -> SmSpec {
    SmSpec {
        node: Some(node.into()),
        port: 1,
        priority,
        ..SmSpec::default()
    }
}

/// net.2sw2path4hca brought up by SMs on Hca1 (priority 0) and Hca2 (5).
fn hca2_over_hca1(o: &SimOptions) -> (Net, Vec<SubnetManager>, Summary) {
    bring_up_sms(
        &topo("net.2sw2path4hca"),
        o,
        &[spec("Hca1", 0), spec("Hca2", 5)],
    )
    .unwrap_or_else(|e| panic!("{e:#}"))
}

fn port_guid(net: &Net, sm: &SubnetManager) -> u64 {
    net.devs[sm.dev].agent().identity().port_guid(sm.port)
}

fn logs(sms: &[SubnetManager]) -> String {
    sms.iter()
        .map(|s| format!("== {} {:?}\n{}", s.name, s.state, s.log.join("\n")))
        .collect::<Vec<_>>()
        .join("\n")
}

/// Every cabled port Active and every Active LID port (RTL registers)
/// names `master`'s LID as MasterSMLID.
fn check_master_everywhere(net: &mut Net, sms: &[SubnetManager], master: usize) {
    let lid = sms[master].lid();
    assert_ne!(lid, 0, "the master has a LID\n{}", logs(sms));
    let dump = dump_state(net).unwrap();
    for n in &dump.nodes {
        for p in &n.ports {
            if p.neighbour.is_some() {
                assert_eq!(
                    p.state,
                    PortState::Active,
                    "{}[{}] Active\n{}",
                    n.id,
                    p.port,
                    logs(sms)
                );
            }
            if p.state == PortState::Active {
                if let Some(sm_lid) = p.master_sm_lid {
                    assert_eq!(sm_lid, lid, "{}[{}] MasterSMLID", n.id, p.port);
                }
            }
        }
    }
    let masters = sms.iter().filter(|s| s.state == SmState::Master).count();
    assert_eq!(masters, 1, "exactly one Master\n{}", logs(sms));
    assert_eq!(sms[master].state, SmState::Master, "{}", logs(sms));
}

#[test]
fn the_higher_priority_sm_is_master_and_the_other_polls_it() {
    let o = opts();
    let (mut net, mut sms, summary) = hca2_over_hca1(&o);
    assert_eq!(summary.active_ports, summary.linked_ports);
    check_master_everywhere(&mut net, &sms, 1);
    assert_eq!(sms[0].state, SmState::Standby);
    let master_guid = port_guid(&net, &sms[1]);
    assert_eq!(
        sms[0].following.as_ref().map(|f| f.info.guid),
        Some(master_guid)
    );
    // The Standby wrote nothing.
    assert_eq!(sms[0].stats.lft_blocks_set, 0);
    // Polls every POLL cycles, each answered by a Master whose ActCount
    // grew (it sent at least the previous poll's answer since).
    let before = sms[0].stats;
    run_for(&mut net, &mut sms, 10 * POLL).unwrap();
    let polls = sms[0].stats.polls - before.polls;
    let answered = sms[0].stats.polls_answered - before.polls_answered;
    assert!((10..=11).contains(&polls), "{polls} polls in 10 intervals");
    assert_eq!(answered, polls, "every poll answered\n{}", logs(&sms));
    assert!(
        sms[0].stats.act_count_rises >= answered - 1,
        "ActCount rose {} times in {answered} answers",
        sms[0].stats.act_count_rises
    );
    assert_eq!(sms[0].state, SmState::Standby);
    assert_eq!(sms[1].state, SmState::Master);
}

#[test]
fn at_equal_priority_the_lower_guid_wins() {
    for order in [["Hca1", "Hca4"], ["Hca4", "Hca1"]] {
        let (mut net, sms, _) = bring_up_sms(
            &topo("net.2sw2path4hca"),
            &opts(),
            &[spec(order[0], 3), spec(order[1], 3)],
        )
        .unwrap_or_else(|e| panic!("{e:#}"));
        let g = [port_guid(&net, &sms[0]), port_guid(&net, &sms[1])];
        let want = if g[0] < g[1] { 0 } else { 1 };
        check_master_everywhere(&mut net, &sms, want);
        assert_eq!(sms[1 - want].state, SmState::Standby);
    }
}

#[test]
fn a_higher_sm_that_joins_gets_the_handover() {
    let o = opts();
    let path = topo("net.2sw2path4hca");
    let (mut net, mut sms, _) =
        bring_up_sms(&path, &o, &[spec("Hca1", 0)]).unwrap_or_else(|e| panic!("{e:#}"));
    let traps0 = sms[0].stats.traps;
    let sm = start_sm(&mut net, &path, &o, &spec("Hca3", 9), 1).unwrap();
    let hca3 = sm.dev;
    sms.push(sm);
    run_until_settled(&mut net, &mut sms, 50_000_000).unwrap();
    // Hca3's port gained IsSM: Trap 144 to the master, repressed.
    assert!(
        sms[0].log.iter().any(|l| l.contains("trap 144 from LID")),
        "{}",
        logs(&sms)
    );
    assert!(sms[0].stats.traps > traps0);
    let sent = net.devs[hca3].traps_sent;
    let interval = net.opts.trap_interval;
    run_for(&mut net, &mut sms, 3 * interval).unwrap();
    assert_eq!(net.devs[hca3].traps_sent, sent, "repressed: not sent again");
    assert_eq!(sms[0].stats.handovers_sent, 1, "{}", logs(&sms));
    assert_eq!(sms[1].stats.handovers_taken, 1);
    assert_eq!(sms[0].state, SmState::Standby);
    assert_eq!(
        sms[0].following.as_ref().map(|f| f.info.guid),
        Some(port_guid(&net, &sms[1]))
    );
    check_master_everywhere(&mut net, &sms, 1);
}

#[test]
fn a_dead_master_is_replaced_within_the_polling_bound() {
    let o = opts();
    let (mut net, mut sms, summary) = hca2_over_hca1(&o);
    assert_eq!(sms[1].state, SmState::Master);
    run_for(&mut net, &mut sms, 3 * POLL).unwrap();
    let killed = sms.remove(1);
    net.detach_sm(killed.dev).unwrap();
    let t_kill = net.cycle;
    run_until_settled(&mut net, &mut sms, 50_000_000).unwrap();
    while sms[0].state != SmState::Master && net.cycle - t_kill < 20 * POLL {
        run_for(&mut net, &mut sms, POLL / 10).unwrap();
    }
    run_until_settled(&mut net, &mut sms, 50_000_000).unwrap();
    let since = sms[0].stats.master_since.expect("Hca1 became Master");
    // ibspec §9 / OpenSM: declared dead after more than poll_retries
    // unanswered polls (the last answered one may have come just before
    // the kill: poll_retries + 2 intervals), then one discovery, which
    // takes less than the whole first bring-up did.
    let bound = (u64::from(o.sm.poll_retries) + 2) * POLL + summary.cycles;
    eprintln!(
        "takeover {} cycles after the kill (bound {bound})",
        since - t_kill
    );
    assert!(
        since > t_kill && since - t_kill <= bound,
        "Master {} cycles after the kill (bound {bound})\n{}",
        since - t_kill,
        logs(&sms)
    );
    // Not before poll_retries + 1 polls went unanswered (the first one at
    // most one interval after the kill).
    assert!(since - t_kill >= u64::from(o.sm.poll_retries) * POLL);
    assert!(sms[0].stats.polls - sms[0].stats.polls_answered > u64::from(o.sm.poll_retries));
    check_master_everywhere(&mut net, &sms, 0);
}

#[test]
fn disable_standby_and_discover_move_a_standby_as_the_spec_says() {
    let o = opts();
    let (mut net, mut sms, _) = hca2_over_hca1(&o);
    let standby_path = sms[1].peers[0].path.clone();
    assert_eq!(sms[1].peers[0].info.guid, port_guid(&net, &sms[0]));
    // DISABLE: Standby → NotActive, polling stops.
    sms[1].send_control(control::DISABLE, &standby_path);
    run_until_settled(&mut net, &mut sms, 10_000_000).unwrap();
    assert_eq!(sms[0].state, SmState::NotActive, "{}", logs(&sms));
    let polls = sms[0].stats.polls;
    run_for(&mut net, &mut sms, 5 * POLL).unwrap();
    assert_eq!(sms[0].stats.polls, polls, "a NotActive SM does not poll");
    // STANDBY: NotActive → Standby, polling resumes.
    sms[1].send_control(control::STANDBY, &standby_path);
    run_until_settled(&mut net, &mut sms, 10_000_000).unwrap();
    assert_eq!(sms[0].state, SmState::Standby);
    run_for(&mut net, &mut sms, 5 * POLL).unwrap();
    assert!(sms[0].stats.polls >= polls + 4, "polling again");
    // DISCOVER: → Discovering: a discovery that finds the Master, so back
    // to Standby, having written nothing.
    let heavy = sms[0].stats.heavy_sweeps;
    sms[1].send_control(control::DISCOVER, &standby_path);
    run_until_settled(&mut net, &mut sms, 10_000_000).unwrap();
    assert_eq!(sms[0].stats.heavy_sweeps, heavy + 1);
    assert_eq!(sms[0].state, SmState::Standby);
    assert_eq!(sms[0].stats.lft_blocks_set, 0);
    assert_eq!(sms[1].stats.errors, 0, "{}", logs(&sms));
    check_master_everywhere(&mut net, &sms, 1);
}

#[test]
fn a_control_code_from_the_wrong_state_is_refused_and_changes_nothing() {
    let (mut net, mut sms, _) = hca2_over_hca1(&opts());
    // The Standby (its SMInfo says Standby) tells the Master to HAND OVER
    // and to DISABLE: only a Master may send those (ibspec §9).
    let to_master = sms[0].following.clone().unwrap().path;
    for code in [control::HANDOVER, control::DISABLE, 9] {
        let errors = sms[0].stats.errors;
        sms[0].send_control(code, &to_master);
        run_until_settled(&mut net, &mut sms, 10_000_000).unwrap();
        assert_eq!(sms[0].stats.errors, errors + 1, "code {code}: refused");
        assert!(
            sms[0].log.last().unwrap().contains("status 0x001c"),
            "{}",
            logs(&sms)
        );
    }
    check_master_everywhere(&mut net, &sms, 1);
    assert_eq!(sms[0].state, SmState::Standby);
}
