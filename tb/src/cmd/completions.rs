//! `vl15 completions` and `vl15 man`: shell completions and the man page,
//! generated from the CLI's own clap definitions so they list exactly the
//! verbs and options the binary takes (`make completions man` writes them
//! under build/, `make install-extras` installs them).

use std::path::PathBuf;

use anyhow::{Context, Result};
use clap::Args as ClapArgs;

#[derive(ClapArgs)]
pub struct Args {
    /// The shell to complete for
    #[arg(value_enum)]
    shell: clap_complete::Shell,
}

impl Args {
    pub fn run(self, mut cmd: clap::Command) -> Result<bool> {
        let name = cmd.get_name().to_string();
        let mut buf = Vec::new();
        clap_complete::generate(self.shell, &mut cmd, name, &mut buf);
        out!(
            "{}",
            String::from_utf8(buf).context("completions are UTF-8")?
        );
        Ok(true)
    }
}

#[derive(ClapArgs)]
pub struct ManArgs {
    /// Write vl15.1 and one page per verb (vl15-sim.1, ...) into this
    /// directory instead of vl15.1 to stdout
    #[arg(long, value_name = "DIR")]
    out_dir: Option<PathBuf>,
}

impl ManArgs {
    pub fn run(self, cmd: clap::Command) -> Result<bool> {
        // `vl15 help VERB` is `vl15 VERB --help`: no page of its own.
        let mut cmd = cmd.disable_help_subcommand(true);
        cmd.build();
        if let Some(dir) = &self.out_dir {
            std::fs::create_dir_all(dir).with_context(|| format!("creating {}", dir.display()))?;
            // Every page's footer names vl15 and its version (a verb has none
            // of its own).
            let source = format!("vl15 {}", cmd.get_version().unwrap_or_default());
            let pages = cmd
                .get_subcommands()
                .filter(|s| !s.is_hide_set())
                .cloned()
                .chain([cmd.clone()]);
            for page in pages {
                clap_mangen::Man::new(page)
                    .source(source.clone())
                    .generate_to(dir)
                    .with_context(|| format!("writing a man page into {}", dir.display()))?;
            }
            return Ok(true);
        }
        let mut buf = Vec::new();
        clap_mangen::Man::new(cmd)
            .render(&mut buf)
            .context("rendering the man page")?;
        out!(
            "{}",
            String::from_utf8(buf).context("the man page is UTF-8")?
        );
        Ok(true)
    }
}
