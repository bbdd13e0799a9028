//! `vl15 serve` under a hostile client (ibspec §10 is the protocol
//! abused): afterwards a well-behaved client
//! still attaches and a directed-route Get(NodeInfo) through the fabric at
//! hop 0 and hop 1 answers what the topology file says
//! (`vl15::check::hostile::check_well_behaved`).
//!
//! - A storm of malformed and hostile datagrams on the control and every
//!   data socket, with clients connecting, reusing ids, exceeding the ten
//!   slots and vanishing (`vl15::check::hostile::storm`), for a few seconds.
//! - A client that never reads the replies to its control messages.
//! - A client that never reads its data socket while its requests are
//!   answered.
//! - Ten clients that attach and vanish without DISCONNECT.
//! - A client's SM host detached while its request enters the RTL, and
//!   re-attached while a MAD for the old one leaves it (fabric level).
//!
//! Each runs in seconds; `vl15 fuzz --target serve --seconds N` (in `make
//! bench` / `make fuzz`) runs the storm for longer.

mod common;
use common::*;

use std::os::unix::net::UnixDatagram;
use std::time::{Duration, Instant};

use vl15::agents::ibsim::{abstract_addr, ctl, SimCtl, SimRequest, MAX_CLIENTS};
use vl15::agents::serve::{Background, ServeOptions};
use vl15::check::hostile::{check_well_behaved, storm, storm_file};
use vl15::proto::mad;
use vl15::proto::packet::consts::{ATTR_NODE_INFO, METHOD_GET, PERMISSIVE_LID, QP0};
use vl15::proto::topology::Topology;

const FILE: &str = "net.2sw2path4hca";

fn start() -> (Background, Topology) {
    let path = topo(FILE);
    let t = Topology::load(&path).unwrap();
    let s = Background::start(&path, ServeOptions::default()).unwrap_or_else(|e| panic!("{e:#}"));
    (s, t)
}

/// The well-behaved client's check, within `limit`.
fn still_correct(s: &Background, t: &Topology, limit: Duration) {
    let t0 = Instant::now();
    let r = check_well_behaved(&s.sockname, t, "Hca1");
    assert!(r.is_ok(), "after the abuse: {:#}", r.unwrap_err());
    assert!(
        t0.elapsed() < limit,
        "the well-behaved client took {:?}",
        t0.elapsed()
    );
}

fn bind(name: &str) -> UnixDatagram {
    UnixDatagram::bind_addr(&abstract_addr(name).unwrap()).unwrap()
}

/// A CONNECT of client `id` to `node` from `sock`; the slot or None.
fn connect(sock: &UnixDatagram, base: &str, id: u32, node: &str) -> Option<u32> {
    let mut info = [0u8; 44];
    info[0..4].copy_from_slice(&id.to_ne_bytes());
    info[12..12 + node.len()].copy_from_slice(node.as_bytes());
    let m = SimCtl::new(ctl::CONNECT, 0, &info).unwrap();
    sock.send_to_addr(&m.encode(), &abstract_addr(&format!("{base}:ctl")).unwrap())
        .unwrap();
    sock.set_read_timeout(Some(Duration::from_secs(2))).unwrap();
    let mut b = [0u8; 128];
    let n = sock.recv(&mut b).expect("a reply to CONNECT");
    let r = SimCtl::decode(&b[..n]).unwrap();
    (r.kind == ctl::CONNECT)
        .then(|| u32::from_ne_bytes([r.data[0], r.data[1], r.data[2], r.data[3]]))
}

#[test]
fn storm_leaves_the_server_up_and_correct() {
    let seconds = 3;
    let r = storm_file(&topo(FILE), 6, Duration::from_secs(seconds), u64::MAX)
        .unwrap_or_else(|e| panic!("{e:#}"));
    eprintln!("{}", r.summary());
    assert!(r.ok(), "{}", r.summary());
    // The storm reached every part of the server it aims at.
    assert!(r.counts.ctl > 100 && r.counts.data > 100, "{}", r.summary());
    assert!(
        r.counts.connected > 0 && r.counts.vanished > 0,
        "{}",
        r.summary()
    );
    assert!(
        r.stats.dropped > 0 && r.stats.refused > 0,
        "{}",
        r.summary()
    );
    assert!(
        r.stats.to_rtl > 0,
        "nothing reached the fabric: {}",
        r.summary()
    );
}

