//! `agent-coord completions <shell>` and the hidden `agent-coord man`: the shell
//! completion script and the man page, both generated from the same clap definitions as
//! `--help`.

use clap::CommandFactory;

use super::Cli;
use crate::command_error::CommandError;
use crate::output::Report;

/// Print a shell completion script
///
/// Source it from your shell's start-up file, for example
/// `agent-coord completions bash > ~/.local/share/bash-completion/completions/agent-coord`.
#[derive(clap::Args, Debug)]
pub(crate) struct CompletionsArgs {
    /// The shell to complete for
    #[arg(value_enum)]
    shell: Shell,
}

/// The shells completions are generated for.
#[derive(clap::ValueEnum, Clone, Copy, Debug)]
enum Shell {
    Bash,
    Zsh,
    Fish,
}

/// Print the man page (roff), generated from the command definitions
#[derive(clap::Args, Debug)]
pub(crate) struct ManArgs {}

pub(crate) fn cmd_completions(args: &CompletionsArgs) -> Result<Report, CommandError> {
    let shell = match args.shell {
        Shell::Bash => clap_complete::Shell::Bash,
        Shell::Zsh => clap_complete::Shell::Zsh,
        Shell::Fish => clap_complete::Shell::Fish,
    };
    let mut script = Vec::new();
    clap_complete::generate(shell, &mut Cli::command(), "agent-coord", &mut script);
    text(script)
}

pub(crate) fn cmd_man(_: &ManArgs) -> Result<Report, CommandError> {
    let mut page = Vec::new();
    clap_mangen::Man::new(Cli::command())
        .render(&mut page)
        .map_err(|e| CommandError::operational(format!("cannot render the man page: {e}")))?;
    text(page)
}

fn text(bytes: Vec<u8>) -> Result<Report, CommandError> {
    String::from_utf8(bytes)
        .map(Report::text)
        .map_err(|e| CommandError::operational(format!("generated text is not UTF-8: {e}")))
}
