//! Any bytes as an MCP tool call's `arguments`: decoding against every verb's input schema —
//! every row of the verb table, so a new verb cannot be forgotten — never panics, and what is
//! accepted is an object without `null` values.
#![no_main]

use libfuzzer_sys::fuzz_target;
use serde_json::Value;

use discern::verbs::TABLE;

fuzz_target!(|data: &[u8]| {
    let Ok(arguments) = serde_json::from_slice::<Value>(data) else {
        return;
    };
    for entry in TABLE {
        if entry.decodes(arguments.clone()) {
            let object = arguments.as_object().expect("accepted arguments are an object");
            assert!(
                object.values().all(|v| !v.is_null()),
                "{}: null accepted: {arguments}",
                entry.info().name
            );
        }
    }
});
