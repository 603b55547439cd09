//! The saved policy's parser (`fspace probe --save` files, read by every
//! `grow` that follows the policy) on arbitrary text. A file it accepts
//! must save and read back as the same policy.
#![no_main]

use fspace::internals::parse_saved;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    if let Ok(policy) = parse_saved(text) {
        let Ok(again) = serde_json::to_string(&policy) else {
            panic!("a parsed policy does not serialise: {policy:?}");
        };
        match parse_saved(&again) {
            Ok(back) => assert_eq!(back, policy, "{again}"),
            Err(why) => panic!("a saved policy does not read back: {why}\n{again}"),
        }
    }
});
