//! `fspace crashtest`: the command (`cmd`) and the recording preload it
//! runs programs with (`preload`, built from `record.c`).

mod cmd;
pub(crate) mod preload;

pub(crate) use cmd::run;
