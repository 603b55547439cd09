//! The size parser (every `--size`, `--segment-size` and C/Python size
//! argument) on arbitrary text. A size it accepts must print exactly
//! (`{:#}`) as text that parses back to the same count, and be stable
//! under surrounding spaces. (The human form, `2.2 KiB`, rounds: it is for
//! reading, not for parsing back.)
#![no_main]

use fspace::Size;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    if let Ok(size) = text.parse::<Size>() {
        let exact = format!("{size:#}");
        assert_eq!(
            exact.parse::<Size>().ok(),
            Some(size),
            "{text:?} -> {exact}"
        );
        assert_eq!(
            format!(" {text} ").parse::<Size>().ok(),
            Some(size),
            "{text:?}"
        );
    }
});