#[test]
fn storm_from_several_seeds() {
    let (s, t) = start();
    for seed in 1..=3 {
        let n = storm(&s.sockname, seed, Duration::from_millis(700), u64::MAX)
            .unwrap_or_else(|e| panic!("{e:#}"));
        assert!(n.ctl + n.data > 50, "seed {seed}: {n:?}");
        still_correct(&s, &t, Duration::from_secs(10));
    }
    s.stop().unwrap();
}

#[test]
fn a_client_that_never_reads_its_control_replies_does_not_stall_the_server() {
    let (s, t) = start();
    let deaf = bind(&format!("{}:ctl{}", s.sockname, 0xE000_0001u32));
    let server = abstract_addr(&format!("{}:ctl", s.sockname)).unwrap();
    // Far more than the kernel queues for one receiver (max_dgram_qlen 10).
    for _ in 0..100 {
        let m = SimCtl::new(ctl::GET_PORT, u32::MAX, &[]).unwrap();
        deaf.send_to_addr(&m.encode(), &server).unwrap();
    }
    still_correct(&s, &t, Duration::from_secs(5));
    drop(deaf);
    s.stop().unwrap();
}

#[test]
fn a_client_that_never_reads_its_data_socket_does_not_stall_the_server() {
    let (s, t) = start();
    let id = 0xE000_0002u32;
    let c = bind(&format!("{}:ctl{id}", s.sockname));
    let d = bind(&format!("{}:in{id}", s.sockname));
    let slot = connect(&c, &s.sockname, id, "Hca2").expect("attached");
    d.connect_addr(&abstract_addr(&format!("{}:out{slot}", s.sockname)).unwrap())
        .unwrap();
    // Hop-count-0 DR Get(NodeInfo): answered by the node's SMA at once.
    let req = SimRequest {
        dlid: PERMISSIVE_LID,
        slid: 0,
        dqp: QP0,
        sqp: QP0,
        status: 0,
        length: 256,
        mad: mad::dr_request(METHOD_GET, ATTR_NODE_INFO, 0, 7, &[]),
    };
    // More answers than the kernel buffers for one sender (212 KB of
    // socket memory, ~1 KB per datagram).
    for _ in 0..2000 {
        d.send(&req.encode()).unwrap();
    }
    still_correct(&s, &t, Duration::from_secs(5));
    drop((c, d));
    s.stop().unwrap();
}

#[test]
fn clients_that_vanish_without_disconnect_give_their_slots_back() {
    let (s, t) = start();
    let mut held = Vec::new();
    for k in 0..MAX_CLIENTS {
        let id = 0xE000_0100 + k;
        let c = bind(&format!("{}:ctl{id}", s.sockname));
        let d = bind(&format!("{}:in{id}", s.sockname));
        assert!(connect(&c, &s.sockname, id, "Hca3").is_some(), "client {k}");
        held.push((c, d));
    }
    // An eleventh is refused while the ten are there.
    let c = bind(&format!("{}:ctl{}", s.sockname, 0xE000_0200u32));
    let _d = bind(&format!("{}:in{}", s.sockname, 0xE000_0200u32));
    assert_eq!(connect(&c, &s.sockname, 0xE000_0200, "Hca3"), None);
    // All ten vanish (no DISCONNECT): their slots must not be lost.
    drop(held);
    still_correct(&s, &t, Duration::from_secs(5));
    s.stop().unwrap();
}

