//! `fspace crashtest`: record the file operations of a program under a
//! directory (the LD_PRELOAD recorder in `record.c`, format in its header).

// Not yet called: the `crashtest` subcommand is wired into clap separately.
#[allow(dead_code)]
pub(crate) mod preload;
