//! `vl15 regress`.

use std::path::PathBuf;

use anyhow::Result;
use clap::Args as ClapArgs;
use vl15::check::scenario;
use vl15::model::device::CaPortModel;
use vl15::model::trace;
use vl15::proto::pcap::LinkType;

use super::{model_widths, Lt};

#[derive(ClapArgs)]
pub struct Args {
    /// Data path width in bits: 32, 64, 128, or all
    #[arg(long, default_value = "all")]
    width: String,
    /// Run only these scenarios (repeatable); see --list
    #[arg(long)]
    scenario: Vec<String>,
    /// List the scenarios and what each proves, then exit
    #[arg(long)]
    list: bool,
    /// Write each scenario's per-direction pcaps and text trace here
    #[arg(long)]
    trace_dir: Option<PathBuf>,
    /// Link type of the pcaps written with --trace-dir
    #[arg(long, value_enum, default_value = "infiniband")]
    linktype: Lt,
    /// Each CA port is port 1 of a one-port ib_ca_mp_top (DataW 64 and
    /// 128) instead of ib_ca_top: the same scenarios through the port-tag
    /// mux and demux
    #[arg(long)]
    ca_mp: bool,
    #[command(flatten)]
    pcap: super::CaptureArgs,
}

impl Args {
    pub fn run(self) -> Result<bool> {
        if self.list {
            for s in scenario::SCENARIOS {
                outln!("{:<18} {}", s.name, s.proves);
            }
            return Ok(true);
        }
        let model = if self.ca_mp {
            CaPortModel::Mp { nports: 1, port: 1 }
        } else {
            CaPortModel::Top
        };
        let ws = model_widths(&self.width, "ib_ca_mp_top", model)?;
        let mut log = self.pcap.trace_file()?;
        let mut waves = self.pcap.waves()?;
        let ok = regress(
            &ws,
            &self.scenario,
            self.trace_dir,
            self.linktype.into(),
            model,
            &mut log,
            waves.as_mut(),
        )?;
        super::pcap_done(log);
        super::waves_done(waves.as_ref());
        Ok(ok)
    }
}

fn regress(
    widths: &[u32],
    names: &[String],
    trace_dir: Option<PathBuf>,
    lt: LinkType,
    model: CaPortModel,
    log: &mut Option<vl15::proto::pcap::TraceFile>,
    waves: Option<&mut vl15::model::trace::Waves>,
) -> Result<bool> {
    let out = scenario::regress_logged(names, widths, model, log, waves)?;
    outln!(
        "{:<18} {:>5} {:<6} {:>8} {:>5} {:>8} {:>10} {:>10}  detail",
        "scenario",
        "width",
        "result",
        "cycles",
        "SMPs",
        "rx->SMA",
        "SMA->SQbuf",
        "SMA->wire"
    );
    let fmt = |v: Option<u64>| v.map_or("-".to_string(), |x| x.to_string());
    let mut ok = true;
    for o in &out {
        ok &= o.pass;
        outln!(
            "{:<18} {:>5} {:<6} {:>8} {:>5} {:>8} {:>10} {:>10}  {}",
            o.scenario,
            o.width,
            if o.pass { "PASS" } else { "FAIL" },
            o.cycles,
            o.smps,
            fmt(o.rx_latency),
            fmt(o.sq_latency),
            fmt(o.tx_latency),
            o.detail
        );
        if let Some(dir) = &trace_dir {
            let stem = format!("{}_w{}", o.scenario, o.width);
            trace::write_pcaps(&o.trace, dir, &stem, lt)?;
            let txt = dir.join(format!("{stem}.txt"));
            std::fs::write(&txt, trace::text(&o.trace)).map_err(|e| {
                vl15::proto::InputError(format!("{}: cannot write: {e}", txt.display()))
            })?;
        }
    }
    let passed = out.iter().filter(|o| o.pass).count();
    outln!("{passed} passed, {} failed", out.len() - passed);
    Ok(ok)
}