/// A client that vanishes while its request is entering the RTL: the
/// server detaches the node's SM host mid-packet. The request's remaining
/// beats still go out (the RTL's stream checker asserts that `tvalid` never
/// drops inside a packet; before the fix the simulation stopped there), and
/// a new SM on the node is answered afterwards.
/// Attach a fresh SM on device `d`, send `req` directed-route and step
/// until a MAD completes on its queue (at most 20 000 cycles).
fn attach_and_get(
    net: &mut vl15::agents::node_sma::Net,
    d: usize,
    req: &mad::Mad,
) -> Option<Box<mad::Mad>> {
    net.attach_host(d, 1, false).unwrap();
    net.post_send(d, &vl15::model::device::AddressHandle::directed(), req, 0)
        .unwrap();
    for _ in 0..20_000 {
        net.step().unwrap();
        let done = net.poll_cq(d, usize::MAX).unwrap();
        if let Some(m) = done.into_iter().find_map(|w| w.mad) {
            return Some(m);
        }
    }
    None
}

#[test]
fn detaching_mid_request_finishes_the_request_on_the_wire() {
    use vl15::agents::node_sma::Net;
    use vl15::model::device::AddressHandle;
    use vl15::model::net::NetOptions;
    let t = Topology::load(topo(FILE)).unwrap();
    let mut net = Net::new(t.clone(), NetOptions::default()).unwrap();
    let d = net.dev_index("Hca1").unwrap();
    let req = mad::dr_request(METHOD_GET, ATTR_NODE_INFO, 0, 0x55, &[1]);
    for cut in [1, 2, 3, 5, 8] {
        net.attach_host(d, 1, false).unwrap();
        net.post_send(d, &AddressHandle::directed(), &req, 0)
            .unwrap();
        for _ in 0..cut {
            net.step().unwrap();
        }
        net.detach_sm(d).unwrap();
        for _ in 0..3000 {
            net.step()
                .unwrap_or_else(|e| panic!("detached after {cut} cycles: {e:#}"));
        }
    }
    // A new SM on the node: its DR Get(NodeInfo) to the switch is answered.
    let sw = t.node("Switch1").unwrap();
    let m = attach_and_get(&mut net, d, &req).expect("the switch answered");
    let ni = vl15::proto::packet::NodeInfo::decode(mad::data(&m)).unwrap();
    assert_eq!((ni.node_guid, ni.num_ports), (sw.node_guid, sw.nports));
}

/// A client vanishes while a MAD for it is leaving the RTL on `sm_rx_*`,
/// and a new client attaches to the node at once (the storm found this:
/// the server stopped with "SM received 168 bytes, not a MAD"). The new SM
/// must not be handed the tail of the old one's MAD; its own request is
/// answered.
#[test]
fn attaching_while_a_mad_is_on_sm_rx_skips_its_tail() {
    use vl15::agents::node_sma::Net;
    use vl15::model::device::AddressHandle;
    use vl15::model::net::NetOptions;
    let t = Topology::load(topo(FILE)).unwrap();
    let mut net = Net::new(t.clone(), NetOptions::default()).unwrap();
    let d = net.dev_index("Hca1").unwrap();
    let req = mad::dr_request(METHOD_GET, ATTR_NODE_INFO, 0, 0x66, &[1]);
    for extra in [0, 1, 3, 7] {
        net.attach_host(d, 1, false).unwrap();
        net.post_send(d, &AddressHandle::directed(), &req, 0)
            .unwrap();
        let mut seen = false;
        for _ in 0..20_000 {
            net.step().unwrap();
            if net.devs[d].dout.sm_rx_tvalid {
                seen = true;
                break;
            }
        }
        assert!(seen, "the response reached sm_rx");
        for _ in 0..extra {
            net.step().unwrap();
        }
        net.detach_sm(d).unwrap();
        net.attach_host(d, 1, false).unwrap();
        for _ in 0..3000 {
            net.step()
                .unwrap_or_else(|e| panic!("re-attached {extra} cycles in: {e:#}"));
        }
        let stale: Vec<_> = net.poll_cq(d, usize::MAX).unwrap();
        assert!(
            stale.iter().all(|w| w.mad.is_none()),
            "the new SM got the old SM's MAD"
        );
        net.detach_sm(d).unwrap();
    }
    let got = attach_and_get(&mut net, d, &req);
    let ni = vl15::proto::packet::NodeInfo::decode(mad::data(&got.expect("answered"))).unwrap();
    assert_eq!(ni.node_guid, t.node("Switch1").unwrap().node_guid);
}
