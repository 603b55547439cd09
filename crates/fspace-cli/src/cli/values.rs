//! What a value on the command line may be: each option's parser, with
//! the message clap prints beside the option's name when it is refused.

use fspace::Strategy;

pub(super) fn record_arg(s: &str) -> Result<u64, String> {
    match size_arg(s)? {
        0 => Err("a record must be at least 1 byte".into()),
        n if n > u64::from(u32::MAX) => {
            Err(format!("{s:?} is larger than a record can be (4 GiB - 1)"))
        }
        n => Ok(n),
    }
}

/// `wal dump --from` and `--limit`: a whole number (a bare parse error says
/// only "invalid digit found in string"; clap's message names the option).
pub(super) fn whole_arg(s: &str) -> Result<u64, String> {
    let s = s.trim();
    s.parse().map_err(|_| {
        if !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit()) {
            "above 2^64-1".to_string()
        } else {
            "expected a whole number".to_string()
        }
    })
}

/// A writer count from 1 to [`fspace::bench::MAX_WRITERS`] (one item of a
/// comma list: an empty one is a doubled or trailing comma).
pub(crate) fn writers_arg(s: &str) -> Result<u32, String> {
    let max = fspace::bench::MAX_WRITERS;
    match s.trim().parse::<u32>() {
        _ if s.trim().is_empty() => Err(format!(
            "an empty writer count (a doubled or trailing comma?); give whole numbers from 1 to {max}, comma-separated: 1,2,4"
        )),
        Ok(n) if n >= 1 && n as usize <= max => Ok(n),
        Ok(n) => Err(format!("{n} writers: a writer count is from 1 to {max}")),
        Err(_) => Err(format!(
            "{s:?} is not a writer count: whole numbers from 1 to {max}, comma-separated: 1,2,4"
        )),
    }
}

pub(super) fn seconds_arg(s: &str) -> Result<f64, String> {
    match s.parse::<f64>() {
        Ok(v) if v > 0.0 && v <= 86_400.0 => Ok(v),
        _ => Err(format!(
            "{s:?} is not a number of seconds between 0 and 86400"
        )),
    }
}

/// A sync method, or `all` (every one).
pub(super) fn sync_method_arg(s: &str) -> Result<Vec<fspace::SyncMethod>, String> {
    if s == "all" {
        Ok(fspace::SyncMethod::ALL.to_vec())
    } else {
        s.parse()
            .map(|m| vec![m])
            .map_err(|e: fspace::ParseError| e.to_string())
    }
}

/// A mode, or `all` (None).
pub(super) fn mode_arg(s: &str) -> Result<Option<fspace::bench::SpaceState>, String> {
    if s == "all" {
        Ok(None)
    } else {
        s.parse()
            .map(Some)
            .map_err(|e: fspace::ParseError| e.to_string())
    }
}

pub(super) fn size_arg(s: &str) -> Result<u64, String> {
    let n: fspace::Size = s.parse().map_err(|e: fspace::SizeError| e.to_string())?;
    if n > fspace::Size::MAX_FILE {
        return Err(format!(
            "size {s:?} is larger than the largest file Linux allows ({} bytes, 8 EiB - 1)",
            fspace::Size::MAX_FILE.bytes()
        ));
    }
    Ok(n.bytes())
}

/// An untorn-write unit: a power of two from 512 bytes to 1 GiB (`16K`).
pub(super) fn unit_arg(s: &str) -> Result<u32, String> {
    let n: fspace::Size = s.parse().map_err(|e: fspace::SizeError| e.to_string())?;
    let n = n.bytes();
    if !(512..=1 << 30).contains(&n) || !n.is_power_of_two() {
        return Err(format!(
            "unit {s:?} must be a power of two from 512 bytes to 1 GiB (4K, 16K, 64K)"
        ));
    }
    Ok(n as u32)
}

/// `auto` or one strategy (a newtype: clap treats a bare `Option` as "may be absent").
#[derive(Clone, Copy)]
pub(crate) struct StrategyArg(pub Option<Strategy>);

pub(super) fn strategy_arg(s: &str) -> Result<StrategyArg, String> {
    if s == "auto" {
        Ok(StrategyArg(None))
    } else {
        s.parse()
            .map(|s| StrategyArg(Some(s)))
            .map_err(|e: fspace::ParseError| e.to_string())
    }
}

pub(super) fn engine_arg(s: &str) -> Result<fspace::probe::Engine, String> {
    s.parse().map_err(|e: fspace::ParseError| e.to_string())
}

/// `--threshold PCT`: a percentage above 0 and below 100 (`20` or `20%`).
pub(crate) fn threshold_arg(s: &str) -> Result<f64, String> {
    let pct: f64 = s
        .strip_suffix('%')
        .unwrap_or(s)
        .trim()
        .parse()
        .map_err(|_| format!("{s:?} is not a percentage (20 means 20%)"))?;
    if !(pct > 0.0 && pct < 100.0) {
        return Err(format!(
            "{s:?}: the threshold must be above 0 and below 100 (percent)"
        ));
    }
    Ok(pct)
}

/// A count of at least 1 (`crashtest check --states-per-point`, `--jobs`).
pub(super) fn count_arg(s: &str) -> Result<usize, String> {
    match s.trim().parse::<usize>() {
        Ok(n) if n >= 1 => Ok(n),
        Ok(_) => Err("must be at least 1".into()),
        Err(_) => Err(format!("{s:?} is not a whole number")),
    }
}

/// `crashtest check --between`: a whole number, 0 allowed.
pub(super) fn between_arg(s: &str) -> Result<usize, String> {
    s.trim()
        .parse::<usize>()
        .map_err(|_| format!("{s:?} is not a whole number"))
}

/// `crashtest check --model`.
pub(super) fn model_arg(s: &str) -> Result<fspace::crashtest::Model, String> {
    s.parse::<fspace::crashtest::Model>()
        .map_err(|e| e.to_string())
}
